#!/usr/bin/env python3
"""The reorder-and-compare steps of the Pistachio pipeline (examples/pistachio/Makefile).

  pipeline.py plan    --reorder reorder.json --type tcb_t --out plan.json
  pipeline.py summary --out-dir OUT --type tcb_t --reorder reorder.json --out summary.json
  pipeline.py slowdown PROFILE...

`plan` turns `cachefit reorder --json` output into the layout plan of an optimize-mode build
(docs/layout-plan.md): the new member order and the predicted sizeof, which the build checks.

`summary` measures, from the two QEMU traces (OUT/before.profile.json, OUT/after.profile.json),
the cache lines of the type touched per IPC: each traced invocation is one kernel entry (the
call or the reply of pingpong's round trip), each sequence counts the distinct lines of its
accesses per object role (role 0: the thread that entered the kernel, the sender; role 1: the
other thread touched, the receiver), weighted by how often it occurred. The objects are
2 KiB-aligned, so a byte offset's line in the object is its line in memory. Dirty lines are
lines written. sizeof comes from each kernel's DWARF; the lower bound from the optimizer
(reorder.json). `pingpong_ok` compares pingpong's serial output of the plain boots
(OUT/boot-before.log, OUT/boot-after.log) line by line with the decimal figures (cycles,
microseconds) masked and QEMU's own messages left out. summary.json holds exactly the keys of
issue 8; the per-role figures and the plugin's slowdown go to OUT/details.json. Files are
written atomically. This script reads profiles, logs and ELF files; it never runs QEMU or a
compiler.

`slowdown` prints the plugin's slowdown recorded in traced runs (the backend runs the same
QEMU command without the plugin first), on wall time and on QEMU's CPU time: per run, and the
medians.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.errors import CachefitError, UserError
from cachefit.frontend.dwarf_records import read_record
from cachefit.model.layout_plan import LayoutPlan, RecordPlan, save_plan
from cachefit.model.profile import Access, Profile
from cachefit.model.profile import load as load_profile

ROLES = {0: "sender", 1: "receiver"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
FIGURE = re.compile(r"\d+\.\d+")
QEMU_MESSAGE = re.compile(r"^qemu-system-\S+: ")  # QEMU's own (e.g. "terminating on signal 15")


@dataclass
class LineFigures:
    """Lines touched (and written) per invocation, in total and per object role."""

    invocations: int
    lines: float = 0.0
    dirty: float = 0.0
    by_role: dict[int, list[float]] = field(default_factory=dict)  # role -> [lines, dirty]
    top_sequence_share: float = 0.0
    top_sequence_lines: dict[int, list[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        roles = {ROLES.get(r, f"role{r}"): {"lines": round(v[0], 4), "dirty": round(v[1], 4)}
                 for r, v in sorted(self.by_role.items())}
        top = {ROLES.get(r, f"role{r}"): {"lines": v[0], "dirty": v[1]}
               for r, v in sorted(self.top_sequence_lines.items())}
        return {"invocations": self.invocations, "lines": round(self.lines, 4),
                "dirty": round(self.dirty, 4), "by_role": roles,
                "top_sequence": {"share": round(self.top_sequence_share, 4), "by_role": top}}


def _lines_of(accesses: Iterable[Access], line: int) -> dict[int, tuple[set[int], set[int]]]:
    """role -> (lines touched, lines written) of one sequence."""
    out: dict[int, tuple[set[int], set[int]]] = {}
    for a in accesses:
        touched, written = out.setdefault(a.role, (set(), set()))
        span = range(a.offset // line, (a.offset + max(a.size, 1) - 1) // line + 1)
        touched.update(span)
        if "w" in a.mode:
            written.update(span)
    return out


def measure(profile: Profile, type_name: str) -> LineFigures:
    """Lines of `type_name` touched per invocation in a cachefit profile."""
    line = profile.cache_line
    t = profile.types.get(type_name)
    if t is None:
        raise UserError(f"the profile has no type {type_name}", "trace that type")
    seqs = t.sequences
    counted = sum(s.count for s in seqs)
    if not counted:
        raise UserError(f"the profile has no sequence of {type_name}",
                        "check the phase and the object areas in cachefit.toml")
    fig = LineFigures(invocations=counted)
    for s in seqs:
        for role, (touched, written) in _lines_of(s.accesses, line).items():
            w = s.count / counted
            fig.lines += w * len(touched)
            fig.dirty += w * len(written)
            acc = fig.by_role.setdefault(role, [0.0, 0.0])
            acc[0] += w * len(touched)
            acc[1] += w * len(written)
    top = max(seqs, key=lambda s: s.count)
    fig.top_sequence_share = top.count / counted
    fig.top_sequence_lines = {r: [len(a), len(b)]
                              for r, (a, b) in _lines_of(top.accesses, line).items()}
    return fig


def pingpong_lines(log: Path) -> list[str]:
    """pingpong's serial output (from "Pingpong started"), decimal figures masked."""
    text = ANSI.sub("", log.read_text(errors="replace")).replace("\r", "")
    lines = text.splitlines()
    start = next((i for i, s in enumerate(lines) if s.startswith("Pingpong started")), None)
    if start is None:
        return []
    return [FIGURE.sub("#", s.rstrip()) for s in lines[start:]
            if s.strip() and not QEMU_MESSAGE.match(s)]


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def make_plan(args: argparse.Namespace) -> int:
    data = json.loads(Path(args.reorder).read_text())
    if data.get("type") != args.type or not data.get("new_order"):
        raise UserError(f"{args.reorder}: no new order of {args.type}",
                        "run cachefit reorder --json again")
    plan = LayoutPlan(records={args.type: RecordPlan(tuple(data["new_order"]),
                                                     int(data["size"]["after"]))})
    save_plan(plan, args.out)
    print(f"plan: {args.out}: {args.type} order {', '.join(data['new_order'])}; "
          f"predicted {data['lines']['before']:.3f} -> {data['lines']['after']:.3f} lines "
          f"(lower bound {data['lines']['lower_bound']:.3f}), sizeof "
          f"{data['size']['before']} -> {data['size']['after']}")
    return 0


def summary(args: argparse.Namespace) -> int:
    out_dir = Path(args.out_dir).resolve()
    reorder = json.loads(Path(args.reorder).read_text())
    figures: dict[str, LineFigures] = {}
    sizes: dict[str, int] = {}
    overhead: dict[str, Any] = {}
    for variant in ("before", "after"):
        profile = load_profile(str(out_dir / f"{variant}.profile.json"))
        figures[variant] = measure(profile, args.type)
        sizes[variant] = read_record(str(out_dir / f"kernel-{variant}" / "x86-kernel"),
                                     args.type).size
        q = profile.metadata.get("qemu", {})
        overhead[variant] = {"slowdown": q.get("slowdown"),
                             **profile.metadata.get("overhead", {})}
    logs = {v: out_dir / f"boot-{v}.log" for v in ("before", "after")}
    before_lines, after_lines = (pingpong_lines(logs[v]) for v in ("before", "after"))
    ok = bool(before_lines) and before_lines == after_lines and \
        sum("IPC (" in s for s in before_lines) >= 128
    result = {
        "lines_per_ipc": {"before": round(figures["before"].lines, 4),
                          "after": round(figures["after"].lines, 4),
                          "lower_bound": round(float(reorder["lines"]["lower_bound"]), 4)},
        "dirty_lines_per_ipc": {"before": round(figures["before"].dirty, 4),
                                "after": round(figures["after"].dirty, 4)},
        "sizeof": {"before": sizes["before"], "after": sizes["after"]},
        "pingpong_ok": ok,
        "logs": {v: str(p) for v, p in logs.items()},
    }
    details = {
        "format": "cachefit-pistachio-details", "version": 1,
        "type": args.type,
        "measured": {v: f.to_json() for v, f in figures.items()},
        "predicted": reorder["lines"], "predicted_dirty": reorder["dirty_lines"],
        "new_order": reorder["new_order"], "old_order": reorder["old_order"],
        "constraints": reorder.get("constraints", []),
        "optimizer": {"method": reorder.get("method"), "optimal": reorder.get("optimal"),
                      "seconds": reorder.get("solver_seconds")},
        "overhead": overhead,
        "pingpong_lines_compared": len(before_lines),
    }
    if not ok:
        diff = [(a, b) for a, b in zip(before_lines, after_lines, strict=False) if a != b][:3]
        details["pingpong_mismatch"] = {"before_lines": len(before_lines),
                                        "after_lines": len(after_lines), "first": diff}
    intra = {v: out_dir / f"{v}-intra.profile.json" for v in ("before", "after")}
    if all(p.exists() for p in intra.values()):
        details["measured_intra"] = {v: measure(load_profile(str(p)), args.type).to_json()
                                     for v, p in intra.items()}
    _write_json(out_dir / "details.json", details)
    _write_json(Path(args.out), result)
    for v, f in figures.items():
        roles = ", ".join(f"{ROLES.get(r, f'role {r}')} {x[0]:.3f} (dirty {x[1]:.3f})"
                          for r, x in sorted(f.by_role.items()) if x[0] >= 0.0005)
        print(f"{v:6}: {f.lines:.3f} {args.type} lines per IPC (dirty {f.dirty:.3f}): {roles}; "
              f"sizeof {sizes[v]}")
    print(f"lower bound {result['lines_per_ipc']['lower_bound']}; pingpong output "
          f"{'the same' if ok else 'DIFFERS'} ({len(before_lines)} lines)")
    print(f"summary: {args.out}")
    return 0 if ok else 1


def slowdown(args: argparse.Namespace) -> int:
    """The plugin's slowdown in several traced runs (profile metadata `overhead`)."""
    kinds = {"wall": ("slowdown", "plain_workload_seconds", "traced_workload_seconds"),
             "cpu": ("slowdown_cpu", "plain_workload_cpu_seconds",
                     "traced_workload_cpu_seconds")}
    ratios: dict[str, list[float]] = {k: [] for k in kinds}
    for path in args.profiles:
        meta = load_profile(path).metadata
        o, q = meta.get("overhead", {}), meta.get("qemu", {})
        parts = []
        for kind, (key, plain, traced) in kinds.items():
            if q.get(key) is not None:
                ratios[kind].append(float(q[key]))
                parts.append(f"{kind} {o.get(plain)} s -> {o.get(traced)} s ({q[key]:.2f})")
        print(f"{path}: workload " + "; ".join(parts))
    for kind, values in ratios.items():
        if values:
            values.sort()
            mid = len(values) // 2
            median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
            print(f"workload slowdown ({kind} time) over {len(values)} runs: median "
                  f"{median:.2f}, range {values[0]:.2f}-{values[-1]:.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="action", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--reorder", required=True)
    p.add_argument("--type", required=True)
    p.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--out-dir", required=True)
    s.add_argument("--type", required=True)
    s.add_argument("--reorder", required=True)
    s.add_argument("--out", required=True)
    w = sub.add_parser("slowdown")
    w.add_argument("profiles", nargs="+")
    args = ap.parse_args()
    try:
        if args.action == "slowdown":
            return slowdown(args)
        return make_plan(args) if args.action == "plan" else summary(args)
    except CachefitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
