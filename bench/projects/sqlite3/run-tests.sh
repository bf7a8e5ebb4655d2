#!/usr/bin/env bash
# A subset of SQLite's own Tcl tests (test/*.test run by ./testfixture) that exercises the
# VDBE, its registers (Mem) and B-tree cursors: queries, DML, indexes, joins, functions,
# triggers, views, window functions, the C API, the pager and WAL. Run in the source tree
# after `make testfixture`; prints one line per file and the totals; exit 1 on any error.
# As root, the tests run as user nobody in a scratch directory: root may write read-only
# files, so delete-8.* and pager1-4.7/4.8 fail as root with a plain build too.
tests="select1 select2 select3 select4 select5 select6 select7 select8 select9 insert insert2
insert3 insert4 insert5 update delete delete2 where where2 where3 where4 where5 where6 where7
join join2 join3 join4 join5 index index2 index3 func func2 expr trans sort sort2 vacuum
btree01 btree02 collate1 types types2 view trigger1 trigger2 subquery window1 cast date
json101 capi2 capi3 bind blob misc1 misc5 autoinc alter analyze pager1 wal e_select"
top=$(sed -n 's/^TOP = //p' Makefile)
fixture=$PWD/testfixture
as=()
if [ "$(id -u)" = 0 ]; then
  scratch=$(mktemp -d) && chmod 777 "$scratch" && cd "$scratch"
  as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
errors=0; total=0; files=0; bad=""
for t in $tests; do
  out=$("${as[@]}" "$fixture" "$top/test/$t.test" 2>&1 | tail -40)
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ errors out of [0-9]+ tests' | tail -1)
  echo "$t: ${line:-no summary}"
  if [ -z "$line" ]; then bad="$bad $t"; errors=$((errors + 1)); continue; fi
  e=${line%% errors*}; n=${line#*out of }; n=${n%% tests*}
  errors=$((errors + e)); total=$((total + n)); files=$((files + 1))
  [ "$e" = 0 ] || bad="$bad $t"
done
echo "TOTAL: $files files, $errors errors out of $total tests${bad:+ (failed:$bad)}"
[ "$errors" = 0 ]
