"""The record as a member of a union: the union's other members read its bytes.

Xlib/SDL events: `union event { int type; struct any_event any; struct key_event key; }`;
code writes `e.key.*` and reads `e.any.serial` (the common initial sequence, C11 6.5.2.3p6)
and `e.type`. Reordering `key_event` must keep that prefix at its offsets (pins), and a byte
array overlaying the record (`unsigned char raw[sizeof(struct hdr)]`, a wire format) rules
reordering out. Anonymous unions inside structs and unions in other units count too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reorder_helpers import C_COMPILERS, CXX_COMPILERS, build_and_run, refused_order, write

from cachefit.reorder.analysis import analyse, units_for

EVENTS = """\
struct any_event { int type; unsigned serial; void *window; };
struct key_event {
    int type;
    unsigned serial;
    void *window;
    char text[64];
    int keycode;
    int state;
};
"""

EVENT_UNION = "union event { int type; struct any_event any; struct key_event key; };\n"

MAIN = """\
#include <stdio.h>
#include "ev.h"
union event { int type; struct any_event any; struct key_event key; };

static unsigned serial_of(const union event *e) { return e->any.serial; }

int main(void) {
    union event e;
    e.key.type = 2; e.key.serial = 42; e.key.window = 0; e.key.keycode = 9; e.key.state = 1;
    printf("type=%d serial=%u keycode=%d\\n", e.type, serial_of(&e), e.key.keycode);
    return 0;
}
"""

CIS = ("common initial sequence with struct any_event in union event: code may read them "
       "through any")
TYPE = "member type (int) of union event overlays it: code may read it through type"


def _analyse(tmp_path: Path, name: str, rec: str, use: str, cxx: bool = False):
    suffix = "cc" if cxx else "c"
    write(tmp_path, {"rec.h": rec, f"use.{suffix}": '#include <stddef.h>\n#include <stdint.h>\n'
                     '#include "rec.h"\n' + use})
    args = ["-x", "c++", "-std=c++17"] if cxx else ["-std=gnu11"]
    return analyse(name, units_for([str(tmp_path / "rec.h"), str(tmp_path / f"use.{suffix}")],
                                   None, args))


def _constraints(tmp_path: Path, name: str, rec: str, use: str,
                 cxx: bool = False) -> list[tuple[object, ...]]:
    a = _analyse(tmp_path, name, rec, use, cxx)
    assert not a.refusals, a.refusals
    return [(c.kind, c.fields, c.location.line if c.location else None, c.reason)
            for c in a.constraints if c.kind == "pin"]


def test_common_initial_sequence_and_type_member_are_pinned(tmp_path: Path) -> None:
    got = _constraints(tmp_path, "key_event", EVENTS, EVENT_UNION)
    assert got == [("pin", ("type",), 4, TYPE),
                   ("pin", ("type", "serial", "window"), 4, CIS)]


def test_the_shorter_struct_is_pinned_whole(tmp_path: Path) -> None:
    """Reordering any_event: its whole member list is the common initial sequence."""
    got = _constraints(tmp_path, "any_event", EVENTS, EVENT_UNION)
    assert got == [("pin", ("type",), 4, TYPE),
                   ("pin", ("type", "serial", "window"), 4,
                    "common initial sequence with struct key_event in union event: code "
                    "may read them through key")]


def test_union_in_another_unit_and_anonymous_union_in_a_struct(tmp_path: Path) -> None:
    use = ("struct queue_entry {\n"
           "    long when;\n"
           "    union { struct any_event any; struct key_event key; };\n"
           "};\n")
    got = _constraints(tmp_path, "key_event", EVENTS, use)
    assert got == [("pin", ("type", "serial", "window"), 6,
                    "common initial sequence with struct any_event in an anonymous union in "
                    "struct queue_entry: code may read them through any")]


@pytest.mark.parametrize(("other", "pinned"), [
    ("int type; long serial;", ("type",)),                  # serial's type differs
    ("int type; unsigned serial; const void *window;", ("type", "serial")),
    ("long type; unsigned serial;", ()),                    # nothing in common
    ("int type; unsigned serial; void *window; char text[64]; int keycode; int state; "
     "int more;", ("type", "serial", "window", "text", "keycode", "state")),
])
def test_common_initial_sequence_is_the_longest_prefix_of_equal_types(
        tmp_path: Path, other: str, pinned: tuple[str, ...]) -> None:
    rec = EVENTS + f"struct other {{ {other} }};\n"
    got = _constraints(tmp_path, "key_event", rec,
                       "union u { struct other o; struct key_event k; };\n")
    assert got == ([("pin", pinned, 4, "common initial sequence with struct other in union u: "
                     f"code may read {'it' if len(pinned) == 1 else 'them'} through o")]
                   if pinned else [])


def test_bit_fields_need_the_same_width(tmp_path: Path) -> None:
    rec = ("struct a { unsigned kind : 4; unsigned flags : 4; unsigned : 8; long x; int y; };\n"
           "struct b { unsigned kind : 4; unsigned flags : 3; long x; };\n"
           "struct c { unsigned kind : 4; unsigned flags : 4; unsigned : 8; long x; };\n")
    got = _constraints(tmp_path, "a", rec, "union u { struct a a; struct b b; struct c c; };\n")
    assert got == [
        ("pin", ("kind",), 4, "common initial sequence with struct b in union u: code may read "
         "it through b"),
        ("pin", ("kind", "flags", "x"), 4, "common initial sequence with struct c in union u: "
         "code may read them through c")]


def test_first_member_record_is_pinned_under_its_first_type(tmp_path: Path) -> None:
    """The record starts with a struct that starts with `int type`: a union member `int
    type` reads it."""
    rec = ("struct hdr { int type; int len; };\n"
           "struct msg { struct hdr h; long a; char b; };\n")
    got = _constraints(tmp_path, "msg", rec, "union m { int type; struct msg msg; };\n")
    assert got == [("pin", ("h",), 4, "member type (int) of union m overlays it: code may "
                    "read it through type")]


@pytest.mark.parametrize("member", [
    "struct key_event other;", "struct key_event many[2];", "long pad[16];",
    "double d;", "struct { long x; } s;"])
def test_members_that_do_not_read_the_record_need_nothing(tmp_path: Path,
                                                          member: str) -> None:
    got = _constraints(tmp_path, "key_event", EVENTS,
                       f"union u {{ struct key_event k; {member} }};\n"
                       "union v { struct any_event any; int type; };\n")
    assert got == []


@pytest.mark.parametrize("raw", [
    "unsigned char raw[sizeof(struct hdr)];", "char raw[8];", "signed char raw[3];",
    "uint8_t raw[1];", "int8_t raw[8];"])
def test_byte_array_overlay_is_refused(tmp_path: Path, raw: str) -> None:
    rec = "struct hdr { unsigned char version; unsigned char flags; unsigned short len; " \
          "unsigned id; };\n"
    a = _analyse(tmp_path, "hdr", rec, f"union pkt {{ struct hdr h; {raw} }};\n"
                 "int first(union pkt *p) { return p->raw[0]; }\n")
    assert len(a.refusals) == 1
    r = a.refusals[0]
    assert r.location is not None and r.location.line == 4
    assert r.location.col == len("union pkt { struct hdr h; ") + raw.index("raw") + 1
    assert r.what.startswith("hdr's bytes are read as raw data: member raw (")
    assert r.what.endswith(") of union pkt overlays it, so its layout is visible outside")


def test_byte_array_never_named_is_padding(tmp_path: Path) -> None:
    """`union { struct hdr h; char pad[64]; }` only pads the record to a cache line: no
    code names `pad`, so nothing reads the record's bytes through it (named once, in a
    designated initialiser or an expression, it is refused)."""
    rec = "struct hdr { unsigned char version; unsigned id; };\n"
    use = "union slot { struct hdr h; char pad[64]; };\n" \
          "unsigned id_of(union slot *s) { return s->h.id; }\n"
    assert _analyse(tmp_path, "hdr", rec, use).refusals == []
    for named in ("union slot z = {.pad = {1}};\n",
                  "char c(union slot *s) { return s->pad[1]; }\n"):
        assert len(_analyse(tmp_path, "hdr", rec, use + named).refusals) == 1


def test_byte_array_overlay_in_an_anonymous_union_and_cxx(tmp_path: Path) -> None:
    rec = "#include <cstddef>\nstruct hdr { unsigned char version; unsigned id; };\n"
    a = _analyse(tmp_path, "hdr", rec,
                 "struct frame { int n; union { hdr h; std::byte raw[8]; }; };\n"
                 "int first(frame *f) { return (int)f->raw[0]; }\n", cxx=True)
    assert [r.what for r in a.refusals] == [
        "hdr's bytes are read as raw data: member raw (std::byte[8]) of an anonymous union "
        "in frame overlays it, so its layout is visible outside"]


def test_cxx_common_initial_sequence(tmp_path: Path) -> None:
    rec = ("struct any_ev { int type; unsigned serial; };\n"
           "struct key_ev { int type; unsigned serial; long when; int code; };\n")
    got = _constraints(tmp_path, "key_ev", rec, "union ev { any_ev any; key_ev key; };\n",
                       cxx=True)
    assert got == [("pin", ("type", "serial"), 4, "common initial sequence with any_ev in "
                    "union ev: code may read them through any")]


def test_event_program_order_refused_then_profile_keeps_working(tmp_path: Path,
                                                                cachefit) -> None:
    """The reproducer: an order that moves serial is refused at the union member; an
    order that keeps the common prefix is applied, listed, and the program still works."""
    write(tmp_path, {"ev.h": EVENTS, "main.c": MAIN})
    before = build_and_run(tmp_path, "main.c", "gcc", "-std=c11")
    assert before == "type=2 serial=42 keycode=9\n"
    err = refused_order(cachefit, tmp_path, "key_event", tmp_path / "ev.h",
                        tmp_path / "main.c", "--order", "type,keycode,serial,window,state,text",
                        "--", "-std=c11")
    assert err.startswith(f"cachefit: error: {tmp_path / 'main.c'}:3:42: serial would move "
                          "from offset 4 to 8, but the code relies on it: type, serial, "
                          f"window keep their offsets ({CIS})")
    code, out, err = cachefit("reorder", "key_event", tmp_path / "ev.h", tmp_path / "main.c",
                              "--order", "type,serial,window,keycode,state,text",
                              "--in-place", "--json", "--", "-std=c11")
    assert code == 0, err
    assert json.loads(out)["constraints"] == [
        {"kind": "pin", "fields": ["type"], "reason": TYPE,
         "location": f"{tmp_path / 'main.c'}:3:19"},
        {"kind": "pin", "fields": ["type", "serial", "window"], "reason": CIS,
         "location": f"{tmp_path / 'main.c'}:3:42"}]
    text = (tmp_path / "ev.h").read_text()
    assert text.index("window;") < text.index("keycode;") < text.index("text[64];")
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before


def test_event_program_with_a_profile_keeps_the_prefix(tmp_path: Path, cachefit) -> None:
    """A profile that wants keycode and state next to type: the optimizer moves them after
    the pinned prefix, not into it."""
    write(tmp_path, {"ev.h": EVENTS, "main.c": MAIN})
    before = build_and_run(tmp_path, "main.c", "gcc", "-std=c11")
    fields = [("type", 0, 4), ("serial", 4, 4), ("window", 8, 8), ("text", 16, 64),
              ("keycode", 80, 4), ("state", 84, 4)]
    prof = {"format": "cachefit-profile", "version": 1, "cache_line": 64,
            "invocations": 1000, "types": {"key_event": {
                "size": 88, "fields": [{"name": n, "offset": o, "size": s}
                                       for n, o, s in fields],
                "sequences": [{"count": 1000, "accesses": [[0, 0, 4, "r"], [0, 80, 4, "r"],
                                                           [0, 84, 4, "r"]]}],
                "dropped": {"runaway": 0, "outside_objects": 0, "table_full": 0}}}}
    (tmp_path / "p.json").write_text(json.dumps(prof))
    code, out, err = cachefit("reorder", "key_event", tmp_path / "ev.h", tmp_path / "main.c",
                              "--profile", tmp_path / "p.json", "--in-place", "--json", "--",
                              "-std=c11")
    assert code == 0, err
    got = json.loads(out)
    assert got["new_order"] == ["type", "serial", "window", "keycode", "state", "text"]
    assert [c["reason"] for c in got["constraints"]] == [TYPE, CIS]
    assert got["offsets"]["serial"] == 4 and got["offsets"]["window"] == 8, got["offsets"]
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before


def test_wire_format_program_is_refused(tmp_path: Path, cachefit) -> None:
    rec = "struct hdr { unsigned char version; unsigned char flags; unsigned short len; " \
          "unsigned id; };\n"
    main = ('#include <stdio.h>\n#include "hdr.h"\n'
            "union pkt { struct hdr h; unsigned char raw[sizeof(struct hdr)]; };\n"
            "int main(void) {\n    union pkt p;\n"
            "    p.h.version = 1; p.h.flags = 2; p.h.len = 0x0303; p.h.id = 0x04040404;\n"
            '    for (unsigned i = 0; i < sizeof p.raw; i++) printf("%02x", p.raw[i]);\n'
            '    printf("\\n");\n    return 0;\n}\n')
    write(tmp_path, {"hdr.h": rec, "main.c": main})
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == "0102030304040404\n"
    code, out, err = cachefit("reorder", "hdr", tmp_path / "hdr.h", tmp_path / "main.c",
                              "--order", "id,len,flags,version", "--in-place", "--",
                              "-std=c11")
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert err == (f"cachefit: error: {tmp_path / 'main.c'}:3:41: hdr's bytes are read as raw "
                   "data: member raw (unsigned char[8]) of union pkt overlays it, so its "
                   "layout is visible outside; serialise the members explicitly, or list hdr "
                   "as ABI in cachefit.toml ([reorder] abi = [...])\n")
    assert (tmp_path / "hdr.h").read_text() == rec


def test_cxx_event_program_keeps_working(tmp_path: Path, cachefit) -> None:
    rec = ("struct any_ev { int type; unsigned serial; };\n"
           "struct key_ev { int type; unsigned serial; char c; long when; char d; };\n")
    main = ('#include <cstdio>\n#include "ev.h"\n'
            "union ev { int type; any_ev any; key_ev key; };\n"
            "int main() {\n    ev e;\n"
            "    e.key.type = 3; e.key.serial = 7; e.key.c = 1; e.key.when = 5; e.key.d = 2;\n"
            '    std::printf("%d %u %ld\\n", e.type, e.any.serial, e.key.when);\n'
            "    return 0;\n}\n")
    write(tmp_path, {"ev.h": rec, "main.cc": main})
    before = build_and_run(tmp_path, "main.cc", "g++", "-std=c++17")
    assert before == "3 7 5\n"
    code, out, err = cachefit("reorder", "key_ev", tmp_path / "ev.h", tmp_path / "main.cc",
                              "--order", "when,type,serial,c,d", "--in-place", "--",
                              "-x", "c++", "-std=c++17")
    assert code == 2 and "type would move from offset 0 to 8" in err
    code, out, err = cachefit("reorder", "key_ev", tmp_path / "ev.h", tmp_path / "main.cc",
                              "--order", "type,serial,when,c,d", "--in-place", "--",
                              "-x", "c++", "-std=c++17")
    assert code == 0, err
    assert "common initial sequence with any_ev in union ev" in out
    for cc in CXX_COMPILERS:
        assert build_and_run(tmp_path, "main.cc", cc, "-std=c++17") == before


@pytest.mark.parametrize("member", [
    "int kind;", "unsigned char tag;", "union { int i; float f; } head;",
    "struct { struct { int t; } in; long rest; } head;", "int types[2];"])
def test_members_reading_the_first_member_pin_it(tmp_path: Path, member: str) -> None:
    """Anything of the type the record starts with (or a single char) reads its first
    member; a struct starting with a struct that starts with it, too (their common initial
    sequence is empty)."""
    rec = "struct rec { int type; long a; char b; };\n"
    got = _constraints(tmp_path, "rec", rec, f"union u {{ {member} struct rec r; }};\n")
    assert [(k, f, line) for k, f, line, _why in got] == [("pin", ("type",), 4)]
