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

from cachefit.edits import write_atomic
from cachefit.pipeline.output_tree import write_json

SUMMARY_FORMAT = "cachefit-build-summary"   # summary.json, docs/build-summary.md
SUMMARY_VERSION = 1


@dataclass(frozen=True)
class StepTime:
    step: str
    title: str
    seconds: float


@dataclass(frozen=True)
class KindSummary:
    """One kind of operation (entry function; None for a profile without kinds) of a type:
    lines per invocation before and after (the layout step's), and measured by the retrace
    step (None when it did not run). `invocations`: counted in the profile;
    `measured_invocations`: in the retrace's."""

    entry: str | None
    invocations: int | None
    lines_before: float | None
    lines_after: float | None
    lines_measured: float | None
    dirty_before: float | None
    dirty_after: float | None
    dirty_measured: float | None
    measured_invocations: int | None = None


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
    lines_measured: float | None = None    # the retrace step's (issue 26), else None
    dirty_measured: float | None = None
    kinds: tuple[KindSummary, ...] = ()


def _num(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _size(v: int | None) -> str:
    return "n/a" if v is None else str(v)


def format_summary(types: Sequence[TypeSummary], steps: Sequence[StepTime]) -> str:
    """Two markdown tables: the types, then the step times."""
    out = []
    if types:
        measured = any(t.lines_measured is not None for t in types)
        extra = " measured after | measured dirty after |" if measured else ""
        out += ["| type | lines before | lines after | lower bound | dirty before | "
                "dirty after | sizeof before | sizeof after |" + extra,
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" +
                (" ---: | ---: |" if measured else "")]
        out += [f"| {t.name} | {_num(t.lines_before)} | {_num(t.lines_after)} | "
                f"{_num(t.lines_lower_bound)} | {_num(t.dirty_before)} | {_num(t.dirty_after)} "
                f"| {_size(t.size_before)} | {_size(t.size_after)} ({t.size_after_source}) |"
                + (f" {_num(t.lines_measured)} | {_num(t.dirty_measured)} |" if measured
                   else "")
                for t in types]
        out.append("")
        out.append("Lines: cache lines touched per invocation of an entry function, averaged "
                   "over the profile (all objects of the type); dirty: lines written.")
        if measured:
            out.append("Measured after: the same figures of the planned layout, traced by the "
                       "retrace step at the objects' observed alignment.")
        out.append("")
        kinds = [(t, k) for t in types for k in t.kinds if k.entry is not None]
        if measured and kinds:
            out += ["| type | kind | invocations | lines before | lines after | measured after "
                    "| dirty before | dirty after | measured dirty after |",
                    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            out += [f"| {t.name} | {k.entry} | {_size(k.invocations)} | "
                    f"{_num(k.lines_before)} | {_num(k.lines_after)} | "
                    f"{_num(k.lines_measured)} | {_num(k.dirty_before)} | "
                    f"{_num(k.dirty_after)} | {_num(k.dirty_measured)} |" for t, k in kinds]
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
