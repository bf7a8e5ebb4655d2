#!/usr/bin/env python3
"""Markdown tables from a run_bench.py --json file (docs/trace-bench-results.md, version 2).

Prints, for RESULTS.md: the slowdown table (CPU medians and per-round ratios with their
spread), the DHAT comparison (per-round median, interquartile range, range, ratio of
medians, wall), the start-up and long-run table, and one verdict line per target and
workload. Usage: results_table.py RESULTS.json. It only reads the file and prints.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def short(name: str) -> str:
    """A short workload label: 'ipc -f clflush', 'zlib 4 MiB'."""
    if name.startswith("ipc"):
        return "ipc, `-f " + name.rsplit("-f ", 1)[1].rstrip(")") + "`"
    return "zlib minigzip, " + name.rsplit(", ", 1)[1].rstrip(")")


def per_round(r: dict[str, Any], key: str, wall: bool = False) -> str:
    """'median [q1–q3]' of a ratio's per-round values."""
    pr = r["ratios"][key]["per_round_wall" if wall else "per_round_cpu"]
    return f"{pr['median']:.2f} [{pr['q1']:.2f}–{pr['q3']:.2f}]"


def cpu(r: dict[str, Any], variant: str) -> str:
    return f"{r['variants'][variant]['cpu_s']['median']:.3f} s"


def slowdown_table(results: list[dict[str, Any]]) -> list[str]:
    out = ["| workload | plain | allowlist | allowlist, checks as calls | whole program | DHAT "
           "| lackey (one run) |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lk = r.get("lackey")
        lackey = f"{lk['over_plain_cpu']:.0f}x" if lk else "—"
        out.append(f"| {short(r['workload'])} | {cpu(r, 'plain')} | {cpu(r, 'allowlist')} "
                   f"**{per_round(r, 'allowlist_x')}** | {per_round(r, 'allowlist-calls_x')} "
                   f"| {per_round(r, 'whole_x')} | {per_round(r, 'dhat_x')} | {lackey} |")
    return out


def dhat_table(results: list[dict[str, Any]]) -> list[str]:
    out = ["| workload | DHAT | **DHAT ÷ allowlist**, per-round median [IQR] | range "
           "| ratio of medians | wall: per-round median [IQR] | rounds ≥ 10 |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        d = r["ratios"]["dhat_over_allowlist"]
        pr = d["per_round_cpu"]
        out.append(f"| {short(r['workload'])} | {cpu(r, 'dhat')} "
                   f"| **{per_round(r, 'dhat_over_allowlist')}** "
                   f"| {pr['min']:.2f}–{pr['max']:.2f} | {d['of_medians_cpu']:.2f} "
                   f"| {per_round(r, 'dhat_over_allowlist', wall=True)} "
                   f"| {d['rounds_meeting_target']} |")
    return out


def startup_table(results: list[dict[str, Any]]) -> list[str]:
    out = ["| workload | DHAT start-up | allowlist start-up | plain start-up "
           "| DHAT less start-up ÷ allowlist less start-up (long run), per-round [IQR] "
           "| range | allowlist slowdown, long run |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lr = r["ratios"]["long_run_dhat_over_allowlist"]["per_round_cpu"]
        out.append(f"| {short(r['workload'])} | {cpu(r, 'dhat_startup')} "
                   f"| {cpu(r, 'allowlist_startup')} | {cpu(r, 'plain_startup')} "
                   f"| **{per_round(r, 'long_run_dhat_over_allowlist')}** "
                   f"| {lr['min']:.2f}–{lr['max']:.2f} "
                   f"| {per_round(r, 'long_run_allowlist_x')} |")
    return out


def verdicts(results: list[dict[str, Any]]) -> list[str]:
    out = []
    for key, label in (("allowlist_x", "allowlist ≤ 3x plain"),
                       ("dhat_over_allowlist", "≥ 10x faster than DHAT"),
                       ("long_run_dhat_over_allowlist",
                        "≥ 10x faster than DHAT, start-up excluded (long run)")):
        for r in results:
            d = r["ratios"][key]
            pr = d["per_round_cpu"]
            out.append(f"* {label}, {short(r['workload'])}: **{d['verdict']}** — per-round "
                       f"median {pr['median']:.2f}, IQR {pr['q1']:.2f}–{pr['q3']:.2f}, range "
                       f"{pr['min']:.2f}–{pr['max']:.2f}, {d['rounds_meeting_target']} rounds "
                       f"meet it")
    return out


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit("usage: results_table.py RESULTS.json")
    doc = json.loads(Path(sys.argv[1]).read_text())
    if doc.get("format") != "cachefit-trace-bench" or doc.get("version") != 2:
        sys.exit(f"{sys.argv[1]}: not a version 2 cachefit-trace-bench file")
    results = doc["results"]
    for block in (slowdown_table(results), dhat_table(results), startup_table(results),
                  verdicts(results)):
        print("\n".join(block) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
