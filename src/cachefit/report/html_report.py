"""The self-contained HTML report of a profile: per type, paper 000's Figure 4 for the old and
the new layout side by side (heaviest sequences), and a pahole-style per-field heat map.

Presentation only: it receives the profile's type entry and, optionally, the new field offsets
the optimizer chose; it maps accesses from the traced layout to a layout by field name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from cachefit.report.access_figure import PlacedAccess, access_svg


@dataclass(frozen=True)
class FieldHeat:
    name: str
    offset: int
    size: int
    reads: int
    writes: int


def field_at(fields: Sequence[Mapping[str, Any]], offset: int,
             size: int) -> Mapping[str, Any] | None:
    """The traced field an access overlaps first (None when it falls in padding)."""
    for f in fields:
        if offset < f["offset"] + max(f["size"], 1) and f["offset"] < offset + max(size, 1):
            return f
    return None


def place(ptype: Mapping[str, Any], accesses: Sequence[Sequence[Any]],
          new_offsets: Mapping[str, int] | None) -> list[PlacedAccess]:
    """Accesses as they fall in the traced layout, or moved with their field to `new_offsets`."""
    fields = ptype["fields"]
    placed = []
    for role, offset, size, mode in accesses:
        f = field_at(fields, offset, size)
        name = f["name"] if f else "(padding)"
        if new_offsets is not None and f is not None and name in new_offsets:
            offset = new_offsets[name] + (offset - f["offset"])
        placed.append(PlacedAccess(int(role), int(offset), int(size), str(mode), name))
    return placed


def field_heat(ptype: Mapping[str, Any]) -> list[FieldHeat]:
    """Reads and writes per traced field, weighted by sequence counts, in offset order."""
    counts: dict[str, list[int]] = {f["name"]: [0, 0] for f in ptype["fields"]}
    for seq in ptype["sequences"]:
        for _, offset, size, mode in seq["accesses"]:
            f = field_at(ptype["fields"], offset, size)
            if f is not None:
                counts[f["name"]][1 if mode == "w" else 0] += int(seq["count"])
    return [FieldHeat(f["name"], f["offset"], f["size"], *counts[f["name"]])
            for f in sorted(ptype["fields"], key=lambda f: f["offset"])]


def _heat_table(heat: Sequence[FieldHeat], cache_line: int) -> str:
    peak = max((h.reads + h.writes for h in heat), default=0) or 1
    rows = []
    line = -1
    for h in heat:
        if h.offset // cache_line != line:
            line = h.offset // cache_line
            rows.append(f'<tr class="boundary"><td colspan="5">— cacheline {line} '
                        f'({line * cache_line} bytes) —</td></tr>')
        share = (h.reads + h.writes) / peak
        colour = f"rgba(214,39,40,{0.08 + 0.8 * share:.2f})" if h.reads + h.writes else "#fff"
        rows.append(f'<tr style="background:{colour}"><td>{escape(h.name)}</td>'
                    f"<td>{h.offset}</td><td>{h.size}</td><td>{h.reads}</td>"
                    f"<td>{h.writes}</td></tr>")
    return ('<table class="heat"><tr><th>field</th><th>offset</th><th>size</th><th>reads</th>'
            "<th>writes</th></tr>" + "".join(rows) + "</table>")


def render_html(profile: Mapping[str, Any], new_offsets: Mapping[str, Mapping[str, int]],
                summaries: Mapping[str, str], max_sequences: int = 4) -> str:
    """The whole report; `new_offsets[type]` holds the optimised offsets, `summaries[type]` a
    short text (lines before/after/lower bound)."""
    cache_line = int(profile.get("cache_line", 64))
    body = [f"<h1>cachefit report</h1><p>{int(profile.get('invocations', 0))} invocations; "
            f"cache line {cache_line} bytes.</p>"]
    for tname, ptype in profile["types"].items():
        body.append(f"<h2>{escape(tname)} ({ptype['size']} bytes)</h2>")
        if tname in summaries:
            body.append(f"<p>{escape(summaries[tname])}</p>")
        seqs = sorted(ptype["sequences"], key=lambda s: -int(s["count"]))[:max_sequences]
        new = new_offsets.get(tname)
        new_size = max((new[f["name"]] + f["size"] for f in ptype["fields"]
                        if new and f["name"] in new), default=ptype["size"])
        for k, seq in enumerate(seqs):
            old_svg = access_svg(f"sequence {k + 1} (×{seq['count']}): traced layout",
                                 place(ptype, seq["accesses"], None), ptype["size"], cache_line)
            cells = [f'<div class="fig">{old_svg}</div>']
            if new is not None:
                new_svg = access_svg(f"sequence {k + 1} (×{seq['count']}): new layout",
                                     place(ptype, seq["accesses"], new),
                                     max(new_size, ptype["size"]), cache_line)
                cells.append(f'<div class="fig">{new_svg}</div>')
            body.append('<div class="row">' + "".join(cells) + "</div>")
        body.append("<h3>Field heat map (traced layout)</h3>")
        body.append(_heat_table(field_heat(ptype), cache_line))
    style = ("body{font-family:sans-serif;margin:24px;color:#222}"
             ".row{display:flex;gap:16px;flex-wrap:wrap;margin-bottom:12px}"
             ".fig{border:1px solid #ddd;padding:4px}"
             "table.heat{border-collapse:collapse;font-family:monospace;font-size:12px}"
             "table.heat td,table.heat th{padding:2px 8px;border-bottom:1px solid #eee}"
             "tr.boundary td{color:#888;font-style:italic}")
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>cachefit report</title>"
            f"<style>{style}</style></head><body>" + "\n".join(body) + "</body></html>\n")
