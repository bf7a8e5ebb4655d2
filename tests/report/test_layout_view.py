"""layout_view: accesses placed in a layout and the lines they cost, fast on big profiles.

expat's profile (5.4 million accesses placed, 92 fields) took the report step two minutes:
every access was split against every field again, although the same (offset, size) pairs
recur throughout. The split is now made once per pair and layout; the results are the
same as splitting each access on its own."""

from __future__ import annotations

from cachefit.model.profile import Access, FieldSpan, TypeProfile
from cachefit.report.layout_view import make_view, place, touched_lines


class CountingFields(list[FieldSpan]):
    """A field list that counts how often it is walked."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        CountingFields.walks += 1
        return super().__iter__()


def _profile() -> TypeProfile:
    fields = CountingFields(FieldSpan(f"f{i}", 8 * i, 8) for i in range(90))
    return TypeProfile("big", 8 * 90 + 8, fields)   # 8 bytes of tail padding


def test_repeated_accesses_are_split_once_per_layout() -> None:
    tp = _profile()
    view = make_view("after", tp, {f"f{i}": 8 * (89 - i) for i in range(90)}, tp.size,
                     "plan", predicted=True)
    walks = CountingFields.walks
    accesses = [Access(r % 3, 8 * (r % 5), 12, "r" if r % 2 else "w") for r in range(20000)]
    lines = touched_lines(tp, view, accesses, 64)
    dirty = touched_lines(tp, view, accesses, 64, written_only=True)
    assert CountingFields.walks - walks <= 10
    # the figures are those of splitting each access on its own
    seen, seen_w = set(), set()
    for a in accesses[:30]:     # the pattern repeats every 30 accesses
        for piece in place(tp, view, a):
            assert piece.field is not None
            span = next(s for s in view.spans if s.name == piece.field)
            hit = {(a.role, span.offset // 64), (a.role, (span.offset + 7) // 64)}
            seen |= hit
            if a.mode == "w":
                seen_w |= hit
    assert (lines, dirty) == (len(seen), len(seen_w))


def test_bytes_outside_fields_and_zero_size_accesses() -> None:
    tp = _profile()
    view = make_view("before", tp, {}, tp.size, "DWARF", predicted=False)
    pieces = place(tp, view, Access(0, 8 * 89 + 4, 12, "r"))
    assert [(p.offset, p.size, p.field) for p in pieces] == [(716, 4, "f89"), (720, 8, None)]
    assert [(p.offset, p.size, p.field) for p in place(tp, view, Access(1, 720, 0, "w"))] \
        == [(720, 0, None)]
    assert touched_lines(tp, view, [Access(0, 8 * 89 + 4, 12, "r")], 64) == 1
