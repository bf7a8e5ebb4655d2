"""Assemble the report of a profile and write it: `build_reports` computes the per-type
reports, `write_reports` writes `report.txt` and `report.html` into a directory (used by
`cachefit build`), `write_atomic` writes any output file through a temporary file and a
rename so no half-written report is ever left. Errors are `UserError`s; nothing is printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.atomic_files import save_output
from cachefit.errors import CachefitError, Location, UserError
from cachefit.model.layout_plan import load_plan
from cachefit.model.profile import Profile, load
from cachefit.model.project_config import load_entry_weights, load_reorder_config
from cachefit.report.html_report import render_html
from cachefit.report.record_lookup import find_record
from cachefit.report.terminal_report import render_text
from cachefit.report.type_report import (
    AfterChoice,
    SkippedType,
    TypeReport,
    build_type_report,
)


@dataclass(frozen=True)
class ReportOptions:
    """What `cachefit report` was asked for (see docs/report.md)."""

    types: tuple[str, ...] = ()
    plan_path: str | None = None
    binary: str | None = None
    optimized_binary: str | None = None
    top: int = 4
    object_align: int | None = None
    cache_line: int | None = None
    time_limit: float = 5.0
    strict: bool = True
    """Whether a named type that cannot be analysed is an error (else listed as skipped)."""
    entry_weights: dict[str, float] | None = None
    """The kinds' weights (`[layout] entry_weights`); None: read the project file's."""
    sharing_weight: float | None = None
    """The weight of line transfers between threads (`[layout] sharing_weight`); None:
    read the project file's."""


def select_types(profile: Profile, wanted: Sequence[str], source: str) -> list[str]:
    """The types to report (the profile's names), in name order; an unknown name is a
    `UserError` listing them."""
    names = [profile.name_of(name) for name in wanted]
    for name, have in zip(wanted, names, strict=True):
        if have is None:
            raise UserError(f"the profile has no type {name}",
                            f"traced types: {', '.join(sorted(profile.types)) or 'none'}",
                            Location(source))
    return list(dict.fromkeys(n for n in names if n)) if wanted else sorted(profile.types)


def build_reports(profile: Profile, source: str, opts: ReportOptions
                  ) -> tuple[list[TypeReport], list[SkippedType]]:
    """One `TypeReport` per selected type. A type named with `types` must succeed (its
    error propagates) when `strict`; otherwise a type that fails is listed as skipped."""
    names = select_types(profile, opts.types, source)
    if opts.top < 1:
        raise UserError(f"--top {opts.top} must be at least 1")
    plan = load_plan(opts.plan_path).records if opts.plan_path else {}
    cache_line = opts.cache_line or profile.cache_line
    programs = [str(p) for p in profile.metadata.get("programs", [])]
    weights = opts.entry_weights if opts.entry_weights is not None else load_entry_weights()
    sharing_weight = (opts.sharing_weight if opts.sharing_weight is not None
                      else load_reorder_config().sharing_weight)
    reports: list[TypeReport] = []
    skipped: list[SkippedType] = []
    for name in names:
        tp = profile.types[name]
        planned = plan.get(name)
        if planned is not None:
            choice = AfterChoice(planned.order, str(opts.plan_path), planned.expected_size,
                                 plan_padding=planned.padding)
        else:
            choice = AfterChoice(time_limit=opts.time_limit)
        try:
            found = find_record(tp, binary=opts.binary, programs=programs)
            after = None
            if opts.optimized_binary:
                after = find_record(tp, binary=opts.optimized_binary, programs=[])
            reports.append(build_type_report(tp, found, cache_line=cache_line,
                                             object_align=opts.object_align, choice=choice,
                                             after_record=after,
                                             entry_weights=weights or None,
                                             sharing_weight=sharing_weight))
        except CachefitError as exc:
            if opts.types and opts.strict:
                raise
            skipped.append(SkippedType(name, f"{exc.what}; {exc.todo}" if exc.todo
                                       else exc.what))
    return reports, skipped


def write_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same directory and a rename."""
    save_output(path, text.encode("utf-8"))


def render_reports(profile_path: str | Path, opts: ReportOptions
                   ) -> tuple[str, str, list[TypeReport]]:
    """(terminal text, HTML, reports) of the profile at `profile_path`."""
    profile = load(profile_path)
    reports, skipped = build_reports(profile, str(profile_path), opts)
    title = str(profile_path)
    return (render_text(profile, reports, skipped, title=title, top=opts.top),
            render_html(profile, reports, skipped, title=title, top=opts.top), reports)


def write_reports(profile_path: str | Path, out_dir: str | Path,
                  plan_path: str | Path | None = None,
                  types: Sequence[str] | None = None, *, binary: str | None = None,
                  optimized_binary: str | None = None, object_align: int | None = None,
                  cache_line: int | None = None, top: int = 4,
                  time_limit: float = 5.0) -> list[Path]:
    """Write `report.txt` and `report.html` for the profile into `out_dir`; return the paths.

    `plan_path`: the layout plan whose orders are "after" (else the optimizer's orders);
    `binary`: an ELF with the traced layout (default: the profile's programs);
    `optimized_binary`: an ELF built with the new layouts, whose offsets then replace the
    predicted ones; the other options are those of `cachefit report`. A type that cannot
    be analysed is listed as skipped in both files rather than failing the whole report."""
    opts = ReportOptions(types=tuple(types or ()),
                         plan_path=str(plan_path) if plan_path is not None else None,
                         binary=binary, optimized_binary=optimized_binary, top=top,
                         object_align=object_align, cache_line=cache_line,
                         time_limit=time_limit, strict=False)
    text, html, _ = render_reports(profile_path, opts)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.txt", out / "report.html"]
    write_atomic(paths[0], text)
    write_atomic(paths[1], html)
    return paths
