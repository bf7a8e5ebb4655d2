"""The block search's engine: `native/cf_block_search.c`, built when cachefit is installed
(the `cachefit.layout._cf_block_search` extension of pyproject.toml) and called with ctypes.

`best_first` is the best-first (A*) search of block_search's granule relaxation, with a
proven bound at any budget; `threshold` asks threshold questions on the root; `LinesOracle`
keeps one lines oracle from the lines search to the dirty search (the lines search runs
over it, the dirty search goes on with its memo). Three options change the order of the
expansions, not the meaning of the outcome: partial expansion (fewer states kept), group
bounds (a stronger bound) and, in a dirty search, the lines oracle (children that cannot
reach the least lines dropped); `block_search` uses all three. docs/layout.md ("Exact
search for unaligned objects", "Native search") has the states, the bounds and why the
results are proven. Every search ends on its node budget or its states cap, both counts,
never on the clock.

This module marshals a `block_search._Search` and its answer; it neither builds the
search nor judges layouts, and it compiles nothing: a missing library is an installation
error (`NotBuilt`).
"""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cachefit.errors import CachefitError

if TYPE_CHECKING:
    from cachefit.layout.block_search import _Search

LIBRARY = "cachefit.layout._cf_block_search"
"""The extension module built from native/cf_block_search.c (a plain C library: no
Python API, so it is loaded with ctypes, never imported)."""

MAX_STATES = 3_000_000
"""States kept at most (about 90 bytes each with the queue: 1.1 GB); reaching it ends the
search like the node budget, with the bound of the state being expanded."""

_I32 = ctypes.POINTER(ctypes.c_int32)
_I64 = ctypes.POINTER(ctypes.c_int64)
_U8 = ctypes.POINTER(ctypes.c_uint8)


class _Input(ctypes.Structure):
    _fields_ = [("nt", ctypes.c_int32), ("nfp", ctypes.c_int32), ("g", ctypes.c_int32),
                ("k", ctypes.c_int32), ("size", _I32), ("align", _I32), ("counts0", _I32),
                ("fidx_start", _I32), ("fidx", _I32), ("weight", _I64), ("ages0", _U8),
                ("cmod0", ctypes.c_int32), ("mp", ctypes.c_int32), ("mq", ctypes.c_int32),
                ("g0", ctypes.c_int64), ("limit", ctypes.c_int64),
                ("floor_lines", ctypes.c_int64), ("floor_scale", ctypes.c_int64),
                ("max_nodes", ctypes.c_int64), ("max_states", ctypes.c_int64),
                ("partial", ctypes.c_int32),
                ("ngroups", ctypes.c_int32), ("gstart", _I32), ("gfp", _I32),
                ("group_cap", ctypes.c_int64), ("nlines", ctypes.c_int32),
                ("oracle", ctypes.c_int32), ("oracle_cap", ctypes.c_int64),
                ("nest", ctypes.c_int32), ("orc", ctypes.c_void_p),
                ("natural", ctypes.c_int32), ("lo", ctypes.c_int64)]


class _Output(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("path_len", ctypes.c_int32),
                ("cost", ctypes.c_int64), ("bound", ctypes.c_int64),
                ("expanded", ctypes.c_int64), ("queued", ctypes.c_int64), ("path", _I32)]


FOUND, NONE, NODES, STATES, NOMEM = 0, 1, 2, 3, -1
"""`cf_block_best_first`'s status codes."""


@dataclass(frozen=True)
class BestFirstOutcome:
    """`cost`, `path`: the relaxation's optimum and its moves (item type, start in the
    granule) when one is below the limit, else None. `bound`: every relaxed layout costs
    at least this (the limit when the search proved none is below it). `complete`: the
    search ended by itself (optimum found, or none below the limit), not on the budget."""

    cost: int | None
    path: tuple[tuple[int, int], ...] | None
    bound: int
    complete: bool
    expanded: int
    queued: int


class NotBuilt(CachefitError):
    """The native block search library is missing: cachefit was not installed with
    `pip install` (which builds it), or the build failed (exit code 1)."""

_lib: ctypes.CDLL | None = None


def _load() -> ctypes.CDLL:
    spec = importlib.util.find_spec(LIBRARY)
    if spec is None or spec.origin is None:
        raise NotBuilt(f"the block search library {LIBRARY} is not built",
                       "install cachefit with pip (make deps runs pip install -e .)")
    lib = ctypes.CDLL(spec.origin)
    lib.cf_block_best_first.argtypes = [ctypes.POINTER(_Input), ctypes.POINTER(_Output)]
    lib.cf_block_best_first.restype = ctypes.c_int
    lib.cf_block_threshold.argtypes = [ctypes.POINTER(_Input), ctypes.POINTER(_Output)]
    lib.cf_block_threshold.restype = ctypes.c_int
    lib.cf_oracle_open.argtypes = [ctypes.POINTER(_Input)]
    lib.cf_oracle_open.restype = ctypes.c_void_p
    lib.cf_oracle_close.argtypes = [ctypes.c_void_p]
    lib.cf_oracle_close.restype = None
    lib.cf_oracle_types.argtypes = [ctypes.c_void_p, _I32, _I32, _I32, _I32, ctypes.c_int32]
    lib.cf_oracle_types.restype = ctypes.c_int32
    lib.cf_oracle_lines.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Input),
                                    ctypes.POINTER(_Output)]
    lib.cf_oracle_lines.restype = ctypes.c_int
    return lib


def library() -> ctypes.CDLL:
    """The loaded library (loaded on first use); raises NotBuilt when it is missing."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def fits(search: _Search, limit: int) -> bool:
    """The search's numbers fit the C form: states in bytes (as `_Search.encodable`), at
    most 255 item types and 256 footprints, and every cost and bound below 2**62 (a bound
    is at most the footprints' weights times the granules the layout can span)."""
    granules = search.start // search.g + 2 + sum(
        c * (t.size // search.g + 2) for c, t in zip(search.counts0, search.types, strict=True))
    most = sum(search.weight) * (search.k + granules) + search.fixed_cost
    return (search.encodable() and len(search.types) < 256 and search.nfp <= 256
            and search.g & (search.g - 1) == 0
            and max(most, limit) < 2**62)


def best_first(search: _Search, limit: int, max_nodes: int,
               floor: tuple[int, int] | None = None, max_states: int = MAX_STATES,
               partial: bool = True, groups: int = 0, group_size: int = 4,
               group_cap: int = 200_000, oracle_cap: int = 0
               ) -> tuple[BestFirstOutcome, int]:
    """The best-first search below `limit`, with at most `max_nodes` expansions.
    Returns the outcome and the status (NODES, STATES or NOMEM when cut).

    `partial` False expands every child at once (the plain order). True (partial expansion): an
    expansion queues only the children whose bound equals the state's f and puts the
    state back at the smallest bound of the others; when it comes back it queues those,
    and so on. Every child is still queued before anything above its bound is expanded,
    so the outcome's meaning is the same (first complete layout optimal, the f taken last
    a lower bound), with far fewer states kept; an expansion counts as a node each time.

    `groups`: that many group bounds (docs/layout.md, "Group bounds"): the lines
    footprints by falling weight in chunks of `group_size`; each group's programme may
    expand `group_cap` states (counted as nodes) before the group is dropped; 0: none.
    With the oracle, the groups bound the oracle's search instead of this one's (this
    one's again when the oracle cannot be built).

    `oracle_cap` > 0 (a dirty search, `floor` given): children the lines oracle proves
    unable to reach the floor's lines are dropped; it may expand that many states
    (counted as nodes), then lets every child through (docs/layout.md, "Lines oracle")."""
    lib = library()
    inp, _keep = _input(search, limit, max_nodes, floor, max_states, partial, groups,
                        group_size, group_cap, oracle_cap)
    # out of memory ends the search like the budget: the f being expanded is a bound
    return _run(lib.cf_block_best_first, inp, search, lambda status, out: status == FOUND)


def threshold(search: _Search, limit: int, max_nodes: int,
              max_states: int = MAX_STATES, groups: int = 0, group_size: int = 3,
              group_cap: int = 0, floor: tuple[int, int] | None = None,
              oracle_cap: int = 0, nest: int = 0, oracle: LinesOracle | None = None
              ) -> tuple[BestFirstOutcome, int]:
    """The least cost below `limit` by threshold questions on the root (docs/layout.md,
    "Threshold lines search"), with at most `max_nodes` expansions (its groups' included;
    `group_cap` 0: a group may take them all). Returns the outcome and the status.

    Complete (FOUND or NONE) as `best_first`: the layout is optimal, or nothing is below
    the limit. Cut (NODES, STATES, NOMEM), the outcome may still hold the last
    layout found, below the limit but not proven, and `bound` is a proven lower bound.

    With `floor` and `oracle_cap` > 0 (a dirty search): the lines oracle, which may expand
    that many states, bounds the search and the groups bound the oracle ("The threshold
    dirty search"); `bound` then does not count the floor.

    `nest` >= 3: a group of at least that many footprints is bounded by a group of its
    heaviest half, and so on down (docs/layout.md, "Nested groups"); 0: no nesting.

    `oracle` (a dirty search, `search` the one it was opened for): the oracle of the lines
    search goes on with its memo instead of a new one."""
    lib = library()
    inp, _keep = _input(search, limit, max_nodes, floor, max_states, False, groups,
                        group_size, group_cap, oracle_cap, nest)
    if oracle is not None and oracle.handle is not None and floor is not None:
        assert oracle.search is search
        oracle.use_plan(inp, _keep, groups, group_size, nest)
        inp.orc = oracle.handle
    return _run(lib.cf_block_threshold, inp, search,
                lambda status, out: out.cost >= 0 and status != NOMEM)


class LinesOracle:
    """The lines oracle of a dirty search (`search`, with `lines` the lines search of the
    same problem), kept from the lines search to the dirty search (docs/layout.md, "One
    oracle for both phases"): `lines_search` runs the threshold lines search over the
    oracle's projection, whose states are the lines search's (the whole-granule pieces of
    a lines class are one block there too), and `threshold(..., oracle=)` goes on with its
    memo. `handle` is None when the oracle cannot be built. Call `close` when done."""

    def __init__(self, search: _Search, lines: _Search) -> None:
        lib = library()
        self.search = search
        self._keep: list[Any] = []
        self._plans: dict[tuple[int, int, int], tuple[int, ctypes.Array, ctypes.Array]] = {}
        inp, keep = _input(search, 0, 0, (0, search.scale), MAX_STATES, False, 0, 2, 0, 1, 0)
        self._keep += [inp, keep]
        self.handle: int | None = lib.cf_oracle_open(ctypes.byref(inp))
        self._to_lines: list[int] = []
        if self.handle is None:
            return
        size, align, count, rep = ((ctypes.c_int32 * 256)() for _ in range(4))
        n = lib.cf_oracle_types(self.handle, size, align, count, rep, 256)
        nl = len(search.p.lines_fp)
        index = {(t.size, t.align, t.mask): i for i, t in enumerate(lines.types)}
        for p in range(n):
            # a type at count 0 (part of a class) is never placed from the root
            mask = search.types[rep[p]].mask & ((1 << nl) - 1)
            ti = index.get((size[p], align[p], mask), -1)
            if count[p] and (ti < 0 or len(lines.types[ti].units) != count[p]):
                self.close()                # not the lines search's types: do not use it
                return
            self._to_lines.append(ti)

    def use_plan(self, inp: _Input, keep: list, groups: int, group_size: int,
                 nest: int) -> None:
        """Gives `inp` (made by `_input`, its arrays `keep`) the plan's group arrays, the
        same ones each time (the oracle keeps its groups, and their memos, while the arrays
        are the same)."""
        key = (groups, group_size, nest)
        if key not in self._plans:
            starts, fps = keep[-2], keep[-1]
            self._plans[key] = (inp.ngroups, (ctypes.c_int32 * max(1, len(starts)))(*starts),
                                (ctypes.c_int32 * max(1, len(fps)))(*fps))
        ngroups, gstart, gfp = self._plans[key]
        inp.ngroups = ngroups
        inp.gstart = ctypes.cast(gstart, _I32)
        inp.gfp = ctypes.cast(gfp, _I32)
        inp.nest = nest
        self._keep.append(inp)

    def lines_search(self, limit: int, max_nodes: int, groups: int, group_size: int,
                     nest: int, group_cap: int) -> tuple[BestFirstOutcome, int]:
        """The least lines below `limit` (the lines search's costs) by threshold questions
        over the oracle, with at most `max_nodes` of work and the given groups; the
        outcome's path is in the lines search's item types."""
        assert self.handle is not None
        inp, keep = _input(self.search, limit, max_nodes, (0, self.search.scale),
                           MAX_STATES, False, groups, group_size, group_cap, 1, nest)
        self._keep += [inp, keep]
        self.use_plan(inp, keep, groups, group_size, nest)
        path = (ctypes.c_int32 * max(1, sum(self.search.counts0)))()
        out = _Output(0, 0, 0, 0, 0, 0, ctypes.cast(path, _I32))
        status = library().cf_oracle_lines(self.handle, ctypes.byref(inp), ctypes.byref(out))
        has = out.cost >= 0 and status != NOMEM
        moves = tuple((self._to_lines[path[i] // 256], path[i] % 256)
                      for i in range(out.path_len))
        return (BestFirstOutcome(out.cost if has else None, moves if has else None, out.bound,
                                 status in (FOUND, NONE), out.expanded, out.queued), status)

    def close(self) -> None:
        if self.handle is not None:
            library().cf_oracle_close(self.handle)
        self.handle = None


def _run(fn: Any, inp: _Input, search: _Search,
         found: Callable[[int, _Output], bool]) -> tuple[BestFirstOutcome, int]:
    """Call a search entry point of the library; the outcome holds its layout when
    `found(status, output)`, and is complete when the status is FOUND or NONE."""
    path = (ctypes.c_int32 * max(1, sum(search.counts0)))()
    out = _Output(0, 0, 0, 0, 0, 0, ctypes.cast(path, _I32))
    status = fn(ctypes.byref(inp), ctypes.byref(out))
    has = found(status, out)
    moves = tuple(divmod(path[i], 256) for i in range(out.path_len))
    return (BestFirstOutcome(out.cost if has else None, moves if has else None, out.bound,
                             status in (FOUND, NONE), out.expanded, out.queued), status)


def _input(search: _Search, limit: int, max_nodes: int,
           floor: tuple[int, int] | None, max_states: int, partial: bool, groups: int,
           group_size: int, group_cap: int, oracle_cap: int, nest: int = 0
           ) -> tuple[_Input, list]:
    """The C input for `search`, and the arrays it points to (keep them alive)."""
    nt, nfp = len(search.types), search.nfp

    def arr(ctype: type, values: list[int]) -> ctypes.Array:
        return (ctype * max(1, len(values)))(*values)

    fidx_start = [0]
    fidx: list[int] = []
    for t in range(nt):
        fidx.extend(search.fidx[t])
        fidx_start.append(len(fidx))
    ages0 = [a if search.left0[i] else 0 for i, a in enumerate(search.ages0)]
    mp, mq = search.mirror if search.mirror is not None else (-1, -1)
    keep = [arr(ctypes.c_int32, [t.size for t in search.types]),
            arr(ctypes.c_int32, [t.align for t in search.types]),
            arr(ctypes.c_int32, list(search.counts0)), arr(ctypes.c_int32, fidx_start),
            arr(ctypes.c_int32, fidx), arr(ctypes.c_int64, list(search.weight)),
            arr(ctypes.c_uint8, ages0)]
    nl = len(search.p.lines_fp)
    order = sorted(range(nl), key=lambda i: (-search.weight[i], i))
    chunks = [order[i:i + group_size] for i in range(0, len(order), group_size)]
    chunks = [c for c in chunks if len(c) > 1][:groups]
    gstart = [0]
    gfp: list[int] = []
    for c in chunks:
        gfp.extend(c)
        gstart.append(len(gfp))
    inp = _Input(nt, nfp, search.g, search.k, *keep, search.start % search.g, mp, mq,
                 search.fixed_cost, limit, floor[0] if floor else 0, floor[1] if floor else 0,
                 max(0, max_nodes), max_states,
                 int(partial), len(chunks), arr(ctypes.c_int32, gstart),
                 arr(ctypes.c_int32, gfp), group_cap, nl, int(oracle_cap > 0), oracle_cap,
                 nest)
    inp.natural = int(search.natural)
    if floor is None or floor[0] == 0:      # a lines search (or the oracle's, in lines)
        inp.lo = search.known_lo
    elif search.known_dirty and floor[0] == search.known_lo:   # dirty, at those lines
        inp.lo = floor[0] * floor[1] + search.known_dirty
    return inp, [*keep, gstart, gfp]

