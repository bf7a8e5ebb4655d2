"""The registry's shadow drops accesses between objects without changing the profile.

The runtime keeps one byte per 16-byte granule of the address space, the number of
registered objects meeting it (saturating at 255), and the per-access paths (the checks
inlined by clang, the out-of-line callbacks, a run of coalesced checks) return at once
for an access starting in a granule whose byte is 0. tests/trace/programs/shadow.c
touches bytes just before and after an object in granules it shares, an object forgotten
and registered again, a granule more than 255 objects met, a large array (the registry's
sorted table) before and after it is forgotten, and registers an array too large for the
shadow, which turns it off. The profile must hold exactly the expected sequences with the
shadow, without it (CACHEFIT_SHADOW=0) and when its reservation is refused (`ulimit -v`),
and the program prints the shadow's bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import build, compiler_params, run, seqs

R, W = "r", "w"
BASE = ((0, 8, 8, R), (0, 16, 1, W))
EXPECTED = {
    BASE: 4,                                   # A twice, E (granule at 255), H
    (*BASE, (0, 23, 1, R)): 1,                 # A: the object's last byte
    (*BASE, (0, 0, 1, R)): 2,                  # C, E: the object's first byte
    (*BASE, (1, 0, 1, R)): 2,                  # F, H: a second element
    (*BASE, (0, 8, 1, R)): 1,                  # H: inside the array the shadow cannot hold
}
SHADOW_ON = "A 1 1 0 0\nB 0 0\nC 1\nD 255 16\nE 255 0 1\nF 1\nG 0\nH -1\n"
SHADOW_OFF = "A -1 -1 -1 -1\nB -1 -1\nC -1\nD -1 -1\nE -1 -1 -1\nF -1\nG -1\nH -1\n"



@pytest.mark.parametrize("compiler", compiler_params("clang-19", "gcc"))
def test_shadow_keeps_the_profile_exact(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["shadow.c"], types=["obj"], entry=["touch"], compiler=compiler,
              flags=("-O2", "-g", "-fno-strict-aliasing"))
    for shadow, printed in (("1", SHADOW_ON), ("0", SHADOW_OFF)):
        b.env["CACHEFIT_SHADOW"] = shadow
        prof = b.trace(output=f"prof{shadow}.json")
        assert seqs(prof, "obj") == EXPECTED, shadow
        assert prof.invocations == 12
        assert b.run() == printed
    # Under an address-space limit the shadow's reservation is refused: the same profile.
    b.env.pop("CACHEFIT_SHADOW")
    limited = ["sh", "-c", f"ulimit -v 4000000 && exec {b.program}"]
    prof = b.trace(output="limited.json", command=limited)
    assert seqs(prof, "obj") == EXPECTED
    assert run(limited, tmp_path, b.env).stdout == SHADOW_OFF
