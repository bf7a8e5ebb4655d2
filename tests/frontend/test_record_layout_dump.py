"""frontend.record_layout_dump: the one parser of clang's record-layout dump."""

from __future__ import annotations

from cachefit.flatten.layout import TargetLayout
from cachefit.frontend.record_layout_dump import parse_dump

# clang++-19 -fsyntax-only -Xclang -fdump-record-layouts-complete on
#   struct iface { virtual void f() = 0; };
#   struct a : virtual iface { long x; void f() override {} };
#   struct b { int y; };
#   struct t : b, a { char z; };
DUMP = """
*** Dumping AST Record Layout
         0 | struct a
         8 |   long x
         0 |   struct iface (primary virtual base)
         0 |     (iface vtable pointer)
           | [sizeof=16, dsize=16, align=8,
           |  nvsize=16, nvalign=8]

*** Dumping AST Record Layout
         0 | struct t
         0 |   struct a (primary base)
         8 |     long x
        16 |   struct b (base)
        16 |     int y
        20 |   char z
         0 |   struct iface (virtual base)
         0 |     (iface vtable pointer)
           | [sizeof=24, dsize=21, align=8,
           |  nvsize=21, nvalign=8]

*** Dumping AST Record Layout
         0 | struct ns::node<struct ns::item, class ns::tag> (empty)
           | [sizeof=1, dsize=1, align=1,
           |  nvsize=1, nvalign=1]
"""


def test_bases_subobjects_and_vtable_pointers() -> None:
    recs = parse_dump(DUMP)
    assert list(recs) == ["a", "t", "ns::node<ns::item, ns::tag>"]
    t = recs["t"]
    assert (t.size, t.align) == (24, 8)
    assert [(b.name, b.offset, b.virtual, b.primary, b.size) for b in t.bases] == [
        ("a", 0, False, True, 16), ("b", 16, False, False, 0), ("iface", 0, True, False, 0)]
    assert [(s.name, s.offset, s.depth, s.in_virtual_part, s.vptr_left_out)
            for s in t.subobjects] == [("a", 0, 1, False, True), ("b", 16, 1, False, False),
                                       ("iface", 0, 1, True, False)]
    # a's vtable pointer is iface's, printed once, in the virtual part
    assert t.vptr_offsets == [0] and t.vptr_count == 1
    a = recs["a"]
    assert [(b.name, b.virtual, b.primary) for b in a.bases] == [("iface", True, True)]
    assert a.subobjects[0].in_virtual_part and a.vptr_count == 1


def test_flattening_reads_the_target_block_from_it() -> None:
    lay = TargetLayout.of(parse_dump(DUMP)["t"])
    assert (lay.size, lay.vptrs) == (24, 1)
    assert lay.order_key("a") == (0, 0)
    assert lay.order_key("b") == (0, 16)
    assert lay.order_key("iface") == (1, 0)
    assert lay.order_key("tcb") is None
