"""Order dependencies found in code become constraints (with locations), not refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from reorder_helpers import (
    analyse_rec_and_use,
    build_and_run,
    refused_order,
    reorder_and_run,
    reorder_in_place,
    write,
)

from cachefit.reorder.analysis import analyse, units_for

REC = """\
#include <stddef.h>
#include <string.h>
#define offsetofend(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))
struct base { long kind; };
struct obj {
    struct base hdr;
    int a;
    char c;
    long d;
    int b;
    short e;
};
"""


def _constraints(tmp_path: Path, use: str, rec: str = REC, name: str = "obj"):
    write(tmp_path, {"rec.h": rec, "use.c": '#include "rec.h"\n' + use})
    a = analyse(name, units_for([str(tmp_path / "rec.h"), str(tmp_path / "use.c")], None,
                                ["-std=gnu11"]))
    assert not a.refusals, a.refusals
    return [(c.kind, c.fields, c.boundary, c.location.line if c.location else None)
            for c in a.constraints]


def test_memset_to_the_end(tmp_path: Path) -> None:
    got = _constraints(tmp_path, "void clr(struct obj *p) {\n"
                       "    memset(&p->a, 0, sizeof(*p) - offsetof(struct obj, a));\n}\n")
    assert got == [("same_side", (), "a", 3)]


def test_memcpy_prefix(tmp_path: Path) -> None:
    got = _constraints(tmp_path, "void cp(struct obj *d, const struct obj *s) {\n"
                       "    memcpy(d, s, offsetof(struct obj, d));\n}\n")
    assert got == [("same_side", (), "d", 3)]


def test_offsetofend_range_and_free_difference(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "void z(struct obj *p) {\n"
                       "    memset((char *)p + offsetof(struct obj, c), 0,\n"
                       "           offsetofend(struct obj, b) - offsetof(struct obj, c));\n"
                       "}\n"
                       "size_t span = offsetof(struct obj, e) - offsetof(struct obj, a);\n")
    assert ("same_side", (), "c", 3) in got and ("same_side", (), "b", 3) in got
    assert ("same_side", (), "a", 6) in got and ("same_side", (), "e", 6) in got
    assert len(got) == 4


def test_first_member_base_struct_idiom(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "long kind_of(struct obj *o) { return ((struct base *)o)->kind; }\n"
                       "struct obj *down(struct base *b) { return (struct obj *)b; }\n")
    assert got == [("first", ("hdr",), None, 2), ("first", ("hdr",), None, 3)]


def test_read_through_first_byte(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "unsigned char tag(struct obj *o) { return *(unsigned char *)o; }\n"
                       "int sum(struct obj *o) {\n"
                       "    const unsigned char *b = (const unsigned char *)o;\n"
                       "    return b[0] + b[1];\n}\n"
                       "void touch(struct obj *o, void (*f)(const char *)) {\n"
                       "    const char *p = (const char *)o;\n"
                       "    for (size_t off = 0; off < sizeof *o; off += 64) f(p + off);\n}\n")
    assert got == [("first", ("hdr",), None, 2), ("first", ("hdr",), None, 4)]


def test_container_of_and_single_members_need_nothing(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "struct obj *of_b(int *pb) {\n"
                       "    return (struct obj *)((char *)pb - offsetof(struct obj, b));\n}\n"
                       "void zb(struct obj *p) { memset(&p->b, 0, sizeof p->b); }\n"
                       "void cp(struct obj *d, struct obj *s) { memcpy(d, s, sizeof *d); }\n")
    assert got == []


def test_whole_copy_through_a_dereferenced_pointer_needs_nothing(tmp_path: Path) -> None:
    """tmux 3.3a, grid.c: `memcpy(*lastgc, &gc, sizeof **lastgc)` with `struct grid_cell
    **lastgc` copies one grid_cell into another. `*lastgc` was not seen as a pointer to
    the record, so every order of grid_cell was refused as "copied to or from a byte
    buffer as a whole"."""
    got = _constraints(tmp_path,
                       "void keep(struct obj **last, const struct obj *o) {\n"
                       "    memcpy(*last, o, sizeof **last);\n"
                       "    memcpy(o[0].hdr.kind ? *last : last[1], &o[1], sizeof *o);\n}\n")
    assert got == []


def test_struct_hack_tail_stays_last(tmp_path: Path, cachefit) -> None:
    """leveldb's LRUHandle: `char key_data[1]` last, allocated with sizeof - 1 + n and
    written past its one element; moving it would overwrite the members after it."""
    rec = ("struct handle {\n    void *value;\n    unsigned hash;\n"
           "    char key_data[1];  // beginning of key\n};\n")
    got = _constraints(tmp_path, "", rec=rec, name="handle")
    assert got == [("same_side", (), "key_data", 4)]
    code, _out, err = cachefit("reorder", "handle", tmp_path / "rec.h", "--order",
                               "key_data,hash,value", "--", "-std=c11")
    assert code == 2
    assert "a one-element array last in the record" in err
    code, out, err = cachefit("reorder", "handle", tmp_path / "rec.h", "--order",
                              "hash,value,key_data", "--", "-std=c11")
    assert code == 0, err
    assert out.index("unsigned hash;") < out.index("void *value;") < out.index("key_data[1]")


def test_opaque_handles_need_nothing(tmp_path: Path) -> None:
    """zlib's pattern: a unit where the record is incomplete stores its own state in the
    record's pointer slot; nothing there reads the record through another type. Casting
    the record to an incomplete type (handing it to an API) reads nothing either."""
    write(tmp_path, {
        "api.h": "struct obj;\nstruct stream { struct obj *state; };\n",
        "rec.h": '#include "api.h"\n' + REC,
        "reader.c": '#include "api.h"\nstruct rd { long mode; int bits; };\n'
                    "void put(struct stream *s, struct rd *r) { s->state = (struct obj *)r; }\n"
                    "long get(struct stream *s) { return ((struct rd *)s->state)->mode; }\n",
        "writer.c": '#include "rec.h"\nstruct opaque;\nvoid api(struct opaque *);\n'
                    "void hand(struct obj *o) { api((struct opaque *)o); }\n"})
    a = analyse("obj", units_for([str(tmp_path / "rec.h"), str(tmp_path / "reader.c"),
                                  str(tmp_path / "writer.c")], None, ["-std=gnu11"]))
    assert not a.refusals and a.constraints == []


def test_cacheline_group_markers(tmp_path: Path) -> None:
    rec = """\
struct obj {
    long x;
    char hot_begin[0];
    int a;
    int b;
    char hot_end[0];
    long y;
};
"""
    got = _constraints(tmp_path, "", rec)
    assert got == [("same_side", (), "hot_begin", 3), ("same_side", (), "hot_end", 6)]


def test_struct_group_macro_is_a_unit(tmp_path: Path) -> None:
    rec = """\
#define struct_group(NAME, ...) \\
    union { struct { __VA_ARGS__ }; struct { __VA_ARGS__ } NAME; }
struct obj {
    long x;
    struct_group(regs, int r0; int r1;);
    long y;
};
"""
    got = _constraints(tmp_path, "", rec)
    assert got == [("unit", ("r0", "r1", "regs"), None, 5)]


def test_shared_header_macro_stays_first(tmp_path: Path) -> None:
    rec = """\
#define OBJ_HEADER int type; int refcount
struct obj { OBJ_HEADER; long payload; char tag; };
struct file_obj { OBJ_HEADER; int fd; };
"""
    got = _constraints(tmp_path, "", rec)
    assert ("unit", ("type", "refcount"), None, 2) in got
    assert ("first", ("type",), None, 3) in got


REC_RUN = """\
#include <stddef.h>
#include <string.h>
struct obj {
    long keep1;
    int keep2;
    int a;          /* from here on, reset() clears */
    long hot;
    char z1;
    long z2;
};
"""
MAIN_RUN = """\
#include <stdio.h>
#include "rec.h"
static void reset(struct obj *p) { memset(&p->a, 0, sizeof(*p) - offsetof(struct obj, a)); }
int main(void) {
    struct obj o = {.keep1 = 1, .keep2 = 2, .a = 3, .hot = 4, .z1 = 5, .z2 = 6};
    reset(&o);
    printf("%ld %d %d %ld %d %ld\\n", o.keep1, o.keep2, o.a, o.hot, o.z1, o.z2);
    return 0;
}
"""
# The profile touches keep1 and hot together: the optimizer would like hot next to keep1,
# but hot must stay after `a` (the memset range).
PROFILE = {
    "format": "cachefit-profile", "version": 1, "cache_line": 16, "invocations": 100,
    "types": {"obj": {
        "size": 40,
        "fields": [{"name": "keep1", "offset": 0, "size": 8}, {"name": "keep2", "offset": 8,
                   "size": 4}, {"name": "a", "offset": 12, "size": 4},
                   {"name": "hot", "offset": 16, "size": 8}, {"name": "z1", "offset": 24,
                   "size": 1}, {"name": "z2", "offset": 32, "size": 8}],
        "sequences": [{"count": 100, "accesses": [[0, 0, 8, "r"], [0, 16, 8, "w"],
                                                  [0, 32, 8, "r"]]}],
        "dropped": {}}},
}


def test_optimizer_honours_the_range(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": REC_RUN, "main.c": MAIN_RUN,
                     "p.json": json.dumps(PROFILE)})
    before = build_and_run(tmp_path, "main.c", "gcc", "-std=c11")
    code, out, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "main.c",
                              "--profile", tmp_path / "p.json", "--json", "--in-place",
                              "--", "-std=c11")
    assert code == 0, err
    report = json.loads(out)
    assert report["type"] == "obj" and report["old_order"] == ["keep1", "keep2", "a", "hot",
                                                               "z1", "z2"]
    assert set(report["lines"]) == {"before", "after", "lower_bound"}
    assert set(report["dirty_lines"]) == {"before", "after"}
    assert report["size"] == {"before": 40, "after": 40}
    assert isinstance(report["optimal"], bool) and report["solver_seconds"] >= 0
    assert report["merged"] == [] and report["changed_files"] == [str(tmp_path / "rec.h")]
    order = report["new_order"]
    assert order.index("a") > order.index("keep1") and order.index("a") > \
        order.index("keep2")
    assert all(order.index(n) > order.index("a") for n in ("hot", "z1", "z2"))
    assert report["constraints"] == [{
        "kind": "same_side", "fields": [], "reason": "memset of a byte range of obj",
        "location": f"{tmp_path / 'main.c'}:3:36", "boundary": "a"}]
    assert report["lines"]["after"] <= report["lines"]["before"]
    for cc in ("gcc", "clang-19"):
        if shutil.which(cc):
            assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before


def test_given_order_breaking_a_range_is_refused(tmp_path: Path, cachefit) -> None:
    write(tmp_path, {"rec.h": REC_RUN, "main.c": MAIN_RUN})
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.h", tmp_path / "main.c",
                            "--order", "hot,keep1,keep2,a,z1,z2", "--", "-std=c11")
    assert code == 2
    assert "all fields stay on their side of field a (memset of a byte range of obj)" in err
    assert f"{tmp_path / 'main.c'}:3:36" in err


def test_refusal_of_a_given_order_is_one_line_however_many_places(tmp_path: Path,
                                                                   cachefit) -> None:
    src = ("struct pub { unsigned have; unsigned char *next; };\n"
           "typedef struct { struct pub x; int mode; int err; } state;\n"
           "int a(struct pub *f) { state *s = (state *)f; return s->mode; }\n"
           "int b(struct pub *f) { state *s = (state *)f; return s->err; }\n"
           "int c(struct pub *f) { state *s = (state *)f; return s->err + s->mode; }\n")
    write(tmp_path, {"g.c": src})
    code, out, err = cachefit("reorder", "state", tmp_path / "g.c", "--order", "mode,err,x",
                              "--", "-std=c11")
    assert code == 2 and not out
    assert len(err.splitlines()) == 1
    assert err.startswith(f"cachefit: error: {tmp_path / 'g.c'}:3:35: the given order breaks "
                          "an order constraint: x stays the first member")
    assert "(and 2 more constraints it breaks); choose an order" in err


@pytest.mark.parametrize("flag", ["--json", None])
def test_terminal_and_json_list_constraints(tmp_path: Path, cachefit, flag) -> None:
    write(tmp_path, {"rec.h": REC_RUN, "main.c": MAIN_RUN})
    args = ["reorder", "obj", tmp_path / "rec.h", tmp_path / "main.c", "--order",
            "keep2,keep1,a,z2,hot,z1", "-o", tmp_path / "out.h"]
    if flag:
        args.append(flag)
    code, out, err = cachefit(*args, "--", "-std=c11")
    assert code == 0, err
    if flag:
        assert json.loads(out)["constraints"][0]["boundary"] == "a"
    else:
        assert "constraints (1):" in out
        assert f"{tmp_path / 'main.c'}:3:36: all fields stay on their side of field a" in out


def test_opaque_handle_read_through_a_pointer_type_keeps_the_first_member(
        tmp_path: Path, cachefit) -> None:
    """expat's public `XML_GetUserData(parser)` is `(*(void **)(parser))` on the opaque
    `XML_Parser`: a unit that never sees the record's definition reads its first member.
    The opaque-handle exemption let `cachefit build` move `m_userData`, and expat's own
    test_user_parameters failed ("User data in parser not correctly set")."""
    api = ("typedef struct obj *handle;\n#define GET_USER(h) (*(void **)(h))\n"
           "handle make(void *user);\nlong work(handle h);\n")
    rec = ('#include <stdlib.h>\n#include "api.h"\n'
           "struct obj { void *user; long a; long b; long c; };\n"
           "handle make(void *user) { struct obj *o = calloc(1, sizeof *o);\n"
           "  o->user = user; o->b = 5; return o; }\n"
           "long work(handle h) { return h->b + h->c; }\n")
    main = ('#include <stdio.h>\n#include "api.h"\n'
            "int main(void) { static int token = 7; handle h = make(&token);\n"
            "  int *u = GET_USER(h);\n"
            '  printf("%d %ld\\n", u == &token ? *u : -1, work(h)); return 0; }\n')
    write(tmp_path, {"api.h": api, "rec.c": rec, "main.c": main})
    units = units_for([str(tmp_path / "rec.c"), str(tmp_path / "main.c")], None,
                      ["-std=gnu11"])
    a = analyse("obj", units)
    assert not a.refusals
    assert [(c.kind, c.fields, c.location.file.endswith("main.c") if c.location else None)
            for c in a.constraints] == [("first", ("user",), True)]
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.c", tmp_path / "main.c",
                            "--order", "b,c,user,a", "--", "-std=gnu11")
    assert code == 2 and "main.c:4:" in err and "user" in err, err
    assert "converted to/from void **, which reads its first 8 bytes" in err, err
    code, _, err = cachefit("reorder", "obj", tmp_path / "rec.c", tmp_path / "main.c",
                            "--order", "user,b,c,a", "--in-place", "--", "-std=gnu11")
    assert code == 0, err
    assert "struct obj { void *user; long b; long c; long a; };" in \
        (tmp_path / "rec.c").read_text()
    for cc in [c for c in ("gcc", "clang-19") if shutil.which(c)]:
        exe = tmp_path / f"prog-{cc}"
        subprocess.run([cc, "-std=gnu11", "-Wall", "-Werror", "-o", str(exe),
                        str(tmp_path / "rec.c"), str(tmp_path / "main.c")], check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
        assert out.split() == ["7", "5"]


def test_cast_to_a_record_that_starts_with_the_record_needs_nothing(tmp_path: Path,
                                                                    cachefit) -> None:
    """lmdb's `(MDB_xcursor *)mc` with `struct MDB_xcursor { MDB_cursor mx_cursor; ...}`:
    the cursor is read through a member of its own type, so every field was pinned for
    nothing ("converted to/from struct MDB_xcursor *, which reads its first 496 bytes")."""
    rec = ("struct cur { long a; int flags; long b; char c; };\n"
           "struct xcur { struct cur cursor; long db; };\n"
           "struct both { struct xcur x; int more; };\n")
    use = ('#include <stdio.h>\n#include "rec.h"\n'
           "static long sub_flags(struct cur *mc) { return ((struct xcur *)mc)->cursor.flags; }\n"
           "static long deep(struct cur *mc) { return ((struct both *)mc)->x.db; }\n"
           "int main(void) { struct both w = {.x = {.cursor = {.a = 1, .flags = 2, .b = 3,\n"
           "  .c = 4}, .db = 5}, .more = 6};\n"
           '  printf("%ld %ld\\n", sub_flags(&w.x.cursor), deep(&w.x.cursor)); return 0; }\n')
    a = analyse_rec_and_use(tmp_path, "cur", rec, use)
    assert not a.refusals and a.constraints == []
    reorder_in_place(cachefit, tmp_path, "cur", "flags,c,a,b")
    exe = tmp_path / "prog"
    subprocess.run(["cc", "-std=gnu11", "-Wall", "-Werror", "-o", str(exe),
                    str(tmp_path / "use.c")], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["2", "5"]


LUA_GC = """\
#define CommonHeader struct gco *next; unsigned char tt; unsigned char marked
struct gco { CommonHeader; };
struct tab { CommonHeader; long a; int b; char c; };
struct str { CommonHeader; double d; char more[40]; };
union gcu { struct gco gc; struct tab t; struct str s; };
#define obj2gco(v) (&((union gcu *)(v))->gc)
#define gco2t(o) (&((union gcu *)(o))->t)
"""


@pytest.mark.parametrize("compiler", [c for c in ("gcc", "clang-19") if shutil.which(c)])
def test_cast_to_a_union_holding_the_record_needs_nothing(tmp_path: Path, cachefit,
                                                          compiler: str) -> None:
    """Lua's `obj2gco(t)` is `&((union GCUnion *)(t))->gc` and `gco2t(o)` is
    `&((union GCUnion *)(o))->h`: the union has a member of the record's own type, so the
    cast reads the record with its own layout, and what the union's other members read of
    it is the union overlay's common initial sequence. Every field of Lua's Table was
    pinned for nothing ("converted to/from union GCUnion *, which reads its first 200
    bytes")."""
    use = ('#include <stdio.h>\n#include "rec.h"\n'
           "static struct tab *as_tab(struct gco *o) { return gco2t(o); }\n"
           "static int tt_of(struct tab *t) { return obj2gco(t)->tt; }\n"
           "int main(void) { struct tab t = {.next = 0, .tt = 5, .marked = 1, .a = 2,\n"
           "  .b = 3, .c = 4};\n"
           '  printf("%d %ld %d\\n", tt_of(&t), as_tab(obj2gco(&t))->a, t.b + t.c);\n'
           "  return 0; }\n")
    a = analyse_rec_and_use(tmp_path, "tab", LUA_GC, use)
    assert not a.refusals
    kinds = {(c.kind, c.fields) for c in a.constraints}
    assert ("pin", ("next", "tt", "marked")) in kinds, kinds
    assert all(c.kind != "pin" or "a" not in c.fields for c in a.constraints), kinds
    out = reorder_and_run(cachefit, tmp_path, "tab", "next,tt,marked,c,b,a", compiler)
    assert "struct tab { CommonHeader; char c; int b; long a; };" in \
        (tmp_path / "rec.h").read_text()
    assert out == ["5", "2", "7"]


LUA_EXTRA = """\
#include <stdlib.h>
#include <string.h>
#define EXTRASPACE (sizeof(void *))
#define getextraspace(L) ((void *)((char *)(L) - EXTRASPACE))
struct state { char status; long top; int nci; void *hook; };
struct lx { unsigned char extra_[EXTRASPACE]; struct state l; };
"""


@pytest.mark.parametrize("compiler", [c for c in ("gcc", "clang-19") if shutil.which(c)])
def test_range_before_the_record_needs_nothing(tmp_path: Path, cachefit,
                                                compiler: str) -> None:
    """Lua's `memcpy(lua_getextraspace(L1), lua_getextraspace(g->mainthread),
    LUA_EXTRASPACE)`, `lua_getextraspace(L)` being `(void *)((char *)(L) - LUA_EXTRASPACE)`:
    the bytes right before the lua_State, none of its own. lua_State was refused ("memcpy
    uses a byte range of lua_State that cachefit cannot resolve to members")."""
    use = ('#include <stdio.h>\n#include "rec.h"\n'
           "static struct state *make(void) {\n"
           "  struct lx *x = calloc(1, sizeof *x); return &x->l; }\n"
           "int main(void) { struct state *a = make(), *b = make();\n"
           "  *(void **)getextraspace(a) = a; a->top = 3; a->nci = 4; b->status = 1;\n"
           "  memcpy(getextraspace(b), getextraspace(a), EXTRASPACE);\n"
           '  printf("%d %ld %d\\n", *(void **)getextraspace(b) == a, a->top, a->nci);\n'
           "  return 0; }\n")
    a = analyse_rec_and_use(tmp_path, "state", LUA_EXTRA, use)
    assert not a.refusals, a.refusals
    assert a.constraints == []
    out = reorder_and_run(cachefit, tmp_path, "state", "hook,top,nci,status", compiler)
    assert "struct state { void *hook; long top; int nci; char status; };" in \
        (tmp_path / "rec.h").read_text()
    assert out == ["1", "3", "4"]


LUA_UDATA = """\
#include <stddef.h>
#define CommonHeader struct gco *next; unsigned char tt; unsigned char marked
struct gco { CommonHeader; };
typedef union { void *p; double d; long l; } uvalue;
/* with user values; the user's memory follows the uv array */
struct udata {
  CommonHeader;
  unsigned short nuvalue;
  size_t len;
  void *metatable;
  struct gco *gclist;
  int spare;
  uvalue uv[1];
};
/* without user values: only sizes the header, the user's memory follows bindata */
struct udata0 {
  CommonHeader;
  unsigned short nuvalue;
  size_t len;
  void *metatable;
  union { double d; long l; } bindata;
};
#define udatamemoffset(nuv) \\
  ((nuv) == 0 ? offsetof(struct udata0, bindata) \\
              : offsetof(struct udata, uv) + sizeof(uvalue) * (nuv))
#define getudatamem(u) ((char *)(u) + udatamemoffset((u)->nuvalue))
"""


@pytest.mark.parametrize("compiler", [c for c in ("gcc", "clang-19") if shutil.which(c)])
def test_a_sibling_with_the_same_header_and_members_keeps_them(tmp_path: Path, cachefit,
                                                                compiler: str) -> None:
    """Lua's `Udata0` repeats `Udata`'s members after `CommonHeader` (nuvalue, len,
    metatable) and only sizes a userdata without user values: one is allocated with
    `offsetof(Udata0, bindata) + n` bytes and used as a `Udata` whose user memory starts
    there. Only `next` was kept first; moving `gclist` before `len` put the user's bytes
    over `len` and `metatable` (Lua's own smoke test crashed). The members the two share
    after the header, by name and type, keep their offsets."""
    use = ('#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n'
           '#include "rec.h"\n'
           "static struct udata *newud(unsigned short nuv, size_t n) {\n"
           "  struct udata *u = calloc(1, udatamemoffset(nuv) + n);\n"
           "  u->nuvalue = nuv; u->len = n; u->metatable = u; return u; }\n"
           "int main(void) { struct udata *u = newud(0, 24);\n"
           "  memset(getudatamem(u), 0x55, 24);\n"
           '  printf("%zu %d %d\\n", u->len, u->metatable == (void *)u, u->nuvalue);\n'
           "  free(u); return 0; }\n")
    a = analyse_rec_and_use(tmp_path, "udata", LUA_UDATA, use)
    assert not a.refusals
    kinds = {(c.kind, c.fields) for c in a.constraints}
    assert ("pin", ("next", "tt", "marked", "nuvalue", "len", "metatable")) in kinds, kinds
    err = refused_order(cachefit, tmp_path, "udata", tmp_path / "rec.h", tmp_path / "use.c",
                        "--order", "next,tt,marked,gclist,nuvalue,len,metatable,spare,uv",
                        "--", "-std=gnu11")
    assert "struct udata0" in err and "rec.h:16:" in err, err
    assert "the same members (nuvalue, len, metatable)" in err, err
    assert reorder_and_run(cachefit, tmp_path, "udata",
                           "next,tt,marked,nuvalue,len,metatable,spare,gclist,uv",
                           compiler) == ["24", "1", "0"]


REDIS_IDS = """\
#include <string.h>
#define RUN_ID_SIZE 40
struct server {
    int port;
    char replid[RUN_ID_SIZE+1];     /* my replication ID */
    long long master_repl_offset;
    char replid2[RUN_ID_SIZE+1];    /* replid inherited from the master */
    long long second_replid_offset;
};
"""


@pytest.mark.parametrize("compiler", [c for c in ("gcc", "clang-19") if shutil.which(c)])
def test_a_member_sized_by_another_members_sizeof_is_that_member(tmp_path: Path, cachefit,
                                                                  compiler: str) -> None:
    """redis: `memcpy(server.replid2, server.replid, sizeof(server.replid))` and
    `memset(server.replid2, '0', sizeof(server.replid))` copy exactly replid2 (both are
    `char [CONFIG_RUN_ID_SIZE+1]`): a member's size does not depend on the order. The
    length was the symbolic end(replid) - start(replid), the range "unresolved", and every
    order of redisServer was refused (server.c:6629, replication.c:1654 and :1665)."""
    use = ('#include <stdio.h>\n#include "rec.h"\n'
           "struct server server;\n"
           "static void shift(void) {\n"
           "  memcpy(server.replid2, server.replid, sizeof(server.replid));\n"
           "  memset(server.replid, '0', sizeof(server.replid2) - 1); }\n"
           "int main(void) { server.port = 7;\n"
           '  strcpy(server.replid, "abc"); server.master_repl_offset = 9;\n'
           "  shift();\n"
           '  printf("%s %.3s %d %lld\\n", server.replid2, server.replid, server.port,\n'
           "         server.master_repl_offset); return 0; }\n")
    a = analyse_rec_and_use(tmp_path, "server", REDIS_IDS, use)
    assert not a.refusals, a.refusals
    assert a.constraints == []
    assert reorder_and_run(cachefit, tmp_path, "server",
                           "replid2,master_repl_offset,second_replid_offset,replid,port",
                           compiler) == ["abc", "000", "7", "9"]
