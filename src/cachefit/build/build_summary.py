"""The summary table `cachefit build` prints at the end and keeps as summary.md/summary.json.

Per target type: cache lines touched per invocation before / after / lower bound (from the
optimizer), dirty lines before / after, sizeof before (the record the profile build
compiled, after flattening) and after (read from the optimized binaries' DWARF when the
config names binaries, else the size the plan expects); a type the layout step refused
(a union, a packed record, ...) with the reason and its location; per step: its time. This module
only formats and writes (atomically); it measures nothing. The JSON format is
docs/build-summary.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from cachefit.build.output_tree import write_json
from cachefit.rewrite.edits import write_atomic

SUMMARY_FORMAT = "cachefit-build-summary"   # summary.json, docs/build-summary.md
SUMMARY_VERSION = 1


@dataclass(frozen=True)
class StepTime:
    step: str
    title: str
    seconds: float


@dataclass(frozen=True)
class TypeSummary:
    name: str
    lines_before: float | None
    lines_after: float | None
    lines_lower_bound: float | None
    dirty_before: float | None
    dirty_after: float | None
    size_before: int | None     # None: a refused type the profile has no layout of
    size_after: int | None
    size_after_source: str      # "DWARF", "planned", or "unchanged" (refused)
    refused: str | None = None  # why the layout step left the type as it is (with where)


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _size(v: int | None) -> str:
    return "n/a" if v is None else str(v)


def format_summary(types: Sequence[TypeSummary], steps: Sequence[StepTime]) -> str:
    """Two markdown tables: the types, then the step times."""
    out = []
    if types:
        out += ["| type | lines before | lines after | lower bound | dirty before | "
                "dirty after | sizeof before | sizeof after |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        out += [f"| {t.name} | {_num(t.lines_before)} | {_num(t.lines_after)} | "
                f"{_num(t.lines_lower_bound)} | {_num(t.dirty_before)} | {_num(t.dirty_after)} "
                f"| {_size(t.size_before)} | {_size(t.size_after)} ({t.size_after_source}) |"
                for t in types]
        out.append("")
        out.append("Lines: cache lines touched per invocation of an entry function, averaged "
                   "over the profile (all objects of the type); dirty: lines written.")
        out.append("")
        refused = [t for t in types if t.refused]
        if refused:
            out += ["Refused (layout unchanged):", ""]
            out += [f"- {t.name}: {t.refused}" for t in refused]
            out.append("")
    if steps:
        out += ["| step | seconds |", "| --- | ---: |"]
        out += [f"| {s.title} | {s.seconds:.1f} |" for s in steps]
        out.append(f"| total | {sum(s.seconds for s in steps):.1f} |")
    return "\n".join(out)


def write_summary(md_path: Path, json_path: Path, types: Sequence[TypeSummary],
                  steps: Sequence[StepTime], notes: Sequence[str]) -> None:
    text = "# cachefit build\n\n" + format_summary(types, steps) + "\n"
    if notes:
        text += "\n" + "\n".join(f"Note: {n}" for n in notes) + "\n"
    md_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(str(md_path), text.encode())
    write_json(json_path, {"format": SUMMARY_FORMAT, "version": SUMMARY_VERSION,
                           "types": [asdict(t) for t in types],
                           "steps": [asdict(s) for s in steps], "notes": list(notes)})
