"""`cachefit reorder` finds the project file as every stage does: in the working directory
or the nearest parent that has one (cachefit.model.project_config.find_config), so a
record listed in `[reorder] abi` is refused from a subdirectory of the project too."""

from __future__ import annotations

from pathlib import Path

import pytest
from reorder_helpers import snapshot, write

REC = """\
struct obj {
    char c;
    int a;
    long l;
};
"""


def test_abi_list_applies_from_a_subdirectory(tmp_path: Path, cachefit,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"cachefit.toml": '[reorder]\nabi = ["obj"]\n'})
    sub = tmp_path / "src" / "lib"
    sub.mkdir(parents=True)
    write(sub, {"rec.h": REC})
    monkeypatch.delenv("CACHEFIT_CONFIG", raising=False)
    monkeypatch.chdir(sub)
    before = snapshot([sub / "rec.h"])
    code, _, err = cachefit("reorder", "obj", "rec.h", "--order", "l,a,c", "--in-place")
    assert code == 2 and "listed as ABI" in err, err
    assert str(tmp_path / "cachefit.toml") in err
    assert snapshot([sub / "rec.h"]) == before
