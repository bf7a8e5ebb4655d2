"""Time the phases of one profile-mode compile (issue 29: profile build of big units).

    .venv/bin/python bench/trace/unit_phases.py SOURCE [--config cachefit.toml]
        [--edited OUT.i] [--compile] [--cprofile OUT.prof] [-- COMPILER FLAGS...]

Runs the steps `cachefit cc` runs in profile mode for SOURCE, one at a time, and prints
the seconds of each: preprocessing (the real compiler, -E), libclang's parse, the target
search (find_targets), the AST walk that computes the edits, applying the edits, and with
`--compile` the sanitizer-coverage compile (the two steps of cachefit.trace.sancov_inline,
instrumented bitcode and then the bitcode with the inlined checks, or the one step it
falls back to) next to a plain `-c` of SOURCE. `--edited` writes the
edited preprocessed unit (to compare the output of two versions byte for byte);
`--cprofile` profiles the Python phases. The compiler flags default to `-O2 -g`.
"""

from __future__ import annotations

import argparse
import cProfile
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cachefit.model.project_config import load_config
from cachefit.trace.runtime_build import include_dir
from cachefit.trace.sancov_inline import plan
from cachefit.trace.unit_instrument import (
    UnitInstrumenter,
    _errors_in_user_code,
    _parse,
    libclang_flags,
)


@contextmanager
def _phase(name: str, times: dict[str, float]) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    times[name] = time.perf_counter() - t0
    print(f"{name:28s} {times[name]:8.2f} s", flush=True)


def _run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source")
    p.add_argument("--config", default="cachefit.toml")
    p.add_argument("--edited", help="write the edited preprocessed unit here")
    p.add_argument("--compile", action="store_true",
                   help="also time the plain and the two-step instrumented compiles")
    p.add_argument("--cprofile", help="cProfile the Python phases into this file")
    p.add_argument("rest", nargs="*", help="the compiler and its flags (after --)")
    a = p.parse_args(argv)
    config = load_config({"CACHEFIT_CONFIG": str(Path(a.config).resolve())})
    compiler = a.rest[:1] or [config.build.cc or "clang-19"]
    flags = a.rest[1:] or ["-O2", "-g"]
    lang = "c++" if Path(a.source).suffix in (".cc", ".cpp", ".cxx", ".C") else "c"
    times: dict[str, float] = {}
    profiler = cProfile.Profile() if a.cprofile else None
    with tempfile.TemporaryDirectory(prefix="cachefit-phases-") as tmp:
        pre = Path(tmp) / ("unit.ii" if lang == "c++" else "unit.i")
        with _phase("preprocess", times):
            _run([*compiler, *flags, "-DCACHEFIT_PROFILE=1", "-I", str(include_dir()), "-E",
                  "-x", lang, a.source, "-o", str(pre)])
        text = pre.read_bytes()

        def timed(name: str, fn: Callable[[], object]) -> object:
            with _phase(name, times):
                if profiler is not None:
                    profiler.enable()
                try:
                    return fn()
                finally:
                    if profiler is not None:
                        profiler.disable()

        tu = timed("libclang parse", lambda: _parse(str(pre), lang, libclang_flags(flags)))
        inst = UnitInstrumenter(text, tu, lang, config.trace, a.source,  # type: ignore[arg-type]
                                struct_copies=True, by_value_copies=True)
        timed("diagnostics", lambda: list(_errors_in_user_code(tu, inst.lines)))  # type: ignore[arg-type]
        timed("find_targets", inst.find_targets)
        timed("walk (edits)", lambda: inst._walk(inst.tu.cursor, 0))
        edited = timed("apply edits", inst.edited_text)
        assert isinstance(edited, bytes)
        r = inst.report
        print(f"edits {len(inst.edits)}: entries {r.entries}, allocation sites "
              f"{r.allocation_sites}, frees {r.frees}, memops {r.memops}, struct copies "
              f"{r.struct_copies}, warnings {len(r.warnings)}; largest instrumented function "
              f"{r.largest_function[0]} ({r.largest_function[1]} cursors)")
        if a.edited:
            Path(a.edited).write_bytes(edited)
        if profiler is not None:
            profiler.dump_stats(a.cprofile)
        if a.compile:
            unit = Path(tmp) / ("edited" + pre.suffix)
            unit.write_bytes(edited)
            x = "c++-cpp-output" if lang == "c++" else "cpp-output"
            bc = Path(tmp) / "unit.bc"
            with _phase("plain compile", times):
                _run([*compiler, *flags, "-c", a.source, "-o", str(Path(tmp) / "plain.o")])
            cov = ["-fsanitize-coverage=func,trace-loads,trace-stores",
                   "-Wno-parentheses-equality"]
            step = plan(compiler, flags, {}, None, r.largest_function)
            if step.bitcode is None:
                print(f"one step: {step.reason}")
                with _phase("sancov compile (one step)", times):
                    _run([*compiler, *flags, *cov, "-c", "-x", x, str(unit),
                          "-o", str(Path(tmp) / "prof.o")])
            else:
                with _phase("sancov compile to bitcode", times):
                    _run([*compiler, *flags, *cov, "-c", "-emit-llvm", "-x", x, str(unit),
                          "-o", str(bc)])
                with _phase("bitcode to object", times):
                    _run([*compiler, *flags, "-Wno-unused-command-line-argument", "-c", "-x",
                          "ir", str(bc), "-Xclang", "-mlink-bitcode-file", "-Xclang",
                          str(step.bitcode), "-o", str(Path(tmp) / "prof.o")])
    python = sum(v for k, v in times.items() if k in (
        "libclang parse", "diagnostics", "find_targets", "walk (edits)", "apply edits"))
    print(f"{'python side (parse..apply)':28s} {python:8.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
