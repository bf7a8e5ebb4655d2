"""The optimizer's proving step (`optimize_layout(prove=...)`, docs/layout.md).

Block search, the line filling (with the unit model in any order) and the tight class
model run only in the proving step, which is on by default; without it the core alone
runs (heuristics, CP-SAT line models, the exact model of small records), and the layout
is never better than with it on these records.
"""

from __future__ import annotations

from typing import Any

import pytest
from layout_synth import large_case, typed

from cachefit.layout import optimize_layout
from cachefit.layout import optimizer as opt

CASES = [  # (fields, hot, seed, object_align)
    pytest.param(40, 16, 1, None, id="unaligned"),
    pytest.param(60, 40, 5, 64, id="cache-aligned"),
]


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the proving step's calls."""
    calls: list[str] = []
    block_search, fill_orders, line_model = opt.block_search, opt.fill_orders, opt.LineModel

    def spy_block(*args: Any, **kw: Any) -> Any:
        calls.append("block search")
        return block_search(*args, **kw)

    def spy_fill(*args: Any, **kw: Any) -> Any:
        calls.append("line filling")
        return fill_orders(*args, **kw)

    def spy_model(*args: Any, **kw: Any) -> Any:
        if kw.get("tight"):
            calls.append("tight class model")
        elif len(args) == 1 and not kw:
            calls.append("unit model in any order")
        return line_model(*args, **kw)

    monkeypatch.setattr(opt, "block_search", spy_block)
    monkeypatch.setattr(opt, "fill_orders", spy_fill)
    monkeypatch.setattr(opt, "LineModel", spy_model)
    return calls


@pytest.mark.parametrize(("fields", "hot", "seed", "object_align"), CASES)
def test_without_the_proving_step_only_the_core_runs(
        monkeypatch: pytest.MonkeyPatch, fields: int, hot: int, seed: int,
        object_align: int | None) -> None:
    record, entry = large_case(fields, hot, seed)
    calls = _spied(monkeypatch)
    core = optimize_layout(record, typed(entry), object_align=object_align, time_limit=2.0,
                           prove=False)
    assert calls == []
    full = optimize_layout(record, typed(entry), object_align=object_align, time_limit=2.0)
    assert (full.lines_after, full.dirty_after) <= (core.lines_after, core.dirty_after)
    assert full.lines_lower_bound >= core.lines_lower_bound - 1e-9
    if object_align is None:
        assert "block search" in calls


def test_the_proving_step_proves_what_the_core_does_not() -> None:
    """40 fields, 16 hot, objects aligned to 8 bytes: block search proves the optimum
    (test_layout_block_search.py); the core alone leaves a gap."""
    record, entry = large_case(40, 16, 1)
    core = optimize_layout(record, typed(entry), time_limit=10.0, prove=False)
    full = optimize_layout(record, typed(entry), time_limit=10.0)
    assert full.optimal and not core.optimal
    assert full.lines_after <= core.lines_after
