"""SVG drawing of paper 000's Figure 4: a sequence's accesses over time against the object's
bytes, with cache-line boundaries, reads and writes marked, one colour per object role.

Pure presentation: takes accesses already mapped to byte offsets of one layout and returns SVG
text. It reads no files and computes no layouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

ROLE_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                "#e377c2", "#17becf"]


@dataclass(frozen=True)
class PlacedAccess:
    """One access in time order: role, byte offset in the layout drawn, size, 'r' or 'w'."""

    role: int
    offset: int
    size: int
    mode: str
    field: str


def access_svg(title: str, accesses: Sequence[PlacedAccess], object_size: int,
               cache_line: int = 64, width: int = 460, height: int = 360) -> str:
    """An SVG plot: x = access number, y = byte offset (0 at the top), lines drawn dashed."""
    left, top, right, bottom = 56, 28, 12, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(len(accesses), 1)
    ymax = max(object_size, 1)

    def y(offset: float) -> float:
        return top + plot_h * offset / ymax

    def x(i: float) -> float:
        return left + plot_w * (i + 0.5) / n

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
             f'<text x="{left}" y="16" font-size="13" font-family="sans-serif">'
             f'{escape(title)}</text>',
             f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
             f'stroke="#444"/>']
    touched_lines: set[tuple[int, int]] = set()
    for a in accesses:
        for line in range(a.offset // cache_line, (a.offset + max(a.size, 1) - 1) // cache_line
                          + 1):
            touched_lines.add((a.role, line))
    for line in range(0, (object_size + cache_line - 1) // cache_line + 1):
        off = min(line * cache_line, object_size)
        if any(ln == line for _, ln in touched_lines) and line * cache_line < object_size:
            h = y(min((line + 1) * cache_line, object_size)) - y(off)
            parts.append(f'<rect x="{left}" y="{y(off):.1f}" width="{plot_w}" '
                         f'height="{h:.1f}" fill="#fff3c4"/>')
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(off):.1f}" '
                     f'y2="{y(off):.1f}" stroke="#888" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{left - 6}" y="{y(off) + 4:.1f}" font-size="10" '
                     f'text-anchor="end" font-family="sans-serif">{off}</text>')
    bar_w = max(2.0, min(12.0, plot_w / n * 0.7))
    for i, a in enumerate(accesses):
        colour = ROLE_COLOURS[a.role % len(ROLE_COLOURS)]
        y0, y1 = y(a.offset), y(a.offset + max(a.size, 1))
        fill = colour if a.mode == "w" else "#ffffff"
        parts.append(
            f'<rect x="{x(i) - bar_w / 2:.1f}" y="{y0:.1f}" width="{bar_w:.1f}" '
            f'height="{max(y1 - y0, 2):.1f}" fill="{fill}" stroke="{colour}" stroke-width="1.5">'
            f'<title>#{i} role {a.role} {"write" if a.mode == "w" else "read"} {escape(a.field)}'
            f' @{a.offset}+{a.size}</title></rect>')
    lines = len(touched_lines)
    parts.append(f'<text x="{left}" y="{height - 10}" font-size="11" font-family="sans-serif">'
                 f'access number → ({len(accesses)} accesses, {lines} role×line pairs touched; '
                 f'filled = write, hollow = read)</text>')
    parts.append("</svg>")
    return "\n".join(parts)
