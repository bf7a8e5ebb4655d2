"""`cachefit cc --help`, `cachefit c++ --help` and the console scripts `cachefit-cc` /
`cachefit-c++ --help` print cachefit's help (modes, environment, where to read more), not
the real compiler's (issue 29)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cachefit.cli.main import main


def _check(text: str, name: str) -> None:
    assert text.startswith(f"usage: cachefit {name} COMPILER-ARGS...")
    for mode in ("plain", "profile", "optimize"):
        assert f"\n  {mode} " in text
    var = "CACHEFIT_CXX" if name == "c++" else "CACHEFIT_CC"
    for env in ("CACHEFIT_MODE", var, "CACHEFIT_CONFIG", "CACHEFIT_LAYOUTS",
                "CACHEFIT_CACHE_DIR"):
        assert f"\n  {env} " in text, env
    assert "docs/cachefit-toml.md" in text
    assert "Usage: " not in text and "--target-help" not in text     # not gcc's or clang's


@pytest.mark.parametrize("name", ["cc", "c++"])
@pytest.mark.parametrize("option", ["--help", "-h"])
def test_cc_help_is_cachefits(name: str, option: str, capsys: pytest.CaptureFixture[str]
                              ) -> None:
    assert main([name, option]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    _check(out, name)


@pytest.mark.parametrize("name", ["cc", "c++"])
def test_console_script_help(name: str, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / f"cachefit-{name}"
    if not script.exists():
        pytest.skip(f"{script} is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEFIT_")}
    proc = subprocess.run([str(script), "--help"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stderr == ""
    _check(proc.stdout, name)
