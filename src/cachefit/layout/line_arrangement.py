"""Arrange a line assignment of a cache-aligned record into target offsets.

The line models (`line_model`) assign each hot unit to cache lines and drop the order:
the lines of an object that starts on a line boundary are interchangeable (a footprint
costs the number of distinct lines it touches, whatever their positions), and within a
line only the bytes count. `LineModel.targets` keeps the model's line numbering, so a unit
spread over two lines that are not neighbours there (the class model's lines are in no
particular order) or split at a byte count its alignment does not allow lands elsewhere,
and the realised layout costs more than the model's solution (60 fields / 40 touched,
seed 31: 11 950 lines instead of 11 515).

`arrange_lines` orders the lines instead: every unit spread over several lines joins
them into a path (its first part at the end of one line, the rest at the start of the
next, lines it fills whole in between); the paths, and the lines no unit spans, follow
each other. Within a line, the tail of the unit coming from the previous line comes
first, then the line's whole units in the least room of three orders (by decreasing
alignment, no padding from an aligned start; by increasing; least padding first), then
the head of the unit going on to the next line, split at the largest multiple of its
alignment that fits. Each unit keeps the set of lines it was assigned (so every footprint
touches the same lines or fewer), and the caller realises the targets (`realize`, cold
fields filling what is left of each line) and measures the result.

It gives up (None) where the assignment cannot be arranged so: a fixed area or fixed
units, a line that two spread units both start or both end in, a cycle of spread units, a
unit over three or more lines whose middle lines hold anything else, units aligned to more
than a line, or contents that do not fit with their alignments.

The class model's solutions are per class (fields with the same footprints, as one fluid
item), shared out among the class's units by `LineModel._spread`, which may split a unit
that C cannot split (an 8-byte field over two lines) or leave three units spread into one
line (60 / 40 seeds 5 and 31). `respread` shares them out again: a small CP-SAT model puts
every unit in lines of its class (so no footprint touches another line), whole unless it
may straddle a boundary in C, within the lines' bytes, at most two spread units ending in
a line, a unit over three or more lines alone in the lines between its first and last
(60 / 40 seed 254), with as few spread units as it finds (one worker, a deterministic
budget).

This module neither evaluates costs nor fills gaps with cold units.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from cachefit.layout.cpsat_model import SOLVER_SEED, new_solver
from cachefit.layout.line_model import max_lines
from cachefit.layout.problem import LayoutProblem, align_up

Assignment = dict[int, list[tuple[int, int]]]
"""Hot unit -> [(line, bytes there)], as `LineSolution.lines`."""


def lines_interchangeable(problem: LayoutProblem) -> bool:
    """Objects start on a line boundary and nothing is fixed in any line: the lines of a
    layout may be reordered without changing any footprint's cost."""
    p = problem
    return p.starts == (0,) and not p.prefix_end and not any(
        u.fixed and u.size for u in p.units)


def arrange_lines(problem: LayoutProblem, assignment: Assignment) -> dict[int, int] | None:
    """Target offsets for the units of `assignment` with the lines reordered so that
    each unit lies in lines it was assigned (module doc), or None if it cannot be."""
    p = problem
    line = p.line
    if not lines_interchangeable(p):
        return None
    lines_of: dict[int, list[int]] = {}
    contents: dict[int, list[int]] = {}
    for u, parts in assignment.items():
        unit = p.units[u]
        if unit.size == 0:
            continue
        if unit.align > line or line % unit.align:
            return None
        ells = sorted({ell for ell, _ in parts})
        lines_of[u] = ells
        for ell in ells:
            contents.setdefault(ell, []).append(u)
    paths = _paths(p, assignment, lines_of, contents)
    if paths is None:
        return None
    targets: dict[int, int] = {}
    position = 0
    for path in paths:
        # either way along the path (the first parts of its spread units at the ends of
        # lines, or at their starts)
        if not _place_path(p, path, contents, lines_of, position, targets) and \
                not _place_path(p, _reversed(path), contents, lines_of, position, targets):
            return None
        position += len(path)
    return targets


def _pack(p: LayoutProblem, units: list[int], start: int) -> tuple[dict[int, int], int]:
    """Offsets (from the line's start) for `units` placed one after another from
    `start`, and where they end: the least end of three orders. By decreasing alignment
    (no padding from an aligned start); by increasing alignment; and greedily, each next
    the unit of largest alignment that needs no padding, else the one that needs least
    (after the part of a unit coming from the last line, small units first fill the gap
    to the next larger alignment)."""
    def place(order: list[int]) -> tuple[dict[int, int], int]:
        cursor, out = start, {}
        for u in order:
            at = align_up(cursor, p.units[u].align)
            out[u] = at
            cursor = at + p.units[u].size
        return out, cursor

    def key(u: int) -> tuple[int, int, int]:
        return (-p.units[u].align, -p.units[u].size, u)

    decreasing = sorted(units, key=key)
    increasing = sorted(units, key=lambda u: (p.units[u].align, -p.units[u].size, u))
    greedy, left, cursor = [], list(decreasing), start
    while left:
        u = min(left, key=lambda v: (align_up(cursor, p.units[v].align) - cursor, key(v)))
        left.remove(u)
        greedy.append(u)
        cursor = align_up(cursor, p.units[u].align) + p.units[u].size
    return min((place(order) for order in (decreasing, increasing, greedy)),
               key=lambda placed: placed[1])


def _reversed(path: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
    """The path the other way: each line then hands on the unit it received."""
    lines = [ell for ell, _ in reversed(path)]
    going = [u for _, u in reversed(path[:-1])] + [None]
    return list(zip(lines, going, strict=True))


def _paths(p: LayoutProblem, assignment: Assignment, lines_of: dict[int, list[int]],
           contents: dict[int, list[int]]) -> list[list[tuple[int, int | None]]] | None:
    """The lines in their new order, as paths of (line, unit going on to the next line
    or None); None if the spread units do not form paths."""
    line = p.line
    links: list[tuple[int, int, int]] = []
    for u, ells in sorted(lines_of.items()):
        if len(ells) == 1:
            continue
        nbytes = dict(assignment[u])
        inner = [ell for ell in ells if contents[ell] == [u] and nbytes.get(ell) == line]
        if len(ells) > 2 and len(inner) < len(ells) - 2:
            return None
        ends = [ell for ell in ells if ell not in inner[:len(ells) - 2]]
        chain = [ends[0], *inner[:len(ells) - 2], ends[-1]]
        links += [(a, b, u) for a, b in zip(chain, chain[1:], strict=False)]
    # orient each link: a line has at most one unit coming in and one going out
    degree: dict[int, int] = {}
    for a, b, _u in links:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    if any(d > 2 for d in degree.values()):
        return None
    adjacent: dict[int, list[tuple[int, int]]] = {}
    for a, b, u in links:
        adjacent.setdefault(a, []).append((b, u))
        adjacent.setdefault(b, []).append((a, u))
    seen: set[int] = set()
    paths: list[list[tuple[int, int | None]]] = []
    for start in sorted(contents):
        if start in seen or len(adjacent.get(start, [])) > 1:
            continue
        path: list[tuple[int, int | None]] = []
        here, came = start, None
        while True:
            seen.add(here)
            onward = [(b, u) for b, u in adjacent.get(here, []) if b != came]
            if not onward:
                path.append((here, None))
                break
            b, u = onward[0]
            path.append((here, u))
            here, came = b, here
        paths.append(path)
    if len(seen) != len(contents):
        return None                     # a cycle of spread units
    return paths


def _place_path(p: LayoutProblem, path: list[tuple[int, int | None]],
                contents: dict[int, list[int]], lines_of: dict[int, list[int]],
                position: int, targets: dict[int, int]) -> bool:
    """Targets for the units of one path starting at line `position` (into `targets`
    only if they all fit); False if they do not fit."""
    placed: dict[int, int] = {}
    if not _place(p, path, contents, lines_of, position, placed):
        return False
    targets.update(placed)
    return True


def _place(p: LayoutProblem, path: list[tuple[int, int | None]],
           contents: dict[int, list[int]], lines_of: dict[int, list[int]],
           position: int, targets: dict[int, int]) -> bool:
    line = p.line
    coming: int | None = None           # the unit coming in from the last line
    left = 0                            # its bytes still to place
    for k, (ell, going) in enumerate(path):
        base = (position + k) * line
        if coming is not None and left > line:
            # a line the spread unit fills whole
            left -= line
            if contents[ell] != [coming]:
                return False
            continue
        cursor = left if coming is not None else 0
        if coming is not None:
            left = 0
        whole = [u for u in contents[ell] if len(lines_of[u]) == 1]
        at, cursor = _pack(p, whole, cursor)
        targets.update((u, base + off) for u, off in at.items())
        if cursor > line:
            return False
        if going is None:
            coming = None
            continue
        unit = p.units[going]
        whole_lines = len(lines_of[going]) - 2        # lines it fills between its ends
        head = (line - cursor) // unit.align * unit.align
        head = min(head, unit.size - whole_lines * line - unit.align)
        if head < unit.align or unit.size - head - whole_lines * line > line:
            return False
        targets[going] = base + line - head
        coming, left = going, unit.size - head
    return True


def respread(problem: LayoutProblem, assignment: Assignment, class_of: dict[int, int],
             det: float) -> Assignment | None:
    """The units of `assignment` shared out again among the lines their class uses
    (`class_of`: unit -> class; module doc), or None if the model finds no way within
    `det` deterministic seconds."""
    p = problem
    line = p.line
    lines_of_class: dict[int, set[int]] = {}
    for u, parts in assignment.items():
        lines_of_class.setdefault(class_of.get(u, u), set()).update(ell for ell, _ in parts)
    m = cp_model.CpModel()
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    q: dict[tuple[int, int], cp_model.IntVar] = {}
    spread: dict[int, cp_model.IntVar] = {}
    ends: dict[int, list[cp_model.IntVar]] = {}
    for u in sorted(assignment):
        unit = p.units[u]
        if unit.size == 0:
            continue
        ells = sorted(lines_of_class[class_of.get(u, u)])
        kmax = max_lines(unit.size, unit.align, line)
        for ell in ells:
            x[(u, ell)] = m.new_bool_var(f"x{u}_{ell}")
            steps = m.new_int_var(0, min(unit.size, line) // unit.align, f"k{u}_{ell}")
            q[(u, ell)] = steps
            m.add(steps * unit.align <= unit.size * x[(u, ell)])
            m.add(steps >= 1).only_enforce_if(x[(u, ell)])
        m.add(sum(q[(u, ell)] * unit.align for ell in ells) == unit.size)
        m.add(sum(x[(u, ell)] for ell in ells) <= kmax)
        if kmax > 2:
            # over t lines, the t - 2 in between are the unit's alone, whole
            fulls = []
            for ell in ells:
                full = m.new_bool_var(f"f{u}_{ell}")
                m.add(q[(u, ell)] * unit.align == line).only_enforce_if(full)
                fulls.append(full)
            m.add(sum(fulls) >= sum(x[(u, ell)] for ell in ells) - 2)
        if kmax > 1:
            spread[u] = m.new_bool_var(f"s{u}")
            m.add(sum(x[(u, ell)] for ell in ells) <= 1 + (kmax - 1) * spread[u])
            for ell in ells:
                end = m.new_bool_var(f"e{u}_{ell}")
                m.add_bool_or([x[(u, ell)].Not(), spread[u].Not(), end])
                ends.setdefault(ell, []).append(end)
    for ell in sorted({ell for _, ell in x}):
        m.add(sum(q[(u, e)] * p.units[u].align for (u, e) in q if e == ell) <= line)
        if len(ends.get(ell, [])) > 2:
            m.add(sum(ends[ell]) <= 2)
    m.minimize(sum(spread.values()))
    solver = new_solver()
    prm = solver.parameters
    prm.num_workers = 1
    prm.random_seed = SOLVER_SEED
    prm.max_deterministic_time = max(det, 0.01)
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    out: Assignment = {}
    for (u, ell), var in x.items():
        if solver.value(var):
            out.setdefault(u, []).append((ell, int(solver.value(q[(u, ell)]))
                                          * p.units[u].align))
    return out
