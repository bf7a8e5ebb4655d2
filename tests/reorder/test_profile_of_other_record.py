"""Issue 29, case 10: a profile whose record of that name is another record (none of its
fields match) is refused, as `cachefit profile merge` refuses mismatched layouts."""

from __future__ import annotations

import json
from pathlib import Path

from reorder_helpers import snapshot, write

REC = "struct obj {\n    char a;\n    long b;\n    char c;\n    long d;\n};\n"


def _profile(fields: list[tuple[str, int, int]]) -> str:
    return json.dumps({
        "format": "cachefit-profile", "version": 1, "cache_line": 64, "invocations": 10,
        "types": {"obj": {"size": 32,
                          "fields": [{"name": n, "offset": o, "size": s} for n, o, s in fields],
                          "sequences": [{"count": 10, "accesses": [[0, 0, 1, "r"],
                                                                   [0, 16, 1, "w"]]}],
                          "dropped": {}}}})


def test_profile_of_another_record_is_refused(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": REC,
                     "p.json": _profile([("x", 0, 8), ("y", 8, 8), ("z", 16, 16)])})
    before = snapshot([tmp_path / "rec.h"])
    code, out, err = cachefit("reorder", "obj", tmp_path / "rec.h", "--profile",
                              tmp_path / "p.json", "--in-place", "--", "-std=gnu11")
    assert code == 2 and not out, err
    assert len(err.splitlines()) == 1 and err.startswith(f"cachefit: error: {tmp_path}/rec.h:1:")
    assert "traced a different record named obj: none of its 3 fields (x, y, z)" in err
    assert snapshot([tmp_path / "rec.h"]) == before


def test_profile_of_a_changed_record_is_used(tmp_path: Path, cachefit) -> None:
    """Some names in common: the record changed since the trace; that is fine."""
    write(tmp_path, {"rec.h": REC,
                     "p.json": _profile([("a", 0, 1), ("y", 8, 8), ("c", 16, 1)])})
    code, _out, err = cachefit("reorder", "obj", tmp_path / "rec.h", "--profile",
                               tmp_path / "p.json", "--", "-std=gnu11")
    assert code == 0, err
    assert "profile fields not in the record (ignored): y" in err
