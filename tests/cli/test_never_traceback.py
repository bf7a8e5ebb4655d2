"""Issue 29: bad input gives one line `cachefit: error: ...` and exit 2, never a traceback.

Each command runs as a user runs it (a subprocess of `python -m cachefit.cli.main`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from cli_errors import one_line_error

CACHEFIT = [sys.executable, "-m", "cachefit.cli.main"]


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEFIT_")}
    env["CACHEFIT_CACHE_DIR"] = str(tmp / ".cache")
    env.update(extra)
    return env


def run(args: Sequence[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CACHEFIT, *args], cwd=cwd, env=env_for(cwd, **extra),
                          capture_output=True, text=True, check=False, timeout=120)



# ---------------------------------------------------------------- 1. not UTF-8

@pytest.mark.parametrize("command", [["build"], ["cc", "--version"]])
def test_project_file_not_utf8(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "cachefit.toml").write_bytes(b'\xff\xfe[trace]\n')
    line = one_line_error(run(command, tmp_path))
    assert f"{tmp_path / 'cachefit.toml'}:1:1: not UTF-8" in line


def test_project_file_bad_byte_is_located(tmp_path: Path) -> None:
    (tmp_path / "cachefit.toml").write_bytes(b'[trace]\ntypes = ["a\xe9"]\n')
    line = one_line_error(run(["cc", "--version"], tmp_path))
    assert "cachefit.toml:2:12: not UTF-8 text (byte 0xe9)" in line


def test_project_file_with_bom_is_read(tmp_path: Path) -> None:
    (tmp_path / "cachefit.toml").write_bytes(
        b'\xef\xbb\xbf[build]\ncc = "true"\n[trace]\ntypes = ["a"]\n')
    proc = run(["cc", "--version"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_reorder_reads_project_file_as_the_others(tmp_path: Path) -> None:
    from cachefit.errors import UserError
    from cachefit.model.project_config import load_reorder_config
    (tmp_path / "cachefit.toml").write_bytes(b'\xef\xbb\xbf[reorder]\nabi = ["hdr"]\n')
    assert load_reorder_config(str(tmp_path)).abi == ("hdr",)
    (tmp_path / "cachefit.toml").write_bytes(b'[reorder]\nabi = ["\xff"]\n')
    with pytest.raises(UserError, match="not UTF-8") as info:
        load_reorder_config(str(tmp_path))
    assert info.value.location is not None and info.value.location.line == 2


# ---------------------------------------------------------------- 2. build -o DIR

PIPELINE_TOML = ('[trace]\ntypes = ["a"]\nentry = ["b"]\n'
                 '[build]\ncommand = "touch built"\nworkload = "true"\n')


@pytest.mark.parametrize("output", ["afile/out", "afile", "afile/deeper/out"])
def test_build_output_dir_not_writable(tmp_path: Path, output: str) -> None:
    """A DIR (or a parent) that is a regular file: mkdir fails even as root."""
    (tmp_path / "cachefit.toml").write_text(PIPELINE_TOML)
    (tmp_path / "afile").write_text("x")
    line = one_line_error(run(["build", "-o", output], tmp_path))
    assert f"{tmp_path / output}: cannot write the output directory" in line
    assert "-o DIR" in line
    assert not (tmp_path / "built").exists()      # checked before anything ran
    assert (tmp_path / "afile").read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_build_output_dir_read_only(tmp_path: Path) -> None:
    (tmp_path / "cachefit.toml").write_text(PIPELINE_TOML)
    (tmp_path / "ro").mkdir(mode=0o500)
    line = one_line_error(run(["build", "-o", "ro/out"], tmp_path))
    assert "cannot write the output directory: Permission denied" in line


# ---------------------------------------------------------------- 11. unknown names

@pytest.mark.parametrize("text, place, message", [
    (PIPELINE_TOML + "object_allign = 64\n", "7:1",
     "unknown key object_allign in [build]; did you mean object_align?"),
    (PIPELINE_TOML + "march_nativ = true\n", "7:1",
     "unknown key march_nativ in [build]; did you mean march_native?"),
    (PIPELINE_TOML + "[tracee]\nentry = []\n", "7:1",
     "unknown table [tracee]; did you mean [trace]?"),
    (PIPELINE_TOML + "[trace.qemuu]\nkernel = 'k'\n", "7:1",
     "unknown table [trace.qemuu]; did you mean [trace.qemu]?"),
    ('[trace]\ntypes = ["a"]\n  entri = ["b"]\n', "3:3",
     "unknown key entri in [trace]; did you mean entry?"),
    ('[reorder]\nabi = []\nstrategy = "roles"\n', "3:1",
     "unknown key strategy in [reorder]; the keys of [reorder] are abi"),
    ('types = ["a"]\n[trace]\n', "1:1",
     "unknown key types outside the tables; the tables are [build], [layout], [reorder], "
     "[trace]"),
])
@pytest.mark.parametrize("command", [["build"], ["cc", "--version"]])
def test_unknown_tables_and_keys(tmp_path: Path, command: list[str], text: str, place: str,
                                 message: str) -> None:
    (tmp_path / "cachefit.toml").write_text(text)
    line = one_line_error(run(command, tmp_path))
    assert f"{tmp_path / 'cachefit.toml'}:{place}: {message}" in line


QEMU_TOML = '[trace]\ntypes = ["tcb_t"]\nentry = "op"\n\n[trace.qemu]\nkernel = "k"\n'


@pytest.mark.parametrize("text, place, message", [
    (QEMU_TOML + "phase_strat = 'ping'\n", "7:1",
     "unknown key phase_strat in [trace.qemu]; did you mean phase_start or"),
    (QEMU_TOML + "timout = 5\n", "7:1",
     "unknown key timout in [trace.qemu]; did you mean timeout?"),
    (QEMU_TOML + "\n[[trace.qemu.object]]\nsymbol = 's'\n  typ = 'tcb_t'\n", "10:3",
     "unknown key typ in [[trace.qemu.object]]; did you mean type?"),
    (QEMU_TOML + "\n[[trace.qemu.area]]\nbase = 1\nstrid = 8\ncount = 2\n", "10:1",
     "unknown key strid in [[trace.qemu.area]]; did you mean stride?"),
    (QEMU_TOML + 'input = [{ after = "x", sned = "1" }]\n', "7:25",
     "unknown key sned in input of [trace.qemu]; did you mean send?"),
    (QEMU_TOML + "[trace.qemu.objects]\nsymbol = 's'\n", "7:1",
     "unknown table [trace.qemu.objects]; did you mean [trace.qemu.object]?"),
    ('[trace]\ntypes = ["a"]\nqemu = 5\n', "3:1",
     "[trace] qemu must be a table ([trace.qemu])"),
    (QEMU_TOML + "object = 's'\n", "7:1",
     "[trace.qemu] object must be an array of tables ([[trace.qemu.object]])"),
])
@pytest.mark.parametrize("command", [["trace", "--qemu", "-o", "p.json", "--", "true"],
                                     ["cc", "--version"]])
def test_unknown_qemu_keys(tmp_path: Path, command: list[str], text: str, place: str,
                           message: str) -> None:
    """[trace.qemu] and its arrays of tables are checked by name like the other tables."""
    (tmp_path / "cachefit.toml").write_text(text)
    line = one_line_error(run(command, tmp_path))
    assert f"{tmp_path / 'cachefit.toml'}:{place}: {message}" in line


def test_known_qemu_keys_pass_the_check() -> None:
    """Every key docs/qemu-tracing.md shows is accepted."""
    from cachefit.model.project_toml import parse_toml
    doc = (Path(__file__).parents[2] / "docs" / "qemu-tracing.md").read_text()
    example = doc.split("## Configuration (`cachefit.toml`)")[1].split("```toml\n")[1]
    data = parse_toml(example.split("```")[0], Path("cachefit.toml"))
    assert {"kernel", "phase_start", "input", "object", "area"} <= set(data["trace"]["qemu"])


def test_reorder_rejects_unknown_names_too(tmp_path: Path) -> None:
    from cachefit.errors import UserError
    from cachefit.model.project_config import load_reorder_config
    (tmp_path / "cachefit.toml").write_text('[reorder]\nabii = ["hdr"]\n')
    with pytest.raises(UserError, match="unknown key abii in .reorder.") as info:
        load_reorder_config(str(tmp_path))
    assert "did you mean abi?" in info.value.todo


# ---------------------------------------------------------------- 13. smaller defects

def test_trace_of_a_missing_program_is_a_user_error(tmp_path: Path) -> None:
    line = one_line_error(run(["trace", "--", str(tmp_path / "nonexistent")], tmp_path))
    assert f"{tmp_path / 'nonexistent'}: command not found" in line


@pytest.mark.parametrize("output", ["afile/p.json", "missing/p.json", "."])
def test_trace_output_checked_before_the_workload_runs(tmp_path: Path, output: str) -> None:
    (tmp_path / "afile").write_text("x")
    line = one_line_error(run(["trace", "-o", output, "--", "sh", "-c", "touch ran"],
                              tmp_path))
    assert output in line
    assert not (tmp_path / "ran").exists()


def test_trace_keep_raw_that_cannot_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    line = one_line_error(run(["trace", "--keep-raw", "afile", "--", "sh", "-c", "touch ran"],
                              tmp_path))
    assert "afile: cannot write the output directory: it is not a directory" in line
    assert not (tmp_path / "ran").exists()


def _profile(version: int) -> str:
    return json.dumps({
        "format": "cachefit-profile", "version": version, "cache_line": 64, "invocations": 1,
        "types": {"obj": {"size": 8, "fields": [], "sequences": [
            {"count": 2, "accesses": [[0, 0, 4, "r"]]},
            {"count": 1, "accesses": [[0, 4, 4, "w"]]}]}}})


def test_profile_show_top_must_not_be_negative(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(_profile(1))
    line = one_line_error(run(["profile", "show", "p.json", "--top", "-1"], tmp_path))
    assert "--top -1 is negative" in line
    shown = run(["profile", "show", "p.json", "--top", "1"], tmp_path)
    assert shown.returncode == 0 and "1 more sequences" in shown.stdout


@pytest.mark.parametrize("args, option", [
    (["report", "p.json", "--top", "-1"], "--top -1"),
    (["trace", "--max-accesses", "-1", "-o", "t.json", "--", "/bin/true"], "--max-accesses -1"),
    (["trace", "--max-objects", "-1", "-o", "t.json", "--", "/bin/true"], "--max-objects -1"),
])
def test_negative_counts_are_refused(tmp_path: Path, args: list[str], option: str) -> None:
    """issue 29: like `profile show --top -1`, before any work and with nothing written"""
    (tmp_path / "p.json").write_text(_profile(1))
    line = one_line_error(run(args, tmp_path))
    assert f"{option} is negative" in line
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("version, todo", [(99, "upgrade cachefit"), (0, "retrace")])
def test_profile_of_another_format_version(tmp_path: Path, version: int, todo: str) -> None:
    (tmp_path / "p.json").write_text(_profile(version))
    line = one_line_error(run(["profile", "show", "p.json"], tmp_path))
    assert f"profile format version {version} is not supported" in line and todo in line


@pytest.mark.parametrize("args, kind", [
    (["show", "rec", "DIR"], "file"),
    (["show", "rec", "--binary", "DIR"], "file"),
    (["flatten", "rec", "DIR"], "file"),
    (["reorder", "rec", "DIR", "--order", "a"], "file"),
    (["build", "--config", "DIR"], "file"),
    (["profile", "show", "DIR"], "profile"),
    (["report", "DIR"], "profile"),
    (["reorder", "rec", "rec.h", "--profile", "DIR"], "profile"),
    (["trace", "--", "DIR"], "program"),
])
def test_directory_where_a_file_is_expected(tmp_path: Path, args: list[str], kind: str) -> None:
    (tmp_path / "DIR").mkdir()
    (tmp_path / "rec.h").write_text("struct rec { int a; char b; };\n")
    line = one_line_error(run(args, tmp_path))
    assert f"DIR: is a directory, not a {kind}" in line


def test_config_env_naming_a_directory(tmp_path: Path) -> None:
    (tmp_path / "DIR").mkdir()
    (tmp_path / "rec.h").write_text("struct rec { int a; char b; };\n")
    line = one_line_error(run(["reorder", "rec", "rec.h", "--order", "b,a"], tmp_path,
                              CACHEFIT_CONFIG=str(tmp_path / "DIR")))
    assert "CACHEFIT_CONFIG names" in line and "which is not a file" in line


@pytest.mark.parametrize("args, usage", [
    (["show", "x", "f.c", "--bogus"], "usage: cachefit show TYPE"),
    (["build", "--bogus"], "usage: cachefit build [--step STEP]"),
    (["trace", "--bogus", "--", "true"], "usage: cachefit trace "),
    (["profile", "merge", "-o", "m.json", "a.json", "--bogus"],
     "usage: cachefit profile merge "),
])
def test_an_unknown_option_names_its_command(tmp_path: Path, args: list[str],
                                             usage: str) -> None:
    """An option the command does not have is refused with that command's usage, not
    with `usage: cachefit [-h] [--version] COMMAND ...`."""
    proc = run(args, tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(usage), proc.stderr
    assert ": error: unrecognized arguments: --bogus" in proc.stderr
