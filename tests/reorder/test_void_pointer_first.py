"""A pointer to the record passed on as `void *` may come back as its first member's type.

libevent's `bufferevent_private` starts with `struct bufferevent bev`; its deferred callback
gets the record as a `void *` argument and reads it as a `struct bufferevent *`. When the
first member is a record, every conversion of a pointer to the record to `void *` keeps it
first; a first member that is not a record, and memory functions, pin nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reorder_helpers import (
    C_COMPILERS,
    analyse_rec_and_use,
    build_and_run,
    refused_order,
    reorder_in_place,
    write,
)

from cachefit.reorder.analysis import analyse, units_for

REC = """\
struct bufferevent { int enabled; void *input; };
struct priv {
    struct bufferevent bev;
    void *lock;
    int refcnt;
    long max_single_read;
};
"""

PUN = """\
#include <stdio.h>
#include <stdlib.h>
#include "rec.h"

struct callback { void (*fn)(void *arg); void *arg; };

static void finalize_cb(void *arg_) {
    struct bufferevent *bufev = arg_;
    printf("enabled=%d\\n", bufev->enabled);
}

int main(void) {
    struct priv *p = calloc(1, sizeof *p);
    struct callback cb;
    p->bev.enabled = 42;
    p->refcnt = 1;
    cb.fn = finalize_cb;
    cb.arg = p;
    cb.fn(cb.arg);
    printf("refcnt=%d\\n", p->refcnt);
    free(p);
    return 0;
}
"""


def _constraints(tmp_path: Path, use: str, rec: str = REC) -> list[tuple[object, ...]]:
    write(tmp_path, {"rec.h": rec, "use.c": '#include <stdlib.h>\n#include <string.h>\n'
                     '#include "rec.h"\n' + use})
    a = analyse("priv", units_for([str(tmp_path / "rec.h"), str(tmp_path / "use.c")], None,
                                  ["-std=gnu11"]))
    assert not a.refusals, a.refusals
    return [(c.kind, c.fields, c.location.line if c.location else None, c.reason)
            for c in a.constraints]


REASON = ("a pointer to priv is converted to void * here; code may read it back as its "
          "first member (bev)")


def test_implicit_and_explicit_conversions_keep_the_first_member(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "void defer(void (*cb)(void *), void *arg);\n"
                       "void f(void *);\n"
                       "static void *slot;\n"
                       "void use(struct priv *p) {\n"
                       "    defer(f, p);\n"
                       "    slot = p;\n"
                       "    f((void *)p);\n"
                       "}\n"
                       "const void *ret(struct priv *p) { return p; }\n"
                       "void init(struct priv *p) { void *v = p; f(v); }\n")
    assert got == [("first", ("bev",), line, REASON) for line in (8, 9, 10, 12, 13)]


def test_memory_functions_and_free_pin_nothing(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "void clear(struct priv *p) { memset(p, 0, sizeof *p); }\n"
                       "void copy(struct priv *d, const struct priv *s) {\n"
                       "    memcpy(d, s, sizeof *d);\n}\n"
                       "void drop(struct priv *p) { free(p); }\n"
                       "struct priv *make(void) { return calloc(1, sizeof(struct priv)); }\n"
                       "struct priv *back(void *arg) { return arg; }\n")
    assert got == []


def test_realloc_free_wrappers_and_allocator_hooks_pin_nothing(tmp_path: Path) -> None:
    """c-ares frees through hooks (`ares_free`, `ares_realloc`): releasing memory reads no
    member back, so none of these pins the first member (9 false `first` constraints on
    c-ares' apattern refused a given order)."""
    got = _constraints(tmp_path,
                       "void *(*my_realloc)(void *, size_t) = realloc;\n"
                       "void (*ares_free)(void *) = free;\n"
                       "void xfree(void *q) { free(q); }\n"
                       "struct priv *grow(struct priv *p) { return realloc(p, 2 * sizeof *p); }\n"
                       "struct priv *hook(struct priv *p) { return my_realloc(p, 64); }\n"
                       "void drop(struct priv *p) { ares_free(p); }\n"
                       "void drop2(struct priv *p) { xfree(p); }\n")
    assert got == []


@pytest.mark.parametrize("head", ["int bev;", "void *bev;", "struct bufferevent *bev;",
                                  "char bev[8];"])
def test_first_member_not_a_record_pins_nothing(tmp_path: Path, head: str) -> None:
    """Plain callback arguments are common; only a record first member can be read back."""
    rec = REC.replace("struct bufferevent bev;", head)
    got = _constraints(tmp_path, "void f(void *);\nvoid use(struct priv *p) { f(p); }\n",
                       rec=rec)
    assert got == []


def test_array_of_records_first_keeps_it_first(tmp_path: Path) -> None:
    rec = REC.replace("struct bufferevent bev;", "struct bufferevent bev[2];")
    got = _constraints(tmp_path, "void f(void *);\nvoid use(struct priv *p) { f(p); }\n",
                       rec=rec)
    assert got == [("first", ("bev",), 5, REASON)]


@pytest.mark.parametrize("flag", ["--json", None])
def test_callback_pun_program_keeps_working(tmp_path: Path, cachefit, flag) -> None:
    """The libevent reproducer: an order that moves `bev` is refused with the conversion's
    location; one that keeps it first is applied, listed, and the program still works."""
    write(tmp_path, {"rec.h": REC, "main.c": PUN})
    before = build_and_run(tmp_path, "main.c", "gcc", "-std=c11")
    assert before == "enabled=42\nrefcnt=1\n"
    err = refused_order(cachefit, tmp_path, "priv", tmp_path / "rec.h", tmp_path / "main.c",
                        "--order", "lock,refcnt,max_single_read,bev", "--", "-std=c11")
    assert err.startswith(f"cachefit: error: {tmp_path / 'main.c'}:18:14: the given order "
                          "breaks an order constraint: bev stays the first member "
                          f"({REASON})")
    args = ["reorder", "priv", tmp_path / "rec.h", tmp_path / "main.c", "--order",
            "bev,max_single_read,lock,refcnt", "--in-place"]
    code, out, err = cachefit(*args, *([flag] if flag else []), "--", "-std=c11")
    assert code == 0, err
    if flag:
        assert json.loads(out)["constraints"] == [{
            "kind": "first", "fields": ["bev"], "reason": REASON,
            "location": f"{tmp_path / 'main.c'}:18:14"}]
    else:
        assert "constraints (1):" in out
        assert (f"{tmp_path / 'main.c'}:18:14: bev stays the first member ({REASON})"
                in out)
    text = (tmp_path / "rec.h").read_text()
    assert text.index("bev;") < text.index("max_single_read;") < text.index("lock;")
    for cc in C_COMPILERS:
        assert build_and_run(tmp_path, "main.c", cc, "-std=c11") == before


QUEUE_ENTRY = """\
#define TAILQ_ENTRY(type) struct { struct type *tqe_next; struct type **tqe_prev; }
struct conn {
    TAILQ_ENTRY(conn) next;
    int fd;
    void *bufev;
    long max_body_size;
};
"""


@pytest.mark.parametrize("compiler", C_COMPILERS)
def test_first_member_of_an_unnamed_struct_type_pins_nothing(tmp_path: Path, cachefit,
                                                              compiler: str) -> None:
    """libevent's evhttp_connection starts with `TAILQ_ENTRY(evhttp_connection) next`, a
    member of an unnamed struct type, and registers `evcon` as a callback's `void *`
    argument (http.c:391). No code can convert the `void *` back to a pointer to an
    unnamed struct, so `next` was kept first for nothing."""
    use = ('#include <stdio.h>\n#include <stdlib.h>\n#include "rec.h"\n'
           "struct callback { void (*fn)(void *arg); void *arg; };\n"
           "static void read_cb(void *arg) { struct conn *c = arg;\n"
           '  printf("%d %ld %d\\n", c->fd, c->max_body_size, c->next.tqe_next == c); }\n'
           "int main(void) { struct conn *c = calloc(1, sizeof *c);\n"
           "  struct callback cb = {read_cb, 0};\n"
           "  c->fd = 3; c->max_body_size = 4; c->next.tqe_next = c;\n"
           "  cb.arg = c; cb.fn(cb.arg); free(c); return 0; }\n")
    a = analyse_rec_and_use(tmp_path, "conn", QUEUE_ENTRY, use)
    assert not a.refusals and a.constraints == [], a.constraints
    reorder_in_place(cachefit, tmp_path, "conn", "max_body_size,bufev,next,fd")
    assert build_and_run(tmp_path, "use.c", compiler, "-std=gnu11").split() == \
        ["3", "4", "1"]


def test_first_member_of_a_typedef_named_struct_still_counts(tmp_path: Path) -> None:
    """`typedef struct { ... } bev_t;`: the struct has a name to convert to (bev_t *)."""
    rec = REC.replace("struct bufferevent { int enabled; void *input; };",
                      "typedef struct { int enabled; void *input; } bev_t;").replace(
        "struct bufferevent bev;", "bev_t bev;")
    got = _constraints(tmp_path, "void f(void *);\nvoid use(struct priv *p) { f(p); }\n",
                       rec=rec)
    assert [g[:2] for g in got] == [("first", ("bev",))]
