"""realize.fill_gap: the cold blocks that make a unit land on its target, against brute force.

The dynamic programme over bit masks must find a fill exactly when some subsequence of the
cold blocks (in their order) ends where the next unit, aligned up, lands in the target
window; its aligned-position masks are checked against a direct computation (they were
wrong whenever the gap's width was not a multiple of the alignment, so fills were missed
and units drifted out of their lines).
"""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace
from typing import Any

import pytest

from cachefit.layout.problem import align_up
from cachefit.layout.realize import _aligned_mask, fill_gap


def test_aligned_masks_mark_exactly_the_aligned_positions() -> None:
    for base, width, align in itertools.product(range(40), range(1, 70), (1, 2, 4, 8, 16, 64)):
        want = sum(1 << p for p in range(width) if (base + p) % align == 0)
        assert _aligned_mask(base, width, align) == want, (base, width, align)


def _ends(problem: Any, cursor: int, blocks: list[list[int]], chosen: tuple[int, ...]) -> int:
    for i in chosen:
        for u in blocks[i]:
            cursor = align_up(cursor, problem.units[u].align) + problem.units[u].size
    return cursor


@pytest.mark.parametrize("seed", range(300))
def test_a_fill_is_found_exactly_when_one_exists(seed: int) -> None:
    rng = random.Random(4400 + seed)
    kinds = [(1, 1), (2, 2), (4, 4), (8, 8), (16, 8), (3, 1), (12, 4), (24, 8)]
    units = [SimpleNamespace(size=s, align=a) for s, a in
             (rng.choice(kinds) for _ in range(rng.randint(1, 7)))]
    problem = SimpleNamespace(units=units)
    blocks = [[u] for u in range(len(units))]
    cursor = rng.randint(0, 70)
    align = rng.choice([1, 2, 4, 8])
    target = align_up(cursor + rng.randint(0, 48), align)
    lowest = rng.choice([None, target // 64 * 64])
    low = target if lowest is None else lowest

    def lands(chosen: tuple[int, ...]) -> bool:
        return low <= align_up(_ends(problem, cursor, blocks, chosen), align) <= target

    exists = any(lands(chosen) for k in range(len(blocks) + 1)
                 for chosen in itertools.combinations(range(len(blocks)), k))
    got = fill_gap(problem, cursor, target, align, blocks, lowest)  # type: ignore[arg-type]
    assert (got is not None) == exists, (cursor, target, align, lowest, units)
    if got is not None:
        assert got == sorted(got) and lands(tuple(got))
