"""Classes nested in other classes, and bases named to reach their static members: what is
refused, with which error (the accepted cases are corpus cases: nested_base,
nested_class_base, nested_target, nested_inline_target, static_via_base)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachefit.cli.main import main
from cachefit.flatten import flatten_unit
from cachefit.flatten.problems import FlattenError, PreconditionFailed, Unsupported

_PRIVATE_OF_ENCLOSING = """\
struct Outer {
  class Base;
 private:
  static int Secret() { return 7; }
};
class Outer::Base {
 public:
  virtual ~Base() {}
  int get() const { return Secret(); }
};
class Derived : public Outer::Base {};
int main() { Derived d; return d.get(); }
"""

_HIDDEN_BY_ENCLOSING = """\
static int twice(int v) { return 2 * v; }
struct Base {
  virtual ~Base() {}
  int dbl() const { return twice(v_); }
  int v_ = 1;
};
struct Outer {
  struct In : Base {};
  static int twice(int v) { return 3 * v; }
  int go() { In i; return i.dbl(); }
};
int main() { Outer o; return o.go(); }
"""

_STATIC_HIDDEN = """\
struct Generator {
  static int Ops() { return 1; }
  virtual ~Generator() {}
};
struct Tester : Generator {
  static int Ops() { return 2; }
};
int main() {
  Tester t;
  return Generator::Ops() + t.Ops();
}
"""

_CASES = [
    # code of a nested base uses a private member of the class it is nested in
    ("private", _PRIVATE_OF_ENCLOSING, "Derived", Unsupported,
     "unsupported-enclosing-access", 9, "private member Outer::Secret"),
    # base code names ::twice; inside Outer::In, twice would be Outer::twice
    ("hidden", _HIDDEN_BY_ENCLOSING, "Outer::In", Unsupported,
     "unsupported-hidden-by-enclosing", 4, "would mean Outer::twice"),
    # Generator::Ops() outside: the flat Tester has only Tester::Ops
    ("static", _STATIC_HIDDEN, "Tester", PreconditionFailed, "base-named", 10,
     "Generator::Ops, which is hidden in the flat Tester"),
]


@pytest.mark.parametrize("name,source,cls,kind,code,line,text", _CASES,
                         ids=[c[0] for c in _CASES])
def test_refused(name: str, source: str, cls: str, kind: type[FlattenError], code: str,
                 line: int, text: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / f"{name}.cc"
    path.write_text(source)
    with pytest.raises(kind) as info:
        flatten_unit(str(path), ["-std=c++17"], cls)
    err = info.value
    assert err.code == code, err.render()
    assert err.location is not None and err.location.line == line, err.render()
    assert text in err.render()
    status = main(["flatten", cls, str(path), "--in-place", "--", "-std=c++17"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.startswith(f"cachefit: error: {path}:{line}:"), captured.err
    assert path.read_text() == source


def test_friend_of_the_enclosing_class_may_use_its_private_members(tmp_path: Path) -> None:
    path = tmp_path / "friend.cc"
    path.write_text(_PRIVATE_OF_ENCLOSING.replace(" private:\n",
                                                  " private:\n  friend class Derived;\n"))
    result = flatten_unit(str(path), ["-std=c++17"], "Derived")
    text = result.text()
    assert "return Outer::Secret();" in text
    assert "class Outer::Base {" not in text
