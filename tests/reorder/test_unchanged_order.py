"""`--order` that gives the current order back (libuv 1.44.2's uv_timer_s with
`--order alphabetical`: its fields are one macro expansion and the timer's own members,
already in alphabetical order) exits 0 with an empty diff: one line on stderr says so."""

from __future__ import annotations

from pathlib import Path

from reorder_helpers import write

REC = """\
#define HEAD_FIELDS int type; void *data;
struct rec {
    HEAD_FIELDS
    int x;
    int y;
};
"""


def test_alphabetical_that_is_the_current_order_says_so(cachefit, tmp_path: Path) -> None:
    write(tmp_path, {"rec.h": REC})
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order", "alphabetical",
                              "--diff", "--", "-std=gnu11")
    assert code == 0 and out == "", out
    notes = [line for line in err.splitlines() if "unchanged" in line]
    assert notes == ["cachefit: the order of rec is unchanged: alphabetical order, with the "
                     "fields that must stay together (one macro expansion, anonymous struct "
                     "or declaration) sorted as one item, is the current order; nothing to "
                     "rewrite"], err


def test_a_given_current_order_says_so(cachefit, tmp_path: Path) -> None:
    write(tmp_path, {"rec.h": REC})
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order",
                              "type,data,x,y", "--diff", "--", "-std=gnu11")
    assert code == 0 and out == "", out
    assert ("cachefit: the order of rec is unchanged: the given order is the current order; "
            "nothing to rewrite") in err.splitlines(), err


def test_a_changed_order_has_no_note(cachefit, tmp_path: Path) -> None:
    write(tmp_path, {"rec.h": REC})
    code, out, err = cachefit("reorder", "rec", tmp_path / "rec.h", "--order",
                              "type,data,y,x", "--diff", "--", "-std=gnu11")
    assert code == 0 and out, err
    assert "unchanged" not in err, err
