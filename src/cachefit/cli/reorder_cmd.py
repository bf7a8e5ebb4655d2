"""`cachefit reorder TYPE`: reorder a record's members for a profile (or a given order).

Parses the arguments, loads the profile, runs the analysis (cachefit.reorder.analysis),
the decision (cachefit.reorder.decide) and the rewrite (cachefit.rewrite.apply_order),
showing their stages live on a terminal (cachefit.cli.live_progress; nothing extra
elsewhere), then writes: the rewritten file to stdout, to `-o OUT`, in place, or as a diff;
generated headers; a summary (or `--json`). Everything is computed and verified before the
first byte is written; a refusal writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cachefit.cli.intermixed import add_intermixed_parser
from cachefit.cli.scan_args import add_scan_arguments
from cachefit.errors import UserError

# The work's modules are imported when the command runs, not by --help (issue 29).
if TYPE_CHECKING:
    from cachefit.model import Record
    from cachefit.reorder.analysis import Analysis
    from cachefit.reorder.decide import DecideOptions, OrderDecision
    from cachefit.rewrite.apply_order import AppliedOrder


def register(sub: argparse._SubParsersAction) -> None:
    p = _add_parser(sub)
    p.set_defaults(func=run)


def _add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = add_intermixed_parser(
        sub, "reorder", help="reorder a record's members for a profile and rewrite the source",
        description="Choose the member order of TYPE that touches the fewest cache lines for "
                    "the profile (or apply --order), honouring what the code base relies on "
                    "(offsetof ranges, first-member casts, macro groups, ...), rewrite the "
                    "definition and check the result with the compiler. Refuses (exit 2, "
                    "nothing written) where reordering would change behaviour or an ABI.",
        usage="cachefit reorder TYPE (--profile P | --order SPEC) [FILE...] [-p BUILD_DIR] "
              "[-o OUT | --in-place | --diff] [--object-align N] [--relax-align] "
              "[--pin F]... [--fix-initializers] [--offsets-header FILE] "
              "[--assert-header FILE] [-j N] [--no-scan-cache] [--json] [-- ARGS...]")
    p.add_argument("type", metavar="TYPE", help="record name: tcb, ns::tcb")
    p.add_argument("files", metavar="FILE", nargs="*",
                   help="sources to analyse (the first that defines TYPE is rewritten)")
    p.add_argument("-p", dest="build_dir", help="directory holding compile_commands.json "
                   "(every unit is analysed when no FILE is given)")
    p.add_argument("--profile", metavar="P", help="cachefit profile (JSON, maybe gzipped)")
    p.add_argument("--order", metavar="SPEC",
                   help="apply this order instead of optimizing: a,b,c or 'alphabetical'")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", dest="output", metavar="OUT", help="write the rewritten file here")
    out.add_argument("--in-place", action="store_true", help="rewrite the files in place")
    out.add_argument("--diff", action="store_true", help="print a unified diff (git apply)")
    p.add_argument("--object-align", type=int, metavar="N",
                   help="objects start at multiples of N bytes (default: the record's "
                        "alignment)")
    p.add_argument("--relax-align", action="store_true",
                   help="allow fields below natural alignment where every access allows it")
    p.add_argument("--pin", action="append", default=[], metavar="F",
                   help="keep field F at its offset (repeatable)")
    p.add_argument("--fix-initializers", action="store_true",
                   help="rewrite positional initialisers into designated ones")
    p.add_argument("--offsets-header", metavar="FILE",
                   help="write #define TYPE_FIELD_OFFSET n for assembly")
    p.add_argument("--assert-header", metavar="FILE",
                   help="write static_asserts that pin the new layout")
    p.add_argument("--cache-line", type=int, metavar="N",
                   help="cache-line size (default: the profile's, else 64)")
    p.add_argument("--time-limit", type=float, default=10.0, metavar="S",
                   help="optimizer time limit in seconds (default 10)")
    p.add_argument("--allow-growth", action="store_true",
                   help="let sizeof grow beyond the original rounded up to whole lines")
    p.add_argument("--merge", action="store_true",
                   help="merge sequences by footprint inclusion before solving")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_scan_arguments(p)
    return p


def _take_output_from_passthrough(args: argparse.Namespace) -> None:
    """`-o OUT` after `--` is not a parse option; take it as the output file."""
    rest = list(args.passthrough)
    if "-o" in rest:
        i = rest.index("-o")
        if i + 1 >= len(rest):
            raise UserError("-o needs a file name")
        if args.output or args.in_place or args.diff:
            raise UserError("-o after '--' conflicts with -o/--in-place/--diff",
                            "give the output once, before '--'")
        args.output = rest[i + 1]
        del rest[i:i + 2]
    args.passthrough = rest


def _options(args: argparse.Namespace) -> DecideOptions:
    from cachefit.reorder.decide import DecideOptions

    if args.profile and args.order:
        raise UserError("--profile and --order exclude each other",
                        "use --profile to optimize, --order to apply a given order")
    for name in ("object_align", "cache_line"):
        v = getattr(args, name)
        if v is not None and (v <= 0 or v & (v - 1)):
            raise UserError(f"--{name.replace('_', '-')} {v} is not a power of two",
                            "use e.g. 64")
    return DecideOptions(order=args.order, cache_line=args.cache_line,
                         object_align=args.object_align, relax_align=args.relax_align,
                         pins=tuple(args.pin), fix_initializers=args.fix_initializers,
                         allow_growth=args.allow_growth, time_limit=args.time_limit,
                         merge=args.merge)


@dataclass
class ReorderOutcome:
    """What `cachefit reorder` computed: the decision, the verified new text and the
    generated headers (nothing is written yet)."""

    decision: OrderDecision
    applied: AppliedOrder
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def before(self) -> Record:
        return self.decision.record

    @property
    def after(self) -> Record:
        return self.applied.after

    @property
    def old_order(self) -> list[str]:
        return self.decision.old_order

    @property
    def new_order(self) -> list[str]:
        return list(self.applied.order)

    @property
    def warnings(self) -> list[str]:
        return self.decision.warnings

    def to_json(self) -> dict[str, Any]:
        """docs/reorder.md's `--json` object (without "diff")."""
        d, ap = self.decision, self.applied
        fig = d.figures_json()
        return {
            "type": self.before.name, "file": d.analysis.file,
            "old_order": self.old_order, "new_order": self.new_order,
            "lines": fig["lines"], "dirty_lines": fig["dirty_lines"],
            "size": {"before": self.before.size, "after": self.after.size},
            "optimal": fig["optimal"], "solver_seconds": fig["solver_seconds"],
            "method": fig["method"], "constraints": fig["constraints"],
            "merged": fig["merged"], "relaxed_alignment": fig["relaxed_alignment"],
            "split_declarations": list(ap.split),
            "initializers_fixed": ap.initializers_fixed,
            "changed_files": sorted(f for f in ap.contents
                                    if ap.contents[f] != ap.originals.get(f)),
            "headers": sorted(self.headers),
            "offsets": {f.name: f.offset for f in self.after.fields},
            "bitfield_barriers": fig["bitfield_barriers"],
            "gap": fig["gap"],
            "warnings": d.warnings,
        }


def reorder(analysis: Analysis, opts: DecideOptions, profile_path: str | None,
            offsets_header: str | None = None, assert_header: str | None = None,
            stage: Callable[[str], None] | None = None) -> ReorderOutcome:
    """Decide, apply and verify, and make the headers asked for (writes nothing)."""
    from cachefit.model.profile import load
    from cachefit.reorder.decide import decide
    from cachefit.rewrite.apply_order import apply_order
    from cachefit.rewrite.layout_headers import assert_header as assert_text
    from cachefit.rewrite.layout_headers import offsets_header as offsets_text

    profile = load(profile_path) if profile_path else None
    d = decide(analysis, opts, profile, profile_path or "", stage=stage)
    applied = apply_order(analysis, d.order, attributes=d.attributes, barriers=d.barriers,
                          padding=d.padding, fix_initializers=opts.fix_initializers,
                          expected_size=d.size, predicted_offsets=d.offsets, pins=d.pins,
                          relaxed=d.relaxed,
                          compile_units=True, stage=stage)
    headers: dict[str, str] = {}
    if offsets_header:
        headers[offsets_header] = offsets_text(applied.after, analysis.type_name)
    if assert_header:
        headers[assert_header] = assert_text(applied.after, analysis.type_spelling,
                                             analysis.cxx)
    return ReorderOutcome(d, applied, headers)


def _summary(o: ReorderOutcome) -> str:
    from cachefit.cli.scan_args import scan_summary
    from cachefit.edits import display_path

    r = o.decision.result
    eb, ea = o.decision.eval_before, o.decision.eval_after
    lines = []
    if r is not None:
        lines.append(f"{o.before.name}: {r.lines_before:.2f} -> {r.lines_after:.2f} cache lines "
                     f"per invocation (lower bound {r.lines_lower_bound:.2f}), dirty "
                     f"{r.dirty_before:.2f} -> {r.dirty_after:.2f}; "
                     f"{'optimal' if r.optimal else f'gap {r.gap:.0%}'} ({r.method}, "
                     f"{r.solver_seconds:.1f} s)")
    elif eb is not None and ea is not None:
        lines.append(f"{o.before.name}: given order; {eb.lines:.2f} -> "
                     f"{ea.lines:.2f} cache lines per invocation")
    lines.append(f"sizeof {o.before.size} -> {o.after.size} (checked with the compiler)")
    lines.append("new order: " + ", ".join(o.new_order))
    if o.applied.split:
        lines.append("split declarations: " + ", ".join(o.applied.split))
    if o.applied.initializers_fixed:
        lines.append(f"initialisers rewritten: {o.applied.initializers_fixed}")
    constraints = o.decision.constraints
    lines.append(f"constraints ({len(constraints)}):" if constraints else
                 "constraints: none found")
    for c in constraints:
        lines.append(f"  {c.location or display_path(o.decision.analysis.file)}: "
                     f"{c.describe()}")
    lines.append(scan_summary(o.decision.analysis))
    lines += [f"warning: {w}" for w in o.warnings]
    return "\n".join(lines)


def _unchanged_note(spec: str | None, o: ReorderOutcome) -> str | None:
    """One line for stderr when `--order` gives the current order back (else None)."""
    if spec is None or list(o.new_order) != list(o.old_order):
        return None
    if spec.strip() == "alphabetical":
        why = ("alphabetical order, with the fields that must stay together (one macro "
               "expansion, anonymous struct or declaration) sorted as one item, is the "
               "current order")
    else:
        why = "the given order is the current order"
    return f"cachefit: the order of {o.before.name} is unchanged: {why}; nothing to rewrite"


def run(args: argparse.Namespace) -> int:
    from cachefit.cli.live_progress import StageProgress, terminal_console
    from cachefit.cli.scan_args import scan_options
    from cachefit.edits import display_path, unified_diffs, write_all_atomic
    from cachefit.reorder.analysis import analyse, units_for

    _take_output_from_passthrough(args)
    opts = _options(args)
    units = units_for(args.files, args.build_dir, args.passthrough)
    with StageProgress(terminal_console(), f"reorder {args.type}: ") as shown:
        analysis = analyse(args.type, units, offsets_header=os.path.abspath(
            args.offsets_header) if args.offsets_header else None,
            scan_options=scan_options(args), stage=shown.stage)
        outcome = reorder(analysis, opts, args.profile, args.offsets_header,
                          args.assert_header, stage=shown.stage)
    target = analysis.file
    applied = outcome.applied
    changed = {f: d for f, d in applied.contents.items() if d != applied.originals.get(f)}
    others = sorted(f for f in changed if f != target)
    if others and not (args.in_place or args.diff):
        needed = [f for f in others if f not in applied.cosmetic_files]
        if needed:
            raise UserError("--fix-initializers also changes " + ", ".join(
                display_path(f) for f in needed), "use --in-place or --diff to get every file")
        for f in others:
            outcome.warnings.append(
                f"{display_path(f)} not rewritten: its constructor initialiser lists are no "
                "longer in declaration order (-Wreorder); use --in-place or --diff")
            del changed[f]
    new_text = applied.text_of(target)
    text_on_stdout = not args.json and not args.output and not args.in_place
    # Write: nothing above this line has touched a file; then everything at once.
    outputs: dict[str, bytes] = dict(changed) if args.in_place else {}
    if args.output:
        outputs[args.output] = new_text
    for path, text in outcome.headers.items():
        outputs[path] = text.encode()
    write_all_atomic(outputs)
    diff = unified_diffs(applied.originals, applied.contents) if args.diff else ""
    note = _unchanged_note(args.order, outcome)
    if note:
        print(note, file=sys.stderr)
    if args.json:
        data = outcome.to_json()
        data["file"] = display_path(target)
        data["changed_files"] = [display_path(f) for f in sorted(changed)]
        if args.diff:
            data["diff"] = diff
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    summary = _summary(outcome)
    if args.diff:
        sys.stdout.write(diff)
    elif text_on_stdout:
        sys.stdout.write(new_text.decode("utf-8", errors="surrogateescape"))
    if text_on_stdout or args.diff:
        print(summary, file=sys.stderr)
    else:
        print(summary)
    return 0
