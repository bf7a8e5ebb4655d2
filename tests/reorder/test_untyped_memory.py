"""Bytes of the record's memory used through an untyped pointer: the members there stay put.

sqlite's page cache zeroes the first 8 bytes of each page's extra space through a `void *`
field, `memset(pPgHdr->pExtra, 0, 8)`, which the b-tree later takes as its `MemPage`
(`isInit` must stay in those bytes); `--order alphabetical` of MemPage was accepted and
broke sqlite before (the sweep of session 10). These programs reduce that and its
variations; the precision cases (an allocator wrapper, a string field, a moving pointer, a
typed free list, a whole record) must find nothing.
"""

from __future__ import annotations

import subprocess
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

PAGE = """\
struct page {
  unsigned char isInit;   /* must be first: the cache zeroes the first 8 bytes */
  unsigned char leaf;
  int pgno;
  void *data;
  long nCell;
};
"""
HEAD = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rec.h"
"""
# A local allocation: the slot's first bytes are zeroed inside the function returning it.
CACHE = HEAD + """\
/* the page cache knows nothing of struct page: it hands out szExtra bytes per slot */
static void *cache_slot(size_t szExtra) {
  void *extra = malloc(szExtra);
  memset(extra, 0xAB, szExtra);   /* stale contents of a recycled slot */
  memset(extra, 0, 8);            /* invalidate the user's cached parse */
  return extra;
}
int main(void) {
  struct page *p = (struct page *)cache_slot(sizeof(struct page));
  if (!p->isInit) { p->isInit = 1; p->nCell = 0; p->data = 0; p->pgno = 7; }
  printf("%d\\n", p->pgno);
  free(p);
  return 0;
}
"""
# sqlite's shape: the memory is a `void *` field; a getter returns it; the cache (another
# unit) zeroes it through the field; a byte of it is read through a cast.
PGHDR = """\
#include <stddef.h>
struct pghdr { void *pExtra; int pgno; };
void *pager_get_extra(struct pghdr *pg);
struct pghdr *cache_fetch(int pgno);
void cache_release(struct pghdr *pg);
"""
PCACHE = """\
#include <stdlib.h>
#include <string.h>
#include "pghdr.h"
void *pager_get_extra(struct pghdr *pg) { return pg->pExtra; }
struct pghdr *cache_fetch(int pgno) {
  struct pghdr *pg = malloc(sizeof *pg + 64);
  memset(pg, 0xAB, sizeof *pg + 64);
  pg->pExtra = (void *)&pg[1];
  memset(pg->pExtra, 0, 8);
  pg->pgno = pgno;
  return pg;
}
void cache_release(struct pghdr *pg) { free(pg); }
"""
BTREE = HEAD + """\
#include "pghdr.h"
static struct page *page_of(struct pghdr *pg) {
  struct page *p = (struct page *)pager_get_extra(pg);
  if (!p->isInit) { p->isInit = 1; p->nCell = 0; p->data = 0; p->pgno = pg->pgno; }
  return p;
}
int main(void) {
  struct pghdr *pg = cache_fetch(7);
  if (((unsigned char *)pager_get_extra(pg))[0] != 0) return 1;
  printf("%d\\n", page_of(pg)->pgno);
  cache_release(pg);
  return 0;
}
"""


def _pins(a: object) -> list[tuple[tuple[str, ...], int | None, str]]:
    return [(c.fields, c.location.line if c.location else None, c.reason)
            for c in a.constraints if "raw bytes" in c.reason]     # type: ignore[attr-defined]


def _analyse_units(tmp_path: Path, files: dict[str, str], name: str = "page") -> object:
    write(tmp_path, files)
    units = [str(tmp_path / f) for f in files if f.endswith(".c")]
    return analyse(name, units_for(units, None, ["-std=gnu11"]))


def test_bytes_zeroed_by_the_function_that_returns_the_memory(tmp_path: Path) -> None:
    a = analyse_rec_and_use(tmp_path, "page", PAGE, CACHE)
    pins = _pins(a)
    assert [(f, line) for f, line, _ in pins] == [(("isInit", "leaf", "pgno"), 9)]
    reason = pins[0][2]
    assert reason.startswith("bytes 0..7 of memory that is also a page (converted at ")
    assert "use.c:13:" in reason and reason.endswith("(memset)")


def test_a_void_pointer_field_across_units_and_a_byte_read_through_a_cast(
        tmp_path: Path) -> None:
    """The memset is in one unit, the conversion (through a getter returning the field)
    and a read of byte 0 through `(unsigned char *)` in another."""
    a = _analyse_units(tmp_path, {"rec.h": PAGE, "pghdr.h": PGHDR, "pcache.c": PCACHE,
                                  "btree.c": BTREE})
    got = sorted((f, Path(c.location.file).name, c.location.line)
                 for c in a.constraints if "raw bytes" in c.reason
                 for f in [c.fields])
    assert got == [(("isInit",), "btree.c", 13),
                   (("isInit", "leaf", "pgno"), "pcache.c", 9)]


def test_a_helper_that_zeroes_its_argument(tmp_path: Path) -> None:
    use = HEAD + """\
static void invalidate(void *slot) { memset(slot, 0, 4); }
int main(void) {
  void *mem = malloc(sizeof(struct page));
  invalidate(mem);
  struct page *p = mem;
  printf("%d\\n", p->isInit);
  free(mem);
  return 0;
}
"""
    pins = _pins(analyse_rec_and_use(tmp_path, "page", PAGE, use))
    assert [(f, line) for f, line, _ in pins] == [(("isInit", "leaf"), 5)]   # bytes 0..3


def test_a_pointer_stored_into_a_field_and_zeroed_through_it(tmp_path: Path) -> None:
    use = HEAD + """\
struct slot { void *mem; };
int main(void) {
  struct slot s;
  struct page *p = malloc(sizeof *p);
  s.mem = p;
  memset(s.mem, 0, 2);
  printf("%d\\n", p->leaf);
  free(p);
  return 0;
}
"""
    pins = _pins(analyse_rec_and_use(tmp_path, "page", PAGE, use))
    assert [(f, line) for f, line, _ in pins] == [(("isInit", "leaf"), 10)]


@pytest.mark.parametrize("use", [
    # one caller zeroes the head of its own buffer from an allocator wrapper; the record
    # comes from another call of the same wrapper: a different object
    """\
static void *xmalloc(size_t n) { void *p = malloc(n); if (!p) abort(); return p; }
int main(void) {
  char *buf = xmalloc(64);
  memset(buf, 0, 8);
  struct page *p = xmalloc(sizeof *p);
  p->isInit = 0;
  free(buf); free(p);
  return 0;
}
""",
    # text in a `char *` field read byte by byte through a `void *` getter (sqlite's
    # `sqlite3_value_blob`); the record is also kept in a `char *` field of the same
    # type (an aggregate's context), but a string field is not untyped storage
    """\
struct value { char *z; };
static const void *value_blob(struct value *v) { return v->z; }
int main(void) {
  struct value v = { "abc" }, w;
  w.z = malloc(sizeof(struct page));
  struct page *p = (struct page *)w.z;
  const unsigned char *b = value_blob(&v);
  p->isInit = b[0];
  free(w.z);
  return 0;
}
""",
    # a pointer moved past the record before it writes: not its first bytes
    """\
int main(void) {
  unsigned char *mem = malloc(sizeof(struct page) + 8);
  struct page *p = (struct page *)mem;
  mem += sizeof(struct page);
  memset(mem, 0, 8);
  p->isInit = 0;
  free(p);
  return 0;
}
""",
    # a free list threaded through typed pointers: slots are not one object
    """\
struct slot { struct slot *next; };
static struct slot *free_list;
static void *pool_alloc(void) { struct slot *s = free_list; free_list = s->next; return s; }
int main(void) {
  char *text = pool_alloc();
  text[0] = 0;
  struct page *p = pool_alloc();
  p->isInit = 0;
  return 0;
}
""",
    # the whole record zeroed through `void *`: no order changes what that does
    """\
int main(void) {
  void *mem = malloc(sizeof(struct page));
  memset(mem, 0, sizeof(struct page));
  struct page *p = mem;
  p->isInit = 0;
  free(p);
  return 0;
}
""",
    # the record heads a block, and the function returns the memory after it (nginx's
    # ngx_palloc_block: `m += sizeof(ngx_pool_data_t); ... return m;`)
    """\
static void *block_alloc(size_t size) {
  unsigned char *m = malloc(sizeof(struct page) + size);
  struct page *head = (struct page *)m;
  head->isInit = 0;
  m += sizeof(struct page);
  return m;
}
int main(void) {
  char *s = block_alloc(16);
  memcpy(s, "abcdefgh", 8);
  return 0;
}
""",
    # a generic container's `void *` field holds arrays of several record types (nginx's
    # ngx_array_t.elts): the field is not one object
    """\
struct array { void *elts; };
struct name { char *s; };
static void array_init(struct array *a, size_t size) { a->elts = calloc(4, size); }
int main(void) {
  struct array pages, names;
  array_init(&pages, sizeof(struct page));
  array_init(&names, sizeof(struct name));
  struct page *p = pages.elts;
  struct name *n = names.elts;
  ((char **)names.elts)[0] = "x";
  p->isInit = n->s[0];
  return 0;
}
""",
    # a handle read as the record (libuv's `(uv_timer_t *)handle`) is the typed rules'
    # business; the user data field's pointee is not the record (libuv's test-metrics.c,
    # `(*(int *)handle->data)++`)
    """\
struct owner { void *data; };
struct handle { char tag; };
static void close_page(struct handle *h) { struct page *p = (struct page *)h; p->isInit = 0; }
int main(void) {
  static int counter;
  static struct handle hd;
  static struct owner a, b;
  a.data = &counter;
  b.data = &hd;
  (*(int *)a.data)++;
  close_page((struct handle *)b.data);
  return 0;
}
""",
], ids=["allocator-wrapper", "string-field", "moved-pointer", "typed-free-list",
        "whole-record", "moved-and-returned", "generic-container", "record-to-record-cast"])
def test_nothing_for_other_memory(tmp_path: Path, use: str) -> None:
    assert _pins(analyse_rec_and_use(tmp_path, "page", PAGE, HEAD + use)) == []


@pytest.mark.parametrize("compiler", C_COMPILERS)
def test_the_order_keeps_the_program_working(cachefit, tmp_path: Path, compiler: str) -> None:
    """The order that moved `isInit` out of the first 8 bytes (the program then printed
    garbage) is refused; one keeping the zeroed bytes' members is written and the program
    prints what it printed before."""
    files = {"rec.h": PAGE, "pghdr.h": PGHDR, "pcache.c": PCACHE, "btree.c": BTREE}
    write(tmp_path, files)
    units = [tmp_path / "pcache.c", tmp_path / "btree.c"]

    def run() -> str:
        exe = tmp_path / f"prog-{compiler}"
        subprocess.run([compiler, "-std=gnu11", "-Wall", "-Werror", "-o", str(exe),
                        *map(str, units)], check=True, capture_output=True, text=True)
        return subprocess.run([str(exe)], check=True, capture_output=True,
                              text=True).stdout

    before = run()
    assert before == "7\n"
    err = refused_order(cachefit, tmp_path, "page", tmp_path / "rec.h", *units,
                        "--order", "nCell,data,pgno,leaf,isInit", "--", "-std=gnu11")
    assert "isInit" in err and "raw bytes" in err and "pcache.c:9:" in err
    code, _, err = cachefit("reorder", "page", tmp_path / "rec.h", *units, "--order",
                            "isInit,leaf,pgno,nCell,data", "--in-place", "--",
                            "-std=gnu11")
    assert code == 0, err
    assert "nCell;\n  void *data;" in (tmp_path / "rec.h").read_text()
    assert run() == before


def test_reorder_in_place_helper_still_refuses_the_reduced_case(cachefit,
                                                                tmp_path: Path) -> None:
    """The one-unit case of the known gap: an order moving `isInit` is refused with
    nothing written, as `--pin isInit --pin leaf --pin pgno` did by hand before."""
    write(tmp_path, {"rec.h": PAGE, "use.c": CACHE})
    before = (tmp_path / "rec.h").read_text()
    refused_order(cachefit, tmp_path, "page", tmp_path / "rec.h",
                  tmp_path / "use.c", "--order", "alphabetical", "--", "-std=gnu11")
    assert (tmp_path / "rec.h").read_text() == before
    reorder_in_place(cachefit, tmp_path, "page", "isInit,leaf,pgno,nCell,data")
    for compiler in C_COMPILERS:
        assert build_and_run(tmp_path, "use.c", compiler, "-std=gnu11") == "7\n"


def test_functions_of_the_same_name_in_several_programs(tmp_path: Path) -> None:
    """Two programs' `main` have one USR; the facts of both count, whichever unit comes
    first (the conversion is in the second one's `main`)."""
    other = HEAD + 'int main(void) { printf("%d\\n", (int)sizeof(struct page)); return 0; }\n'
    a = _analyse_units(tmp_path, {"rec.h": PAGE, "other.c": other, "use.c": CACHE})
    assert [(c.fields, c.location.line) for c in a.constraints
            if "raw bytes" in c.reason] == [(("isInit", "leaf", "pgno"), 9)]
