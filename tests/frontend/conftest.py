"""Session fixtures: the corpus parsed once with libclang, and the probe programs built once
per compiler (gcc 12 and clang-19; DWARF 5 executables that run, DWARF 4 objects)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus_support import (
    COMPILERS,
    LANGS,
    Build,
    LibclangCorpus,
    corpus_of,
    parse_probe_output,
    probe_source,
)

from cachefit.frontend.clang_parse import parse_unit
from cachefit.frontend.clang_records import find_record, iter_records
from cachefit.model import Record


@pytest.fixture(scope="session")
def libclang_corpus() -> dict[str, LibclangCorpus]:
    """lang -> the libclang front end's records of the corpus (each file parsed once)."""
    found: dict[str, LibclangCorpus] = {}
    for lang in LANGS:
        path, args, names = corpus_of(lang)
        tu = parse_unit(str(path), args, keep_bodies=False)
        models = {name: find_record(tu, name, str(path), args) for name, _ in names}
        defined = {e.name for e in iter_records(tu) if not e.system}
        found[lang] = LibclangCorpus(models, defined)
    return found


@pytest.fixture(scope="session")
def libclang_models(libclang_corpus: dict[str, LibclangCorpus]) -> dict[str, dict[str, Record]]:
    """lang -> lookup name -> the libclang front end's record."""
    return {lang: c.models for lang, c in libclang_corpus.items()}


@pytest.fixture(scope="session")
def build_dir() -> Iterator[Path]:
    """A private directory (not under pytest's numbered tmp dirs, which a concurrent pytest
    run may prune while this session still compiles there)."""
    with tempfile.TemporaryDirectory(prefix="cachefit-frontend-") as d:
        yield Path(d)


@pytest.fixture(scope="session")
def builds(build_dir: Path,
           libclang_models: dict[str, dict[str, Record]]) -> dict[tuple[str, str], Build]:
    """(compiler, lang) -> the probe built and run; all compilers run concurrently."""
    for tools in COMPILERS.values():
        for tool in tools.values():
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} is not installed")
    work = build_dir
    jobs: list[tuple[list[str], subprocess.Popen[str]]] = []
    out: dict[tuple[str, str], tuple[Path, Path]] = {}
    for lang in LANGS:
        path, args, names = corpus_of(lang)
        recs = [(spelling, libclang_models[lang][name]) for name, spelling in names]
        src = work / ("probe.c" if lang == "c" else "probe.cpp")
        src.write_text(probe_source(path, recs, cxx=lang == "cxx"))
        for compiler, tools in COMPILERS.items():
            exe = work / f"{compiler}-{lang}-dwarf5"
            obj4 = work / f"{compiler}-{lang}-dwarf4.o"
            common = [tools[lang], *args, "-O0", "-w", "-g"]
            for cmd in ([*common, "-gdwarf-5", str(src), "-o", str(exe)],
                        [*common, "-gdwarf-4", "-c", str(src), "-o", str(obj4)]):
                jobs.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                   stderr=subprocess.PIPE, text=True)))
            out[(compiler, lang)] = (exe, obj4)
    for cmd, proc in jobs:
        _, err = proc.communicate()
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{err}"
    result: dict[tuple[str, str], Build] = {}
    for (compiler, lang), (exe, obj4) in out.items():
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
        count = len(corpus_of(lang)[2])
        result[(compiler, lang)] = Build(compiler, lang, exe, obj4,
                                         parse_probe_output(run.stdout, count))
    return result
