"""Scan the whole code base for the record: each unit parsed once, in parallel, with
per-unit results cached.

`scan_code` answers, for every C/C++ unit (not assembly), what code_scan's `scan_unit`
finds, and merges the answers in unit order (`merge_results`), so the result is the same
for every `-j N` and for cached and fresh answers. A unit already parsed by the caller
(the one that defines the record, those searched before it) is scanned in this process
with that parse while the others are parsed and scanned by `jobs` worker processes
(cachefit.parallel; default: the number of CPUs); only when the workers run out of units
do they take the remaining ones searched before the definition (parsing again there costs
a tenth of what walking a unit does; the defining unit is always scanned here). Before
parsing, each unit's answer is looked up in the scan cache (reorder.scan_cache): a hit
needs no parse at all; a miss stores its answer with the files the parse read. The
lookups are made here, before any worker starts, so a run the cache answers starts none.

`find_definition` finds the first unit that defines a type, remembering in the same cache
which units do not (so an unchanged unit before it is not parsed again on the next run).
It keeps the first KEEP_PARSED of those it parsed for the scan: memory, not time, bounds
that (the others are parsed again by the workers).
This module neither decides what a use of the record means nor chooses an order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.errors import TypeNotFound, UserError
from cachefit.frontend.clang_parse import parse_unit
from cachefit.frontend.clang_records import not_found_in_any
from cachefit.frontend.record_cursor import find_record_cursor
from cachefit.model import Record
from cachefit.parallel import Pending, WorkerPool
from cachefit.reorder.asm_uses import ASM_SUFFIXES, asm_included_headers
from cachefit.reorder.code_scan import ScanQuery, ScanResult, merge_results, scan_unit
from cachefit.reorder.scan_cache import ScanCache, open_cache, unit_files

Unit = tuple[str, list[str]]
UnitKey = tuple[str, tuple[str, ...]]
_NOT_C = (".S", ".sx", ".s")
Accept = Callable[[Unit, ci.Cursor], bool]
"""Whether a unit's definition of the record (its cursor) is the one wanted (issue 27)."""
Keep = Callable[[Unit, ScanResult], bool]
"""Whether a unit's scan result is about the record (its unit defines no other record of
the name; issue 27)."""
KEEP_PARSED = 16
"""How many units parsed while searching for the definition are kept for the scan (the
others are parsed again by the workers)."""


@dataclass(frozen=True)
class ScanOptions:
    """How to scan: `jobs` worker processes (None: the number of CPUs; 1: this process
    only) and whether to use the scan cache (CACHEFIT_SCAN_CACHE=0 turns it off too)."""

    jobs: int | None = None
    cache: bool = True

    def open_cache(self) -> ScanCache | None:
        return open_cache(self.cache)


@dataclass
class _Answer:
    """One unit's scan: its result, the files its parse read, and whether it was parsed
    now (False: from the cache)."""

    result: ScanResult
    files: tuple[str, ...]
    parsed: bool


def _cached(query: ScanQuery, cache: ScanCache | None, unit: Unit) -> _Answer | None:
    if cache is None:
        return None
    hit = cache.load(cache.key("scan", unit[0], unit[1], query.describe()))
    return _Answer(hit.result, hit.files, False) if isinstance(hit, _Answer) else None


def _scan_one(query: ScanQuery, cache: ScanCache | None, unit: Unit,
              tu: ci.TranslationUnit | None = None, lookup: bool = True) -> _Answer:
    path, args = unit
    key = cache.key("scan", path, args, query.describe()) if cache is not None else ""
    hit = _cached(query, cache, unit) if lookup else None
    if hit is not None:
        return hit
    if tu is None:
        tu = parse_unit(path, args, detailed=True)
    answer = _Answer(scan_unit(tu, path, args, query), tuple(unit_files(tu)), True)
    if cache is not None:
        cache.store(key, answer.files, answer)
    return answer


def _worker(query: ScanQuery, cache: ScanCache | None, unit: Unit) -> _Answer:
    """`_scan_one` in a worker process for a unit the cache did not answer, with the
    worker's own cache object (file hashes are remembered across the units it scans in
    this run)."""
    return _scan_one(query, cache.for_this_process() if cache is not None else None, unit,
                     lookup=False)


def scan_code(units: Sequence[Unit], usr: str, record: Record, record_name: str, *,
              header_macro: str | None = None, offsets_header: str | None = None,
              parsed: Mapping[UnitKey, ci.TranslationUnit] | None = None,
              jobs: int | None = 1, cache: ScanCache | None = None,
              keep: Keep | None = None) -> ScanResult:
    """Scan `units` (path, parse arguments) for uses of the record with USR `usr`, with
    `jobs` processes (None: one per CPU) and `cache` (None: no cache).

    `parsed` holds units already parsed with the detailed processing record, by (path,
    arguments), the last of them (in unit order) the one that defines the record; they are
    scanned in this process while the workers scan the others, except that when the workers
    run out of units they take the rest but the last. `keep`: the units whose results are
    merged (default: all).
    """
    query = ScanQuery(usr, record, record_name, header_macro, offsets_header,
                      tuple(sorted(asm_included_headers(units))))
    work = [(path, list(args)) for path, args in units if not path.endswith(ASM_SUFFIXES)]
    have = dict(parsed or {})
    answers: dict[int, _Answer | Pending[_Answer]] = {}
    local = [i for i, (p, a) in enumerate(work) if (p, tuple(a)) in have]
    remote = []
    for i in range(len(work)):
        if (work[i][0], tuple(work[i][1])) in have:
            continue
        # looked up here first: a run the cache answers starts no worker at all
        hit = _cached(query, cache, work[i])
        if hit is None:
            remote.append(i)
        else:
            answers[i] = hit
    job = functools.partial(_worker, query, cache)
    # the last unit parsed here is the one that defines the record: always scanned here
    with WorkerPool(jobs, len(remote) + max(0, len(local) - 1)) as pool:
        for i in remote:
            answers[i] = pool.submit(job, work[i])
        for n, i in enumerate(local):
            if pool.parallel and n < len(local) - 1 and pool.idle():
                # the workers ran out of units: they take the rest of those parsed here
                # (parsed again there: a tenth of a unit's scan) rather than wait
                for j in local[n:-1]:
                    answers[j] = pool.submit(job, work[j])
                    del have[(work[j][0], tuple(work[j][1]))]
                i = local[-1]
            path, args = work[i]
            answers[i] = _scan_one(query, cache, (path, args), have.pop((path, tuple(args))))
            if i == local[-1]:
                break
        done = [a if isinstance(a, _Answer) else a.result()
                for _i, a in sorted(answers.items())]
    out = merge_results([a.result for unit, a in zip(work, done, strict=True)
                         if keep is None or keep(unit, a.result)])
    out.unit_files = {(p, tuple(a)): ans.files for (p, a), ans in zip(work, done, strict=True)}
    out.parsed = sum(1 for a in done if a.parsed)
    out.cached = len(done) - out.parsed
    return out


def find_definition(units: Sequence[Unit], type_name: str, cache: ScanCache | None = None,
                    keep: int = KEEP_PARSED, *, accept: Accept | None = None,
                    elsewhere: str = ""
                    ) -> tuple[Unit, ci.TranslationUnit, ci.Cursor,
                               dict[UnitKey, ci.TranslationUnit]]:
    """The first unit that defines `type_name`, parsed, with the definition's cursor, and
    the units parsed on the way (the first `keep` of them, to be scanned without parsing
    again; a parsed C++ unit can take a hundred megabytes). `cache` remembers the units
    that do not define it. With `accept`, a unit whose definition it rejects is passed
    over (`elsewhere`, such as `at src/dict.h:79`, says which definition was wanted)."""
    misses: list[TypeNotFound] = []
    rejected = 0
    parsed: dict[UnitKey, ci.TranslationUnit] = {}
    for path, args in units:
        if path.endswith(_NOT_C):
            continue
        key = cache.key("lacks", path, args, type_name) if cache is not None else ""
        if cache is not None:
            known = cache.load(key)
            if isinstance(known, TypeNotFound):
                misses.append(known)
                continue
        tu = parse_unit(path, args, detailed=True)
        try:
            cursor = find_record_cursor(tu, type_name, path, args)
        except TypeNotFound as exc:
            misses.append(exc)
            if len(parsed) < keep:
                parsed[(path, tuple(args))] = tu
            if cache is not None:
                cache.store(key, unit_files(tu), exc)
            continue
        if accept is not None and not accept((path, list(args)), cursor):
            rejected += 1       # another record of that name
            if len(parsed) < keep:
                parsed[(path, tuple(args))] = tu
            continue
        parsed[(path, tuple(args))] = tu
        return (path, list(args)), tu, cursor, parsed
    if rejected:
        raise UserError(f"no unit defines the {type_name} {elsewhere}".rstrip() +
                        f" ({rejected} unit{'s' if rejected != 1 else ''} define"
                        f"{'' if rejected != 1 else 's'} another {type_name})",
                        "check the definition's file and line")
    if misses:
        raise not_found_in_any(type_name, misses)
    raise UserError("no C or C++ unit to analyse", "name a source file")
