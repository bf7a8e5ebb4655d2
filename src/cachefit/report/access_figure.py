"""SVG drawing of paper 000's Figure 4: a sequence's accesses in time order (x) against the
object's bytes (y, offset 0 at the top), cache-line boundaries drawn, lines touched shaded,
writes filled and reads hollow (and lettered W/R when there is room), one colour per object
role. The vertical scale follows the number of cache lines, so a 600-byte record and a
4 KiB one are both legible.

Pure presentation: it takes marks already placed in one layout and returns SVG text. It
reads no files and computes no layouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

ROLE_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                "#e377c2", "#17becf"]
MIN_PLOT_HEIGHT = 160
TARGET_PLOT_HEIGHT = 360
MIN_LINE_PX = 10
MAX_LINE_PX = 48
LABEL_PX = 12


@dataclass(frozen=True)
class FigureMark:
    """One access (or the piece of one that falls in one field) in one layout."""

    index: int
    role: int
    offset: int
    size: int
    mode: str
    label: str


def role_colour(role: int) -> str:
    return ROLE_COLOURS[role % len(ROLE_COLOURS)]


def plot_height(object_size: int, cache_line: int) -> int:
    """Pixels for the byte axis: 10 to 48 per cache line, about 360 in all when possible."""
    lines = max(1, -(-object_size // cache_line))
    per_line = min(MAX_LINE_PX, max(MIN_LINE_PX, TARGET_PLOT_HEIGHT / lines))
    return max(MIN_PLOT_HEIGHT, round(per_line * lines))


def access_svg(title: str, marks: Sequence[FigureMark], accesses: int, object_size: int,
               cache_line: int = 64, width: int = 520, subtitle: str = "",
               axis_size: int = 0) -> str:
    """The figure; `accesses` is the number of accesses (x positions) of the sequence.

    `axis_size` (when larger than `object_size`) extends the byte axis, so figures of two
    layouts of different sizes share one scale; bytes past the object are greyed."""
    left, top, right, bottom = 64, 44, 14, 40
    axis = max(object_size, axis_size, 1)
    plot_w = width - left - right
    plot_h = plot_height(axis, cache_line)
    height = top + plot_h + bottom
    n = max(accesses, 1)
    ymax = axis
    n_lines = max(1, -(-object_size // cache_line))
    line_px = plot_h * cache_line / ymax
    label_every = max(1, -(-LABEL_PX // max(int(line_px), 1)))

    def y(offset: float) -> float:
        return top + plot_h * offset / ymax

    def x(i: float) -> float:
        return left + plot_w * (i + 0.5) / n

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
             f'<text x="{left}" y="16" font-size="13" font-weight="bold" '
             f'font-family="sans-serif">{escape(title)}</text>',
             f'<text x="{left}" y="32" font-size="11" font-family="sans-serif">'
             f'{escape(subtitle)}</text>',
             f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
             f'stroke="#444"/>']
    if axis > object_size:
        parts.append(f'<rect x="{left}" y="{y(object_size):.1f}" width="{plot_w}" '
                     f'height="{y(axis) - y(object_size):.1f}" fill="#dddddd">'
                     "<title>past the end of the object</title></rect>")
    touched: set[int] = set()
    for m in marks:
        touched.update(range(m.offset // cache_line,
                             (m.offset + max(m.size, 1) - 1) // cache_line + 1))
    for line in sorted(touched):
        if line * cache_line >= object_size:
            continue
        y0, y1 = y(line * cache_line), y(min((line + 1) * cache_line, object_size))
        parts.append(f'<rect x="{left}" y="{y0:.1f}" width="{plot_w}" height="{y1 - y0:.1f}" '
                     f'fill="#fff3c4"><title>cache line {line} touched</title></rect>')
    for line in range(0, n_lines + 1):
        off = min(line * cache_line, object_size)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(off):.1f}" '
                     f'y2="{y(off):.1f}" stroke="#888" stroke-dasharray="4 3"/>')
        near_end = off != object_size and y(object_size) - y(off) < LABEL_PX
        if (line % label_every == 0 and not near_end) or off == object_size:
            parts.append(f'<text x="{left - 6}" y="{y(off) + 4:.1f}" font-size="10" '
                         f'text-anchor="end" font-family="sans-serif">{off}</text>')
    bar_w = max(1.0, min(12.0, plot_w / n * 0.7))
    lettered = plot_w / n >= 9
    for m in marks:
        colour = role_colour(m.role)
        y0, y1 = y(m.offset), y(m.offset + max(m.size, 1))
        fill = colour if m.mode == "w" else "#ffffff"
        what = "write" if m.mode == "w" else "read"
        parts.append(
            f'<rect x="{x(m.index) - bar_w / 2:.1f}" y="{y0:.1f}" width="{bar_w:.1f}" '
            f'height="{max(y1 - y0, 2):.1f}" fill="{fill}" stroke="{colour}" '
            f'stroke-width="1.5"><title>#{m.index} object {m.role} {what} '
            f'{escape(m.label)} @{m.offset}+{m.size}</title></rect>')
        if lettered:
            parts.append(f'<text x="{x(m.index):.1f}" y="{max(y0 - 2, top + 8):.1f}" '
                         f'font-size="8" text-anchor="middle" fill="{colour}" '
                         f'font-family="sans-serif">{"W" if m.mode == "w" else "R"}</text>')
    roles = sorted({m.role for m in marks})
    legend_x = left
    legend_y = height - 12
    parts.append(f'<text x="{legend_x}" y="{height - 26}" font-size="11" '
                 f'font-family="sans-serif">access number (time) → {accesses} accesses; '
                 f'filled = write, hollow = read</text>')
    for r in roles:
        parts.append(f'<rect x="{legend_x}" y="{legend_y - 9}" width="10" height="10" '
                     f'fill="{role_colour(r)}"/>')
        parts.append(f'<text x="{legend_x + 14}" y="{legend_y}" font-size="11" '
                     f'font-family="sans-serif">object {r}</text>')
        legend_x += 72
    parts.append("</svg>")
    return "\n".join(parts)
