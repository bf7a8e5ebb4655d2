"""`record_of` with a key by layout fingerprint, `rec@50fc03a7` (issue 27).

tests/trace/programs/samedef_*: one header, samedef_rec.h, defines `struct rec` at its
line 7 with a member inside `#ifdef REC_BIG`: samedef_lib.c defines REC_BIG (80 bytes:
a@0, pad@8, b@72), samedef_main.c does not (16 bytes: a@0, b@8). Both DWARF definitions
are at one place, so only the layout fingerprint (cachefit.model.record_fingerprint, the
SHA-1 of `size;member:offset;...`) tells them apart. Each program is linked with the
units in both orders, so that the definition found is never merely the first.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cachefit.errors import TypeNotFound
from cachefit.frontend.dwarf_definitions import die_fingerprint, record_of
from cachefit.frontend.dwarf_records import open_dwarf
from cachefit.model.record_fingerprint import fingerprint

PROGRAMS = Path(__file__).resolve().parents[1] / "trace" / "programs"
BIG = "50fc03a7"        # sha1("80;a:0;pad:8;b:72")[:8]
SMALL = "4922e3bb"      # sha1("16;a:0;b:8")[:8]
REORDERED = "aadb5427"  # sha1("80;a:0;b:8;pad:16")[:8]: the big layout reordered
UNITS = ("samedef_main.c", "samedef_lib.c")


def _prog(tmp: Path, compiler: str, units: tuple[str, ...]) -> str:
    out = tmp / "prog"
    subprocess.run([compiler, "-g", "-O0", "-o", str(out), *(str(PROGRAMS / u) for u in units)],
                   check=True, capture_output=True, text=True)
    return str(out)


@pytest.mark.parametrize("units", [UNITS, UNITS[::-1]], ids=["main-first", "lib-first"])
@pytest.mark.parametrize("compiler", [
    pytest.param(c, marks=pytest.mark.skipif(shutil.which(c) is None, reason=f"no {c}"))
    for c in ("clang-19", "gcc")])
def test_record_of_a_fingerprint_key(tmp_path: Path, compiler: str,
                                     units: tuple[str, ...]) -> None:
    prog = _prog(tmp_path, compiler, units)
    big = record_of(prog, f"rec@{BIG}")
    assert (big.size, [(f.name, f.offset) for f in big.fields]) == \
        (80, [("a", 0), ("pad", 8), ("b", 72)])
    small = record_of(prog, f"rec@{SMALL}")
    assert (small.size, [(f.name, f.offset) for f in small.fields]) == \
        (16, [("a", 0), ("b", 8)])
    # a key's fingerprint is read without regard to case, as the layout step reads it
    assert record_of(prog, f"rec@{BIG.upper()}").size == 80
    with open_dwarf(prog) as reader:
        assert sorted(die_fingerprint(reader, die) for die, _ in reader.definitions("rec")) \
            == sorted([BIG, SMALL])
    # a layout the binary does not define (as the optimized build's, after the reorder)
    with pytest.raises(TypeNotFound) as err:
        record_of(prog, f"rec@{REORDERED}")
    assert err.value.what == (f"{prog}: no definition of rec with the layout fingerprint "
                              f"{REORDERED} in its debug information")
    assert err.value.todo == "its records named rec have other layouts"


def test_fingerprints_by_hand() -> None:
    """The hex digits above are the fingerprints of the layouts they name."""
    assert fingerprint(80, [("a", 0), ("pad", 8), ("b", 72)]) == BIG
    assert fingerprint(16, [("a", 0), ("b", 8)]) == SMALL
    assert fingerprint(80, [("a", 0), ("b", 8), ("pad", 16)]) == REORDERED
