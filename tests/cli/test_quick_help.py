"""Issue 29 (follow-up): `cachefit --version` and every `--help` are quick.

`cachefit --version` took about 0.6 s (0.86 s on a loaded machine) because it built the
parser of every command, and the command modules imported the modules doing their work,
OR-Tools and libclang's bindings among them. A command module now imports those when it
runs; `--version` builds no parser at all. Each case runs in a fresh interpreter and lists
the modules it imported.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("ortools", "clang", "rich", "msgspec", "zstandard", "cachefit.layout",
         "cachefit.reorder", "cachefit.flatten", "cachefit.frontend", "cachefit.trace",
         "cachefit.report", "cachefit.pipeline.pipeline", "cachefit.pipeline.unit_cache")
"""Modules (and their packages) that only running a command needs."""

SCRIPT = """
import json, sys
from cachefit.cli.main import main
try:
    code = main({argv!r})
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
sys.exit(code)
"""

ARGVS = [["--version"], ["--help"], ["-h"], *([c, "--help"] for c in (
    "show", "flatten", "trace", "profile", "reorder", "build", "report", "cache")),
    ["profile", "show", "--help"], ["cc", "--help"]]


def _imported(argv: list[str]) -> tuple[str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(argv=argv)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    out, _, modules = proc.stdout.rpartition("\nMODULES ")
    return out, json.loads(modules)


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_help_and_version_import_no_work_module(argv: list[str]) -> None:
    out, modules = _imported(argv)
    heavy = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert not heavy, heavy
    assert out.strip()


def test_version_builds_no_parser_and_says_what_argparse_says() -> None:
    from cachefit import __version__
    from cachefit.cli.main import build_parser
    out, modules = _imported(["--version"])
    assert out == f"cachefit {__version__}\n"
    assert not [m for m in modules if m.endswith("_cmd")], modules
    version = next(a for a in build_parser()._actions if "--version" in a.option_strings)
    assert version.version == out.strip()        # type: ignore[attr-defined]


def test_the_command_list_is_whole() -> None:
    out, _ = _imported(["--help"])
    for command in ("show", "flatten", "trace", "profile", "cc", "c++", "reorder", "build",
                    "report", "cache"):
        assert f"\n    {command} " in out, out
