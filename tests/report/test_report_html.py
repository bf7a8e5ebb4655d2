"""The HTML report: well-formed (html.parser; every SVG parsed as XML), self-contained, both
layouts drawn for the heaviest sequences, every field in the heat maps with the right
counts, and figure scales that stay legible from a few lines to a 4 KiB record."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_helpers import FIELDS, ObjCase

from cachefit.cli.main import main
from cachefit.model.profile import FieldSpan, TypeProfile
from cachefit.report import write_reports
from cachefit.report.access_figure import FigureMark, access_svg
from cachefit.report.field_heat import holes
from cachefit.report.layout_view import make_view

SVG = "{http://www.w3.org/2000/svg}"
VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "wbr"}


class Checker(HTMLParser):
    """Balanced tags; the cells of every heat-map table, by table."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag == "table" and ("class", "heat") in attrs:
            self.tables.append([])
        elif tag == "tr" and self.tables and "table" in self.stack:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def render(obj_case: ObjCase, tmp_path: Path, *extra: str) -> str:
    out = tmp_path / "r.html"
    assert main(["report", str(obj_case.profile), "--type", "obj", "--binary",
                 str(obj_case.binary), "--layouts", str(obj_case.plan), "--object-align",
                 "64", "--html", str(out), *extra]) == 0
    return out.read_text()


def test_html_is_well_formed_and_self_contained(obj_case: ObjCase, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    html = render(obj_case, tmp_path)
    checker = Checker()
    checker.feed(html)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    assert len(svgs) == 4   # 2 sequences x (old, new)
    roots = [ET.fromstring(s) for s in svgs]
    assert all(r.tag == f"{SVG}svg" for r in roots)
    for bad in ("<script", "src=", "href=", "url(", "@import", "<link"):
        assert bad not in html
    assert re.findall(r"https?://[^\"']*", html) == ["http://www.w3.org/2000/svg"] * 4


def test_html_shows_both_layouts_and_every_field(obj_case: ObjCase, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    html = render(obj_case, tmp_path)
    svgs = [ET.fromstring(s) for s in re.findall(r"<svg\b.*?</svg>", html, re.S)]
    titles = [s.get("aria-label") or "" for s in svgs]
    assert sum("old layout" in t for t in titles) == 2
    assert sum("new layout (predicted offsets)" in t for t in titles) == 2
    # The write of c by object 1 is drawn at its traced offset and at the plan's offset.
    marks = [t.text or "" for s in svgs for t in s.iter(f"{SVG}title")]
    assert "#3 object 1 write c @128+8" in marks and "#3 object 1 write c @72+8" in marks
    checker = Checker()
    checker.feed(html)
    old, new = checker.tables
    names = {n for n, _, _ in FIELDS}
    for table, offsets in ((old, {n: o for n, o, _ in FIELDS}),
                           (new, {"a": 0, "b": 8, "pad1": 16, "c": 72, "d": 80, "pad2": 88,
                                  "pad3": 144, "pad4": 200})):
        rows = {r[2]: r for r in table if len(r) == 7}
        assert set(rows) == names
        assert {n: int(rows[n][0]) for n in names} == offsets
        # offset, size, name, reads, writes, invocations touching, line
        assert rows["a"][3:6] == ["10", "5", "50.0%"]
        assert rows["c"][3:6] == ["0", "5", "50.0%"]
        assert rows["d"][3:6] == ["5", "0", "50.0%"]
        assert rows["pad2"][3:6] == ["0", "0", "0.0%"]
    line_rows = [r[0] for r in old if len(r) == 1]
    assert line_rows == [
        "cache line 0 (bytes 0–63): touched in 50.0% of invocations, written in 50.0%",
        "cache line 1 (bytes 64–127): touched in 50.0% of invocations, written in 50.0%",
        "cache line 2 (bytes 128–191): touched in 50.0% of invocations, written in 50.0%",
        "cache line 3 (bytes 192–255): touched in 50.0% of invocations, written in 0.0%"]
    new_lines = [r[0] for r in new if len(r) == 1]
    assert new_lines[1].startswith("cache line 1 (bytes 64–127): touched in 100.0%")
    assert "2.50" in html and "2.00*" in html     # summary table, predicted marked


def test_holes_are_listed() -> None:
    tp = TypeProfile("h", 24, [FieldSpan("c", 0, 1), FieldSpan("x", 8, 8),
                               FieldSpan("s", 16, 2)])
    view = make_view("before", tp, {}, 24, "test", False)
    assert [(h.offset, h.size) for h in holes(view)] == [(1, 7), (18, 6)]
    moved = make_view("after", tp, {"x": 0, "c": 8, "s": 10}, 16, "test", True)
    assert [(h.offset, h.size) for h in holes(moved)] == [(9, 1), (12, 4)]


@pytest.mark.parametrize(("size", "lines"), [(600, 10), (4096, 64)])
def test_figure_scale_is_legible(size: int, lines: int) -> None:
    marks = [FigureMark(0, 0, 0, 8, "r", "first"), FigureMark(1, 1, size - 1, 1, "w", "last")]
    root = ET.fromstring(access_svg("t", marks, 2, size, 64))
    height = float(root.get("height") or 0)
    assert 300 <= height <= 1000
    dashed = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray")]
    assert len(dashed) == lines + 1
    ys = sorted(float(ln.get("y1") or 0) for ln in dashed)
    assert min(b - a for a, b in zip(ys, ys[1:], strict=False)) >= 9.9
    labels = sorted(float(t.get("y") or 0) for t in root.iter(f"{SVG}text")
                    if t.get("text-anchor") == "end")
    assert len(labels) >= 6
    assert min(b - a for a, b in zip(labels, labels[1:], strict=False)) >= 12
    last = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None
            and "last" in (r.find(f"{SVG}title").text or "")]   # type: ignore[union-attr]
    assert len(last) == 1
    y, h = float(last[0].get("y") or 0), float(last[0].get("height") or 0)
    assert h >= 2 and y + h <= ys[-1] + 2.5


def test_write_reports_writes_text_and_html(obj_case: ObjCase, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    paths = write_reports(obj_case.profile, out, obj_case.plan, ["obj"],
                          binary=str(obj_case.binary))
    assert paths == [out / "report.txt", out / "report.html"]
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.txt"]
    assert main(["report", str(obj_case.profile), "--type", "obj", "--binary",
                 str(obj_case.binary), "--layouts", str(obj_case.plan)]) == 0
    assert paths[0].read_text() == capsys.readouterr().out
    assert paths[1].read_text().startswith("<!DOCTYPE html>")


def test_write_reports_lists_a_type_it_cannot_analyse(obj_case: ObjCase,
                                                      tmp_path: Path) -> None:
    # As `cachefit build` calls it: every target type, one of which obj.o lacks.
    txt, html = write_reports(obj_case.profile, tmp_path / "out", obj_case.plan,
                              ["obj", "other"], binary=str(obj_case.binary),
                              object_align=64)
    text = txt.read_text()
    assert "lines per invocation          2.50      2.00         1.50" in text
    assert "type other: not analysed: no record named 'other'" in text
    assert "other: not analysed" in html.read_text()
