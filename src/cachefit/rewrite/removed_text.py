"""Removed text in a member list: spans of removed bytes and the blank lines around them.

Given the bytes a rewrite removes from a member list (`Span`s) and where it inserts text,
these functions answer what the text left around them looks like: whether a line is blank,
which blank lines a removal would leave hanging (two in a row, one after the line of `{` or
before `}`) and should take with it, where an insertion point falls once spans are removed.
They only read text; they choose no order, build no member text and write nothing
(member_order does).
"""

from __future__ import annotations

from cachefit.frontend.source_text import (
    Span,
    line_end,
    line_start,
    only_blanks_after,
    only_blanks_before,
)


def blank_or_end_at(text: bytes, at: int, spans: list[Span], end: int) -> bool:
    """Whether the text kept from `at` on (`spans` are removed) starts with a blank line
    or with the end of the member list (`end`): a blank line inserted at `at` would be
    one too many."""
    for r in spans:
        if r.begin == at:
            at = r.end
    return is_blank_line(text, at, end) or text[at:end].strip() == b""


def needs_blank_before(text: bytes, at: int, spans: list[Span], body: Span) -> bool:
    """Whether the kept line before `at` (a line start; `spans` are removed) is neither
    blank nor the line of `{`."""
    for r in reversed(spans):
        if r.end == at:
            at = r.begin
    if at != line_start(text, at) or at <= body.begin:
        return False
    prev = line_start(text, at - 1)
    return prev > body.begin and not is_blank_line(text, prev, at)


def outside(spans: list[Span], at: int) -> int:
    """`at`, or the start of the removed span it falls strictly inside."""
    return next((r.begin for r in spans if r.begin < at < r.end), at)


def line_after(text: bytes, core: Span) -> int | None:
    """The start of the line after `core` when nothing follows `core` on its line."""
    if not only_blanks_after(text, core.end):
        return None
    return min(line_end(text, core.end) + 1, len(text))


def join_blank_gaps(text: bytes, spans: list[Span]) -> list[Span]:
    """`spans` (removed text, disjoint) sorted, with the blank lines between two that
    follow each other added to the second: the block brings its own spacing. (Only blank
    lines lie between two removed spans when no kept member is between them.)"""
    out = sorted(spans, key=lambda x: (x.begin, x.end))
    for i in range(1, len(out)):
        a, b = out[i - 1], out[i]
        gap = text[a.end:b.begin]
        if gap.strip() == b"" and gap.count(b"\n") >= 1 and \
                only_blanks_before(text, a.end) and b.begin == line_start(text, b.begin):
            out[i] = Span(a.end, b.end)
    return out


def is_blank_line(text: bytes, pos: int, limit: int) -> bool:
    """Whether the line starting at `pos` ends before `limit` and holds only blanks."""
    end = line_end(text, pos)
    return end < limit and text[pos:end].strip() == b""


def blank_line_follows(text: bytes, pos: int, limit: int) -> bool:
    """Whether `pos` ends its line and the next line is blank and ends before `limit`."""
    return only_blanks_after(text, pos) and \
        is_blank_line(text, min(line_end(text, pos) + 1, len(text)), limit)


def drop_hanging_blanks(text: bytes, body: Span, spans: list[Span],
                         inserts: list[int]) -> list[Span]:
    """`spans` (removed whole lines, sorted, disjoint) widened by one blank line where
    removing them would leave two blank lines in a row, a blank line right after the
    line of `{`, or one right before `}`. Spans the block is inserted into or next to
    (`inserts`) keep their neighbours: the block takes the place of what they held."""
    out: list[Span] = []
    for r in spans:
        whole = r.begin == line_start(text, r.begin) and text[r.end - 1:r.end] == b"\n"
        if not whole or r.begin <= body.begin or any(r.begin <= at <= r.end for at in inserts):
            out.append(r)
            continue
        prev = line_start(text, r.begin - 1)
        blank_before = prev > body.begin and is_blank_line(text, prev, r.begin)
        opens_body = prev <= body.begin
        closes_body = text[r.end:body.end].strip() == b""
        if (blank_before or opens_body) and is_blank_line(text, r.end, body.end):
            r = Span(r.begin, line_end(text, r.end) + 1)
        elif blank_before and closes_body:
            r = Span(prev, r.end)
        out.append(r)
    return merged(out)


def merged(spans: list[Span]) -> list[Span]:
    """`spans` with overlapping or touching ones joined (fields sharing a line with the
    brace and others: the blanks after one are the blanks before the next)."""
    out: list[Span] = []
    for sp in sorted(spans, key=lambda x: (x.begin, x.end)):
        if out and sp.begin <= out[-1].end:
            out[-1] = Span(out[-1].begin, max(out[-1].end, sp.end))
        else:
            out.append(sp)
    return out


def blank_but(text: bytes, begin: int, end: int, spans: list[Span]) -> bool:
    """Whether text[begin:end] is blank once `spans` (removed text) are left out."""
    pos = begin
    for sp in sorted(spans, key=lambda x: x.begin):
        if sp.end <= pos or sp.begin >= end:
            continue
        if text[pos:sp.begin].strip():
            return False
        pos = max(pos, sp.end)
    return not text[pos:end].strip() if pos < end else True
