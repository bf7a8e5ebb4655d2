"""Byte-level helpers over a source file's text: spans, lines and libclang tokens with offsets.

Everything here works on the file's bytes (libclang reports byte offsets), answers questions
about where lines begin and end and whether only blanks surround a position, and wraps
libclang tokens with their offsets. It does not interpret C or C++; the cursors and tokens
libclang produced do that.
"""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

_BLANKS = b" \t\r\f\v"


@dataclass(frozen=True, order=True)
class Span:
    """A half-open byte range [begin, end) of one file."""

    begin: int
    end: int

    def contains(self, other: Span) -> bool:
        return self.begin <= other.begin and other.end <= self.end

    def text(self, source: bytes) -> bytes:
        return source[self.begin:self.end]


@dataclass(frozen=True)
class Tok:
    """A libclang token with its byte offsets in its file: the one token type of every
    stage (the reorder and rewrite readers, flattening)."""

    kind: str          # ci.TokenKind's name: PUNCTUATION, KEYWORD, IDENTIFIER, LITERAL, COMMENT
    spelling: str
    begin: int
    end: int

    @property
    def is_punct(self) -> bool:
        return self.kind == "PUNCTUATION"


def tokens_of(cursor: ci.Cursor) -> list[Tok]:
    """The tokens (comments included) of a cursor's extent, in order."""
    out = []
    for t in cursor.get_tokens():
        ext = t.extent
        out.append(Tok(t.kind.name, t.spelling, ext.start.offset, ext.end.offset))
    return out


def line_start(text: bytes, pos: int) -> int:
    """Offset of the first byte of the line holding `pos`."""
    return text.rfind(b"\n", 0, pos) + 1


def line_end(text: bytes, pos: int) -> int:
    """Offset of the newline ending the line holding `pos` (or len(text))."""
    nl = text.find(b"\n", pos)
    return len(text) if nl < 0 else nl


def only_blanks_before(text: bytes, pos: int) -> bool:
    """Whether only spaces/tabs precede `pos` on its line."""
    return text[line_start(text, pos):pos].strip(_BLANKS) == b""


def only_blanks_after(text: bytes, pos: int) -> bool:
    """Whether only spaces/tabs follow `pos` up to the end of its line."""
    return text[pos:line_end(text, pos)].strip(_BLANKS) == b""


def indentation(text: bytes, pos: int) -> bytes:
    """The leading blanks of the line holding `pos`."""
    start = line_start(text, pos)
    end = start
    while end < len(text) and text[end:end + 1] in (b" ", b"\t"):
        end += 1
    return text[start:end]


def skip_blanks(text: bytes, pos: int) -> int:
    """The first offset at or after `pos` that is not a space or tab."""
    while pos < len(text) and text[pos:pos + 1] in (b" ", b"\t"):
        pos += 1
    return pos


def blank_line_before(text: bytes, pos: int) -> bool:
    """Whether the line before the line holding `pos` is empty or blank."""
    start = line_start(text, pos)
    if start == 0:
        return False
    prev = line_start(text, start - 1)
    return text[prev:start - 1].strip(_BLANKS) == b""


def offset_to_line_col(text: bytes, pos: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of `pos`."""
    line = text.count(b"\n", 0, pos) + 1
    return line, pos - line_start(text, pos) + 1
