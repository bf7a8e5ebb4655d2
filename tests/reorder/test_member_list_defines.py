"""A `#define`/`#undef` inside the member list: no member moves across it.

libevent's `bufferevent_openssl` has `#define NUM_ERRORS 3` right before `uint32_t
errors[NUM_ERRORS];`. The directive is a boundary (a `same_side` constraint on the first
member after it): an order that moves a member across it is refused with the directive's
location, the optimizer keeps the sides, and the rewriter gathers the members of each side
on their side, so the rewritten record compiles and the program behaves the same.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from reorder_helpers import C_COMPILERS, CXX_COMPILERS, build_and_run, write

from cachefit.errors import UnsafeTransformation, UserError
from cachefit.reorder.analysis import analyse, units_for
from cachefit.rewrite.layout_check import reparse_record
from cachefit.rewrite.member_order import rewrite_members

REC = """\
#include <stdint.h>
struct ssl_bev {
\tvoid *underlying;
\tlong last_write;

#define NUM_ERRORS 3
\tuint32_t errors[NUM_ERRORS];
\tchar tag;
\tlong n_errors;
};
"""

MAIN = """\
#include <stdio.h>
#include <stddef.h>
#include "rec.h"
int main(void) {
    struct ssl_bev b = {.underlying = 0, .last_write = 7, .errors = {1, 2, 3}, .tag = 'x',
                        .n_errors = NUM_ERRORS};
    printf("%ld %u %u %u %c %ld %zu\\n", b.last_write, b.errors[0], b.errors[1],
           b.errors[NUM_ERRORS - 1], b.tag, b.n_errors, sizeof b);
    return 0;
}
"""

REASON = ("#define NUM_ERRORS in the member list: the members after it may use the macro, "
          "so no member moves across it")


def test_define_between_members_is_a_boundary(tmp_path: Path) -> None:
    write(tmp_path, {"rec.h": REC})
    a = analyse("ssl_bev", units_for([str(tmp_path / "rec.h")], None, ["-std=c11"]))
    assert not a.refusals
    after = ("errors", "tag", "n_errors")
    assert [(c.kind, c.fields, c.boundary, str(c.location), c.reason)
            for c in a.constraints] == [
        ("same_side", after, "underlying", f"{tmp_path / 'rec.h'}:6:1", REASON),
        ("same_side", after, "last_write", f"{tmp_path / 'rec.h'}:6:1", REASON)]


def test_define_before_all_members_or_after_all_is_no_boundary(tmp_path: Path) -> None:
    rec = ("struct s {\n#define N 2\n    int a[N];\n    long b;\n#undef N\n};\n")
    write(tmp_path, {"rec.h": rec})
    a = analyse("s", units_for([str(tmp_path / "rec.h")], None, ["-std=c11"]))
    assert not a.refusals and a.constraints == []


def test_order_across_the_define_is_refused(tmp_path: Path, cachefit) -> None:
    """The reproducer's order: one line naming the directive, nothing written (it used to
    fail cachefit's own compile check, blaming the original file)."""
    write(tmp_path, {"rec.h": REC})
    code, out, err = cachefit("reorder", "ssl_bev", tmp_path / "rec.h", "--order",
                              "errors,underlying,last_write,tag,n_errors", "-o",
                              tmp_path / "out.h", "--", "-std=c11")
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert err.startswith(f"cachefit: error: {tmp_path / 'rec.h'}:6:1: the given order "
                          "breaks an order constraint: errors, tag, n_errors stay on their "
                          f"side of field underlying ({REASON})")
    assert "does not compile" not in err
    assert not (tmp_path / "out.h").exists()


@pytest.mark.parametrize("flag", ["--json", None])
def test_order_on_each_side_is_applied(tmp_path: Path, cachefit, flag) -> None:
    write(tmp_path, {"rec.h": REC, "main.c": MAIN})
    before = build_and_run(tmp_path, "main.c", "gcc", "-std=c11")
    code, out, err = cachefit("reorder", "ssl_bev", tmp_path / "rec.h", tmp_path / "main.c",
                              "--order", "last_write,underlying,n_errors,errors,tag",
                              "--in-place", *([flag] if flag else []), "--", "-std=c11")
    assert code == 0, err
    if flag:
        assert json.loads(out)["constraints"] == [{
            "kind": "same_side", "fields": ["errors", "tag", "n_errors"], "reason": REASON,
            "location": f"{tmp_path / 'rec.h'}:6:1", "boundary": b}
            for b in ("underlying", "last_write")]
    else:
        assert "constraints (2):" in out
        assert (f"{tmp_path / 'rec.h'}:6:1: errors, tag, n_errors stay on their side of "
                f"field last_write ({REASON})") in out
    text = (tmp_path / "rec.h").read_text()
    assert text.index("last_write;") < text.index("underlying;") < \
        text.index("#define NUM_ERRORS 3") < text.index("n_errors;") < \
        text.index("errors[NUM_ERRORS];") < text.index("tag;")
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before


def test_optimizer_keeps_the_sides(tmp_path: Path, cachefit) -> None:
    """A profile that wants `errors` next to `underlying` (the libevent case with
    `--profile`): the optimizer's order keeps every member on its side."""
    profile = {
        "format": "cachefit-profile", "version": 1, "cache_line": 16, "invocations": 100,
        "types": {"ssl_bev": {
            "size": 40,
            "fields": [{"name": "underlying", "offset": 0, "size": 8},
                       {"name": "last_write", "offset": 8, "size": 8},
                       {"name": "errors", "offset": 16, "size": 12},
                       {"name": "tag", "offset": 28, "size": 1},
                       {"name": "n_errors", "offset": 32, "size": 8}],
            "sequences": [{"count": 100, "accesses": [[0, 0, 8, "r"], [0, 16, 4, "r"],
                                                      [0, 32, 8, "r"]]}],
            "dropped": {}}}}
    write(tmp_path, {"rec.h": REC, "main.c": MAIN, "p.json": json.dumps(profile)})
    before = build_and_run(tmp_path, "main.c", "gcc", "-std=c11")
    code, out, err = cachefit("reorder", "ssl_bev", tmp_path / "rec.h", tmp_path / "main.c",
                              "--profile", tmp_path / "p.json", "--json", "--in-place",
                              "--", "-std=c11")
    assert code == 0, err
    order = json.loads(out)["new_order"]
    assert set(order[:2]) == {"underlying", "last_write"}
    assert set(order[2:]) == {"errors", "tag", "n_errors"}
    text = (tmp_path / "rec.h").read_text()
    define = text.index("#define NUM_ERRORS 3")
    assert all(text.index(f" {n};") < define for n in ("*underlying", "last_write"))
    assert all(text.index(n) > define for n in ("errors[NUM_ERRORS];", " tag;", "n_errors;"))
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before


CLASS = """\
#include <cstdio>
class conn {
public:
    conn() : a(1), b(2), c{3, 3}, d(4), e(5), pad{} {}
    long sum() const { return a + b + c[0] + d + e; }
    char a;
private:
    long b;
#define WIDTH 2
    int c[WIDTH];
public:
    long d;
#undef WIDTH
#define WIDTH 4
    char e;
private:
    short pad[WIDTH];
};
int main() { conn x; std::printf("%ld %zu\\n", x.sum(), sizeof x); return 0; }
"""


def test_several_directives_and_access_levels(tmp_path: Path, cachefit) -> None:
    """Three ranges, each reordered on its side; access levels survive the split."""
    write(tmp_path, {"m.cpp": CLASS})
    before = build_and_run(tmp_path, "m.cpp", "g++", "-std=c++17")
    a = analyse("conn", units_for([str(tmp_path / "m.cpp")], None, ["-std=c++17"]))
    assert [(c.kind, c.fields, c.boundary, c.location.line if c.location else 0)
            for c in a.constraints] == [
        ("same_side", ("c", "d", "e", "pad"), "a", 9),
        ("same_side", ("c", "d", "e", "pad"), "b", 9),
        ("same_side", ("a", "b", "c", "d"), "e", 13),
        ("same_side", ("a", "b", "c", "d"), "pad", 13)]
    assert a.constraints[2].reason.startswith("#undef WIDTH, #define WIDTH in the member")
    code, _out, err = cachefit("reorder", "conn", tmp_path / "m.cpp", "--order",
                               "b,a,d,c,pad,e", "--in-place", "--", "-std=c++17")
    assert code == 0, err
    text = (tmp_path / "m.cpp").read_text()
    body = text[text.index("class conn {"):text.index("int main()")]
    assert body.index("long b;") < body.index("char a;") < body.index("#define WIDTH 2") < \
        body.index("long d;") < body.index("int c[WIDTH];") < body.index("#undef WIDTH") < \
        body.index("#define WIDTH 4") < body.index("short pad[WIDTH];") < \
        body.index("char e;")
    for cc in CXX_COMPILERS:
        assert build_and_run(tmp_path, "m.cpp", cc, "-std=c++17") == before
    # Access levels as before: a, d, e public; b private (the compiler checks both).
    write(tmp_path, {"use.cpp": text.replace(
        "int main() {", "int pub(conn &x) { return x.a + (int)x.d + x.e; }\nint main() {")})
    assert build_and_run(tmp_path, "use.cpp", "g++", "-std=c++17") == before
    write(tmp_path, {"bad.cpp": text.replace(
        "int main() {", "long priv(conn &x) { return x.b; }\nint main() {")})
    with pytest.raises(subprocess.CalledProcessError):
        build_and_run(tmp_path, "bad.cpp", "g++", "-std=c++17")


def test_rewriter_refuses_to_move_a_member_across_a_define(tmp_path: Path) -> None:
    """Direct callers of the rewriter (without the analysis' check) get a UserError."""
    write(tmp_path, {"rec.h": REC})
    a = analyse("ssl_bev", units_for([str(tmp_path / "rec.h")], None, ["-std=c11"]),
                scan=False)
    with pytest.raises(UserError) as exc:
        rewrite_members(a.body, ["errors", "underlying", "last_write", "tag", "n_errors"])
    assert f"across #define NUM_ERRORS at {tmp_path / 'rec.h'}:6:1" in str(exc.value)
    mr = rewrite_members(a.body, ["last_write", "underlying", "tag", "errors", "n_errors"])
    new = mr.apply(a.body.text).decode()
    assert new.index("underlying;") < new.index("#define") < new.index("tag;") < \
        new.index("errors[NUM_ERRORS];")


def test_rewrite_that_does_not_compile_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    """What the reproducer printed before: `rec.h does not compile ...; fix the code or
    pass the right flags` at a line of the rewritten text. The original compiled, so a
    rewrite that does not is cachefit's failure, reported as such on one line."""
    write(tmp_path, {"rec.h": REC})
    broken = REC.replace("\tuint32_t errors[NUM_ERRORS];\n", "").replace(
        "\tvoid *underlying;\n", "\tuint32_t errors[NUM_ERRORS];\n\tvoid *underlying;\n")
    path = str(tmp_path / "rec.h")
    with pytest.raises(UnsafeTransformation) as exc:
        reparse_record(path, ["-std=c11"], "ssl_bev", {path: broken.encode()})
    err = exc.value.render()
    assert err == (f"cachefit: error: {path}: the reordered ssl_bev does not compile: use of "
                   f"undeclared identifier 'NUM_ERRORS' (at {path}:3:18 of the reordered "
                   "text); nothing was written; this is a cachefit limitation: report it "
                   "with the input, or reorder by hand")
