"""Class template instances as traced types (`[trace] types = ["mem::pool<int>"]`).

programs/pool.cc traces one instance of a class template in a namespace: its global
object (found in the debug information) and its heap object (registered at the
new-expression) are traced; another instance of the same template is not. A bare
template name is refused with a warning that says to name the instances.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_helpers import build, needs_clang, needs_gcc, seqs

W = "w"


@pytest.mark.parametrize("compiler", [
    pytest.param("clang++-19", marks=needs_clang),
    pytest.param("g++", marks=needs_gcc),
])
def test_one_instance_of_a_class_template(tmp_path: Path, compiler: str) -> None:
    b = build(tmp_path, ["pool.cc"], types=["mem::pool<int>"], entry=["op"], cxx=True,
              compiler=compiler, flags=("-O1", "-g"))
    prof = b.trace()
    assert b.run().strip() == "6"
    assert list(prof.types) == ["mem::pool<int>"]
    assert seqs(prof, "mem::pool<int>") == {((0, 8, 8, W), (0, 0, 4, W)): 3}
    t = prof.types["mem::pool<int>"]
    assert [(f.name, f.offset, f.size) for f in t.fields] == [("a", 0, 4), ("n", 8, 8),
                                                                ("b", 16, 4)]


@needs_clang
def test_bare_template_name_is_refused_with_a_warning(tmp_path: Path) -> None:
    b = build(tmp_path, ["pool.cc"], types=["mem::pool"], entry=["op"], cxx=True,
              compiler="clang++-19", flags=("-O1", "-g"))
    assert "mem::pool is a class template; name the instantiations" in b.compile_stderr
