"""Byte ranges whose length cannot be resolved to members but that start at a member and
run past it (jq 1.6's dtoa `Bcopy`, found by the sweep of session 3): the members from that
one to the end are kept where they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from reorder_helpers import (
    C_COMPILERS,
    analyse_rec_and_use,
    build_and_run,
    refused_order,
    reorder_in_place,
)

BIG = """\
#include <string.h>
typedef unsigned int ULong;
struct big {
    struct big *next;
    int k, maxwds, sign, wds;
    ULong x[1];
};
/* jq's src/jv_dtoa.c (David Gay's dtoa): sign, wds and the words of x in one copy */
#define Bcopy(x, y) memcpy((char *)&x->sign, (char *)&y->sign, \\
                           y->wds * sizeof(ULong) + 2 * sizeof(int))
"""
BIG_USE = """\
#include <stdio.h>
#include <stdlib.h>
#include "rec.h"
static struct big *balloc(int k) {
    struct big *b = malloc(sizeof(struct big) + (k - 1) * sizeof(ULong));
    b->next = 0; b->k = 7; b->maxwds = k; b->sign = 0; b->wds = 0;
    return b;
}
int main(void) {
    struct big *y = balloc(4), *x = balloc(4);
    y->sign = 1; y->wds = 3; y->x[0] = 10; y->x[1] = 20; y->x[2] = 30;
    Bcopy(x, y);
    printf("%d %d %d %u %u %u\\n", x->k, x->sign, x->wds, x->x[0], x->x[1], x->x[2]);
    free(x); free(y);
    return 0;
}
"""


def test_a_copy_from_a_member_past_its_end_keeps_the_tail(tmp_path: Path) -> None:
    """`memcpy(&x->sign, &y->sign, y->wds * sizeof(ULong) + 2 * sizeof(int))` copies sign,
    wds and the first wds words of x: its length is not a form of the member offsets, so
    the call was skipped, `--order next,maxwds,wds,sign,k,x` was accepted, and jq printed
    1e100 as 0 and looped forever on other numbers. At least 8 bytes from `sign`, a 4-byte
    member: sign and everything after it keep their offsets, the rest stays before it."""
    a = analyse_rec_and_use(tmp_path, "big", BIG, BIG_USE)
    assert not a.refusals, a.refusals
    got = {(c.kind, c.fields, c.boundary) for c in a.constraints}
    assert ("pin", ("sign", "wds", "x"), None) in got
    assert ("same_side", (), "sign") in got


def test_an_order_moving_the_tail_is_refused(tmp_path: Path, cachefit) -> None:
    analyse_rec_and_use(tmp_path, "big", BIG, BIG_USE)
    err = refused_order(cachefit, tmp_path, "big", tmp_path / "rec.h", tmp_path / "use.c",
                        "--order", "next,maxwds,wds,sign,k,x", "--", "-std=gnu11")
    assert "memcpy of a byte range of big" in err
    assert f"{tmp_path / 'use.c'}:" in err


@pytest.mark.parametrize("compiler", C_COMPILERS)
def test_an_order_keeping_the_tail_still_copies_the_same_members(tmp_path: Path, cachefit,
                                                                  compiler: str) -> None:
    analyse_rec_and_use(tmp_path, "big", BIG, BIG_USE)
    expected = build_and_run(tmp_path, "use.c", compiler, "-std=gnu11")
    assert expected.split() == ["7", "1", "3", "10", "20", "30"]
    reorder_in_place(cachefit, tmp_path, "big", "next,maxwds,k,sign,wds,x")
    assert build_and_run(tmp_path, "use.c", compiler, "-std=gnu11") == expected


RECORD = """\
#include <string.h>
#include <sys/socket.h>
struct conn {
    int fd;
    char name[16];
    struct sockaddr_storage addr;
    long bytes;
    char tail[];
};
"""


def test_variable_lengths_within_a_member_need_nothing(tmp_path: Path) -> None:
    """A variable number of bytes into an array or a struct member (a name, a socket
    address of `addrlen` bytes) or into the last member (a flexible array) stays the
    documented limit: no constraint."""
    use = ('#include "rec.h"\n'
           "void set(struct conn *c, const char *s, size_t n, const struct sockaddr *sa,\n"
           "         socklen_t len) {\n"
           "    memcpy(c->name, s, n);\n"
           "    memcpy(&c->addr, sa, len);\n"
           "    memcpy(c->tail, s, n + 1);\n"
           "}\n")
    a = analyse_rec_and_use(tmp_path, "conn", RECORD, use)
    assert not a.refusals and not a.constraints, (a.refusals, a.constraints)


def test_variable_length_from_a_scalar_member_keeps_the_tail(tmp_path: Path) -> None:
    """A variable number of bytes from a `long`: a scalar holds no variable number of
    bytes, so the members after it are meant too."""
    use = ('#include "rec.h"\n'
           "void cp(struct conn *d, const struct conn *s, size_t n) {\n"
           "    memcpy(&d->bytes, &s->bytes, n);\n"
           "}\n")
    a = analyse_rec_and_use(tmp_path, "conn", RECORD, use)
    assert not a.refusals, a.refusals
    got = {(c.kind, c.fields, c.boundary) for c in a.constraints}
    assert got == {("pin", ("bytes", "tail"), None), ("same_side", (), "bytes")}


PADDED = """\
#include <string.h>
struct s { char a; char b; int c; long d; };
"""
PADDED_USE = """\
#include <stdio.h>
#include "rec.h"
int main(void) {
    struct s x = {.a = 1, .b = 2, .c = 0x11223344, .d = 4}, y;
    memset(&y, 0, sizeof y);
    memcpy(&y.b, &x.b, 7);   /* b, the padding after it and c */
    printf("%d %d %x %ld\\n", y.a, y.b, y.c, y.d);
    return 0;
}
"""


def test_a_constant_range_over_padding_keeps_its_bytes(tmp_path: Path) -> None:
    """7 bytes from `b` (offset 1) are b, 2 bytes of padding and c: the members only
    staying together in order (`unit`) let `--order d,b,c,a` put b at 8 and c at 12, and
    the copy missed c's last byte. The covered members keep their offsets and no other
    member moves into the bytes."""
    a = analyse_rec_and_use(tmp_path, "s", PADDED, PADDED_USE)
    assert not a.refusals, a.refusals
    got = {(c.kind, c.fields, c.boundary) for c in a.constraints}
    assert got == {("pin", ("b", "c"), None), ("same_side", (), 1), ("same_side", (), 8)}


def test_a_constant_range_past_its_only_member_keeps_its_bytes(tmp_path: Path) -> None:
    """`memset(&p->a, 0, 4)` clears a char and the 3 bytes of padding after it: another
    member must not move into them, and a must not move inside them."""
    use = ('#include "rec.h"\n'
           "void clr(struct s *p) { memset(&p->a, 0, 4); }\n")
    a = analyse_rec_and_use(tmp_path, "s", PADDED, use)
    assert not a.refusals, a.refusals
    got = {(c.kind, c.fields, c.boundary) for c in a.constraints}
    assert got == {("pin", ("a", "b"), None), ("same_side", (), 4)}


@pytest.mark.parametrize("compiler", C_COMPILERS)
def test_an_order_changing_the_padding_in_a_range_is_refused(tmp_path: Path, cachefit,
                                                             compiler: str) -> None:
    analyse_rec_and_use(tmp_path, "s", PADDED, PADDED_USE)
    expected = build_and_run(tmp_path, "use.c", compiler, "-std=gnu11")
    assert expected.split() == ["0", "2", "11223344", "0"]
    err = refused_order(cachefit, tmp_path, "s", tmp_path / "rec.h", tmp_path / "use.c",
                        "--order", "d,b,c,a", "--", "-std=gnu11")
    assert "memcpy of a byte range of s" in err


def test_a_constant_range_of_equally_aligned_members_stays_a_unit(tmp_path: Path) -> None:
    """Two ints copied as 8 bytes from the first: no padding can come between them in any
    order that keeps them together, so they only stay together (`unit`)."""
    rec = "#include <string.h>\nstruct p { char tag; int x; int y; long z; };\n"
    use = ('#include "rec.h"\n'
           "void cp(struct p *d, const struct p *s) { memcpy(&d->x, &s->x, 2 * sizeof(int)); }\n")
    a = analyse_rec_and_use(tmp_path, "p", rec, use)
    assert not a.refusals, a.refusals
    assert [(c.kind, c.fields) for c in a.constraints] == [("unit", ("x", "y"))]
