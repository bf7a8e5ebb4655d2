"""`[layout] sharing_weight` (issue 30): read from cachefit.toml, checked by the schema,
and what the deciding stage does with it: the optimizer's padding carried into the
decision, its figures in `cachefit reorder --json`'s keys."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Handoff,
    Profile,
    TypeProfile,
    TypeSharing,
)
from cachefit.model.project_config import ReorderConfig, load_reorder_config
from cachefit.reorder.analysis import analyse, units_for
from cachefit.reorder.decide import DecideOptions, check_order, decide


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> ReorderConfig:
    (tmp_path / "cachefit.toml").write_text(text)
    monkeypatch.delenv("CACHEFIT_CONFIG", raising=False)
    return load_reorder_config(str(tmp_path))


def test_sharing_weight_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _config(tmp_path, monkeypatch, "[layout]\nsharing_weight = 2.5\n").sharing_weight \
        == 2.5
    assert _config(tmp_path, monkeypatch, "[layout]\nsharing_weight = 0\n").sharing_weight \
        == 0.0
    assert _config(tmp_path, monkeypatch, "[layout]\n").sharing_weight == 4.0
    assert ReorderConfig().sharing_weight == 4.0


@pytest.mark.parametrize(("value", "shown"), [("-1", "-1"), ("inf", "inf"), ("nan", "nan"),
                                              ("true", "True"), ('"2"', "'2'")])
def test_a_bad_sharing_weight_is_one_located_line(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  value: str, shown: str) -> None:
    with pytest.raises(UserError) as info:
        _config(tmp_path, monkeypatch, f"[layout]\nsharing_weight = {value}\n")
    assert info.value.what == f"[layout] sharing_weight must be a number >= 0, not {shown}"
    assert str(info.value.location) == f"{tmp_path / 'cachefit.toml'}:2:18"


REC = """struct stats {
    long c0;        /* thread 0's */
    long c1;        /* thread 1's */
    int cfg[8];     /* read by both */
    int lock;
};
"""


def _profile() -> Profile:
    """Thread 0 reads cfg and bumps c0, thread 1 the same with c1, each operation handing
    the line over (tests/layout/test_sharing_search.py has the figures)."""
    offsets = {"c0": (0, 8), "c1": (8, 8), "cfg": (16, 32), "lock": (48, 4)}

    def a(n: str, m: str = "r") -> Access:
        return Access(0, *offsets[n], m)  # type: ignore[arg-type]

    tp = TypeProfile(
        "stats", 56, [FieldSpan(n, o, s) for n, (o, s) in offsets.items()],
        [AccessSequence(1000, (a("cfg"), a("c0"), a("c0", "w")), "work0"),
         AccessSequence(1000, (a("cfg"), a("c1"), a("c1", "w")), "work1"),
         AccessSequence(10, (a("lock"), a("lock", "w")), "sync")],
        alignment={0: 2010},
        sharing=TypeSharing(8, 2, handoffs=[
            Handoff(1000, ((0, 8),), ((8, 40),)), Handoff(1000, ((8, 8),), ((0, 8), (16, 32))),
            Handoff(10, ((48, 4),), ((48, 4),))]))
    return Profile({"stats": tp}, invocations=2010)


def test_decide_carries_the_padding(tmp_path: Path) -> None:
    (tmp_path / "rec.h").write_text(REC)
    (tmp_path / "use.c").write_text('#include "rec.h"\nstruct stats s;\n')
    units = units_for([str(tmp_path / "rec.h"), str(tmp_path / "use.c")], None,
                      ["-std=gnu11"])
    a = analyse("stats", units)
    d = decide(a, DecideOptions(time_limit=1.0), _profile(), "p.json")
    assert d.order == ["lock", "c0", "cfg", "c1"]
    assert d.padding == {"cfg": 48, "c1": 32} and d.size == 136
    assert d.offsets == {"lock": 0, "c0": 8, "cfg": 64, "c1": 128}
    assert d.changes_text
    fig = d.figures_json()
    assert fig["padding"] == {"cfg": 48, "c1": 32}
    assert fig["transfers"]["before"] == 1.0
    assert fig["transfers"]["after"] == pytest.approx(10 / 2010)
    # sharing_weight = 0: today's layout, no padding, the figures still shown
    a = analyse("stats", units)
    a.config = replace(a.config, sharing_weight=0.0)
    d0 = decide(a, DecideOptions(time_limit=1.0), _profile(), "p.json")
    assert d0.order == ["c0", "c1", "cfg", "lock"] and d0.padding == {} and d0.size == 56
    assert "padding" not in d0.figures_json()
    assert d0.figures_json()["transfers"] == {"before": 1.0, "after": 1.0}
    # the build-time decision carries the plan's padding
    a = analyse("stats", units, build_time=True)
    built = check_order(a, ["lock", "c0", "cfg", "c1"], padding={"cfg": 48, "c1": 32})
    assert built.padding == {"cfg": 48, "c1": 32} and built.changes_text
