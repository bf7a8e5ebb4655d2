"""Measure the cost of one IPC for several `tcb` variants of examples/ipc (the `make demo` table).

What it does, in one call of `measure_variants`:

1. builds examples/ipc/pingpong.cc once per `Variant` (its own `-D` flags) at -O2 into out_dir;
2. checks that every variant prints the same `checksum`, `state_checksum`, `ipcs` and
   `kind_*` counts as the first variant for the same pingpong options, and raises
   `VariantMismatch` naming the variant otherwise (a transformation changed behaviour);
3. cycles per IPC: runs every binary natively with clflush cache pressure, R times,
   round-robin across the variants (the starting variant rotates), so machine noise hits all
   variants alike; each run prints pingpong's `ipc_cycles_median` (rdtsc, median over its
   inner repetitions, timer overhead included); the row reports the median of the R medians;
4. instructions, D1 misses (read + write) and LL misses (instruction + data) per IPC,
   deterministically under valgrind with a fixed cache geometry (`CacheGeometry`), in evict
   mode (valgrind ignores clflush) with an eviction buffer twice the simulated LL. The cost is
   that of `ipc()` inclusive of everything it calls (callgrind `--toggle-collect`): with the
   default geometry the eviction sweep that runs before every IPC costs ~8,200 D1 misses and
   ~33,000 instructions per IPC and would drown the 10-25 misses of the IPC itself in
   cachegrind's whole-program totals (cachegrind 3.19 cannot count one function). Each
   binary runs with N and 2N rounds; the run with N rounds is the baseline, and
   (cost(2N) - cost(N)) / (ipcs(2N) - ipcs(N)) cancels everything that happens once: start-up,
   set-up, cold instruction-cache misses of the first calls, the final dump. cachegrind's
   whole-program totals are measured the same way and reported next to it (`whole_run_*`),
   to show what the driver and the eviction sweep cost. Every run (native or not) has an
   empty environment and argv[0] "./pingpong", so the initial stack has the same alignment
   in every run and for every variant (otherwise the counts move by ~1 miss per IPC);
5. writes out_dir/summary.md (table, ratios against the reference variant, geometry, exact
   commands) and out_dir/summary.json (one object per row) and returns the rows.

What it must not do: it never edits or generates sources or headers (the pipeline's flatten
and reorder stages write the headers that `-DTCB_HEADER` variants use), never writes outside
out_dir, and never prints; it only compiles, runs and reads pingpong. It does not decide
whether a difference in cycles is significant: it reports medians and the per-run samples.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachefit.errors import ToolMissing, UnsafeTransformation, UserError

PINGPONG_DIR = Path(__file__).resolve().parents[1]
PINGPONG_SOURCE = PINGPONG_DIR / "pingpong.cc"
REFERENCE_VARIANT = "hand-tuned flat original"
# The demangled name of pingpong's noinline IPC entry point (README of examples/ipc).
IPC_FUNCTION = "ipc(tcb*, tcb*, unsigned int)"
BASE_CXXFLAGS: tuple[str, ...] = ("-O2", "-g", "-std=c++17", "-Wall", "-Wextra")
# pingpong's default: every 8th round runs the send/blocked/recv sequence.
SPECIAL_EVERY = 8
# Output keys that depend only on the workload, never on the tcb variant.
AGREEMENT_KEYS: tuple[str, ...] = (
    "checksum", "state_checksum", "ipcs", "kind_call", "kind_send", "kind_blocked",
    "kind_recv", "kind_recv_blocked",
)
JSON_KEYS: tuple[str, ...] = (
    "variant", "cycles_per_ipc", "instructions_per_ipc", "d1_misses_per_ipc",
    "ll_misses_per_ipc",
)


class VariantMismatch(UnsafeTransformation):
    """A variant's pingpong output differs from the first variant's: behaviour changed."""


@dataclass(frozen=True)
class Variant:
    """One build of pingpong: a display name and the extra compiler flags that select the tcb."""

    name: str
    compile_flags: tuple[str, ...] = ()
    # The compiler command for this variant instead of `cxx` (e.g. cachefit's wrapper in
    # optimize mode, which flattens and reorders the preprocessed unit), and the variables it
    # needs (CACHEFIT_MODE, CACHEFIT_LAYOUTS, CACHEFIT_CXX, ...).
    compiler: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "compile_flags", tuple(self.compile_flags))
        object.__setattr__(self, "compiler", tuple(self.compiler))
        object.__setattr__(self, "env", tuple((str(k), str(v)) for k, v in dict(self.env).items()))


@dataclass(frozen=True)
class CacheGeometry:
    """The simulated caches as valgrind's (size in bytes, associativity, line size) triples."""

    i1: tuple[int, int, int] = (32768, 8, 64)
    d1: tuple[int, int, int] = (32768, 8, 64)
    ll: tuple[int, int, int] = (262144, 16, 64)

    @property
    def evict_bytes(self) -> int:
        """Eviction buffer: twice the LL, so one sequential sweep evicts every line (LRU)."""
        return 2 * self.ll[0]

    def valgrind_args(self) -> list[str]:
        return [f"--{name}={','.join(str(v) for v in triple)}"
                for name, triple in (("I1", self.i1), ("D1", self.d1), ("LL", self.ll))]


@dataclass(frozen=True)
class Row:
    """The measured costs of one variant; None where a measurement was not run."""

    variant: str
    cycles_per_ipc: float
    instructions_per_ipc: float | None
    d1_misses_per_ipc: float | None
    ll_misses_per_ipc: float | None
    compile_flags: tuple[str, ...] = ()
    compiler: tuple[str, ...] = ()
    sizeof_tcb: int = 0
    checksum: str = ""
    state_checksum: str = ""
    cycles_samples: tuple[float, ...] = ()
    timer_overhead_cycles: float = 0.0
    whole_run_instructions_per_ipc: float | None = None
    whole_run_d1_misses_per_ipc: float | None = None
    whole_run_ll_misses_per_ipc: float | None = None

    def to_json(self, reference: Row | None = None) -> dict[str, Any]:
        """The summary.json object: the five required keys first, then details and ratios."""
        out: dict[str, Any] = {
            "variant": self.variant,
            "cycles_per_ipc": self.cycles_per_ipc,
            "instructions_per_ipc": self.instructions_per_ipc,
            "d1_misses_per_ipc": self.d1_misses_per_ipc,
            "ll_misses_per_ipc": self.ll_misses_per_ipc,
            "compile_flags": list(self.compile_flags),
            "compiler": list(self.compiler),
            "sizeof_tcb": self.sizeof_tcb,
            "checksum": self.checksum,
            "state_checksum": self.state_checksum,
            "cycles_per_ipc_samples": list(self.cycles_samples),
            "timer_overhead_cycles": self.timer_overhead_cycles,
            "whole_run_instructions_per_ipc": self.whole_run_instructions_per_ipc,
            "whole_run_d1_misses_per_ipc": self.whole_run_d1_misses_per_ipc,
            "whole_run_ll_misses_per_ipc": self.whole_run_ll_misses_per_ipc,
        }
        if reference is not None:
            out["reference_variant"] = reference.variant
            for key in JSON_KEYS[1:]:
                out[key.replace("_per_ipc", "_ratio")] = _ratio(
                    getattr(self, key), getattr(reference, key))
        return out


@dataclass(frozen=True)
class _Built:
    variant: Variant
    slug: str
    binary: Path


# ---------------------------------------------------------------------------
# public API


def measure_variants(variants: Sequence[Variant], out_dir: Path, *, cxx: str = "g++",
                     reps: int = 11, iterations: int = 5000, inner_reps: int = 21,
                     cachegrind: bool = True, valgrind_rounds: int = 512,
                     geometry: CacheGeometry = CacheGeometry(),
                     reference: str | None = None,
                     source: Path = PINGPONG_SOURCE) -> list[Row]:
    """Build, check and measure every variant; write summary.md/.json into out_dir.

    reps: native runs per variant (round-robin); iterations / inner_reps: pingpong's `-n` and
    `-r` for each native run; cachegrind: run the deterministic valgrind measurements (else
    their columns are None); valgrind_rounds: N, the baseline run's rounds (the other run has
    2N; a multiple of 8 so the IPC mix of the difference is pingpong's steady mix; 512 makes
    it exact, time-slice expiries included). reference: the row the ratios divide by (default:
    "hand-tuned flat original" if present, else the first variant).
    """
    if not variants:
        raise UserError("no variants to measure", "pass at least one Variant")
    names = [v.name for v in variants]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UserError(f"duplicate variant names: {', '.join(dup)}", "give each variant a name")
    if reps < 1 or iterations < 1 or inner_reps < 1:
        raise UserError("reps, iterations and inner_reps must be at least 1")
    if cachegrind and (valgrind_rounds < SPECIAL_EVERY or valgrind_rounds % SPECIAL_EVERY):
        raise UserError(f"valgrind_rounds={valgrind_rounds} is not a positive multiple of "
                        f"{SPECIAL_EVERY}", "use e.g. 512")
    ref_name = _reference_name(names, reference)
    for tool in [cxx, *(["valgrind"] if cachegrind else [])]:
        if shutil.which(tool) is None:
            raise ToolMissing(f"{tool} not found", "install it (see README: make deps)")

    slugs = [_slug(n) for n in names]
    clash = sorted({n for n, s in zip(names, slugs, strict=True) if slugs.count(s) > 1})
    if clash:
        raise UserError(f"variant names {', '.join(map(repr, clash))} map to the same file "
                        "name", "rename them")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    commands: list[str] = []
    built = [_build(v, out_dir, cxx, source, commands) for v in variants]

    # Quick behaviour check before any long measurement.
    check_args = ["-n", str(4 * SPECIAL_EVERY), "-r", "2", "-f", "none"]
    check_out = {b.variant.name: _run(b, check_args) for b in built}
    check_agreement(check_out, shlex.join(check_args))
    commands.append("# behaviour check, every variant, e.g.: " + _command(built[0], check_args))

    cycles, overheads = _measure_cycles(built, reps, iterations, inner_reps, commands)
    grind: dict[str, dict[str, float]] = {}
    if cachegrind:
        grind = _measure_valgrind(built, out_dir, valgrind_rounds, geometry, commands)

    rows = []
    for b in built:
        name = b.variant.name
        g = grind.get(name, {})
        rows.append(Row(
            variant=name,
            cycles_per_ipc=statistics.median(cycles[name]),
            instructions_per_ipc=g.get("instructions"),
            d1_misses_per_ipc=g.get("d1_misses"),
            ll_misses_per_ipc=g.get("ll_misses"),
            compile_flags=b.variant.compile_flags,
            compiler=b.variant.compiler,
            sizeof_tcb=int(check_out[name]["sizeof_tcb"]),
            checksum=check_out[name]["checksum"],
            state_checksum=check_out[name]["state_checksum"],
            cycles_samples=tuple(cycles[name]),
            timer_overhead_cycles=statistics.median(overheads[name]),
            whole_run_instructions_per_ipc=g.get("whole_instructions"),
            whole_run_d1_misses_per_ipc=g.get("whole_d1_misses"),
            whole_run_ll_misses_per_ipc=g.get("whole_ll_misses"),
        ))
    info = _Info(cxx=cxx, compiler=check_out[names[0]].get("compiler", "?"),
                 reps=reps, iterations=iterations, inner_reps=inner_reps,
                 cachegrind=cachegrind, valgrind_rounds=valgrind_rounds, geometry=geometry,
                 commands=commands)
    _write_summary(rows, out_dir, ref_name, info)
    return rows


def format_table(rows: Sequence[Row], reference: str | None = None) -> str:
    """A markdown table: costs per IPC and ratios against the reference row (see
    `measure_variants` for the default reference)."""
    if not rows:
        return ""
    ref = _find(rows, _reference_name([r.variant for r in rows], reference))
    short = _short(ref.variant)
    head = ["variant", "cycles/IPC", "instructions/IPC", "D1 misses/IPC", "LL misses/IPC",
            f"cycles × {short}", f"instr. × {short}", f"D1 × {short}", f"LL × {short}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([" --- "] + [" ---: "] * 8) + "|"]
    for r in rows:
        cells = [r.variant, _num(r.cycles_per_ipc, 1), _num(r.instructions_per_ipc, 1),
                 _num(r.d1_misses_per_ipc, 2), _num(r.ll_misses_per_ipc, 2)]
        cells += [_num(_ratio(getattr(r, k), getattr(ref, k)), 2) for k in JSON_KEYS[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def check_agreement(outputs: Mapping[str, Mapping[str, str]], args: str) -> None:
    """Raise VariantMismatch naming each variant whose workload-only outputs differ from the
    first variant's (same pingpong options `args`)."""
    items = list(outputs.items())
    if not items:
        return
    ref_name, ref = items[0]
    bad: dict[str, str] = {}
    for name, out in items[1:]:
        diff = [f"{k}={out.get(k)} (expected {ref.get(k)})" for k in AGREEMENT_KEYS
                if out.get(k) != ref.get(k)]
        if diff:
            bad[name] = f"variant {name!r}: " + ", ".join(diff)
    if bad:
        names = ", ".join(map(repr, bad))
        raise VariantMismatch(
            f"variant {names} does not behave like {ref_name!r} (pingpong {args})",
            "the transformation that produced it changed behaviour; fix it before measuring",
            details=list(bad.values()))


def parse_pingpong(text: str) -> dict[str, str]:
    """pingpong's `key=value` lines as a dict."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_valgrind_totals(path: Path) -> dict[str, int]:
    """Event totals of a cachegrind or callgrind output file (its `events:` line and its
    `totals:` line, else `summary:`)."""
    events: list[str] = []
    totals: dict[str, list[int]] = {}
    for line in Path(path).read_text().splitlines():
        for key in ("events:", "totals:", "summary:"):
            if line.startswith(key):
                parts = line[len(key):].split()
                if key == "events:":
                    events = parts
                else:
                    totals[key] = [int(p) for p in parts]
    values = totals.get("totals:") or totals.get("summary:")
    if not events or values is None:
        raise UserError(f"{path}: no events/totals in valgrind output",
                        "check the valgrind log next to it")
    values = values + [0] * (len(events) - len(values))
    return dict(zip(events, values, strict=True))


# ---------------------------------------------------------------------------
# building and running


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "variant"


def _build(variant: Variant, out_dir: Path, cxx: str, source: Path,
           commands: list[str]) -> _Built:
    slug = _slug(variant.name)
    # Same file name in a directory per variant: every run has argv[0] == "./pingpong".
    binary = out_dir / "bin" / slug / "pingpong"
    binary.parent.mkdir(parents=True, exist_ok=True)
    # -iquote: headers written elsewhere by the pipeline can `#include "kernel.h"`.
    compiler = list(variant.compiler or (cxx,))
    cmd = [*compiler, *BASE_CXXFLAGS, "-iquote", str(source.parent), *variant.compile_flags,
           "-o", str(binary), str(source)]
    env_words = [f"{k}={v}" for k, v in variant.env]
    commands.append(shlex.join(["env", *env_words, *cmd]) if env_words else shlex.join(cmd))
    env = {**os.environ, **dict(variant.env)} if variant.env else None
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        first = [ln for ln in proc.stderr.splitlines() if "error" in ln][:5]
        raise UserError(f"variant {variant.name!r} does not compile ({shlex.join(compiler)})",
                        "fix its header or flags", details=first or proc.stderr.splitlines()[:5])
    return _Built(variant, slug, binary)


def _command(b: _Built, args: Sequence[str], wrapper: Sequence[str] = ()) -> str:
    """The shell form of what `_run` executes."""
    return (f"(cd {shlex.quote(str(b.binary.parent))} && env -i "
            f"{shlex.join([*wrapper, './' + b.binary.name, *args])})")


def _run(b: _Built, args: Sequence[str], wrapper: Sequence[str] = ()) -> dict[str, str]:
    # Empty environment and the same argv[0] for every variant: the initial stack (argv,
    # environment strings) then has the same size and alignment in every run, so the
    # simulated caches see the same addresses (deterministic counts) and no variant gets a
    # luckier stack alignment natively.
    cmd = [*wrapper, "./" + b.binary.name, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=b.binary.parent, env={})
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-5:]
        raise VariantMismatch(f"variant {b.variant.name!r}: {_command(b, args, wrapper)} "
                              f"exited with status {proc.returncode}", "see the messages below",
                              details=tail)
    return parse_pingpong(proc.stdout)


def _measure_cycles(built: Sequence[_Built], reps: int, iterations: int, inner_reps: int,
                    commands: list[str]) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    args = ["-n", str(iterations), "-r", str(inner_reps), "-f", "clflush"]
    commands.append(f"# cycles: {reps} rounds, round-robin over the variants, each e.g.: " +
                    _command(built[0], args))
    cycles: dict[str, list[float]] = {b.variant.name: [] for b in built}
    overheads: dict[str, list[float]] = {b.variant.name: [] for b in built}
    for rep in range(reps):
        k = rep % len(built)
        outs = {}
        for b in [*built[k:], *built[:k]]:
            out = _run(b, args)
            outs[b.variant.name] = out
            cycles[b.variant.name].append(float(out["ipc_cycles_median"]))
            overheads[b.variant.name].append(float(out["timer_overhead_cycles"]))
        check_agreement({b.variant.name: outs[b.variant.name] for b in built}, shlex.join(args))
    return cycles, overheads


def _measure_valgrind(built: Sequence[_Built], out_dir: Path, rounds: int,
                      geometry: CacheGeometry, commands: list[str]) -> dict[str, dict[str, float]]:
    valgrind = shutil.which("valgrind") or "valgrind"   # absolute: the runs have no PATH
    vg_dir = out_dir / "valgrind"
    vg_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, dict[str, float]] = {b.variant.name: {} for b in built}
    for tool, prefix in (("callgrind", ""), ("cachegrind", "whole_")):
        outs: dict[int, dict[str, dict[str, str]]] = {rounds: {}, 2 * rounds: {}}
        for b in built:
            totals = []
            for n in (rounds, 2 * rounds):
                args = ["-n", str(n), "-r", "1", "-f", "evict",
                        "--evict-bytes", str(geometry.evict_bytes)]
                dest = vg_dir / f"{b.slug}.{tool}.{n}.out"
                wrapper = [valgrind, f"--tool={tool}", "--cache-sim=yes",
                           *geometry.valgrind_args(), f"--{tool}-out-file={dest}"]
                if tool == "callgrind":
                    wrapper.append(f"--toggle-collect={IPC_FUNCTION}")
                commands.append(_command(b, args, wrapper))
                out = _run(b, args, wrapper)
                outs[n][b.variant.name] = out
                totals.append((int(out["ipcs"]), parse_valgrind_totals(dest)))
            (ipcs1, ev1), (ipcs2, ev2) = totals
            result[b.variant.name] |= {
                prefix + k: v for k, v in _per_ipc(ev1, ev2, ipcs2 - ipcs1).items()}
        for n, by_variant in outs.items():
            # behaviour under valgrind must agree too (same options for every variant)
            check_agreement(by_variant, f"-n {n} -r 1 -f evict under {tool}")
    return result


def _per_ipc(base: Mapping[str, int], double: Mapping[str, int], ipcs: int) -> dict[str, float]:
    def diff(*events: str) -> float:
        return sum(double.get(e, 0) - base.get(e, 0) for e in events) / ipcs
    return {
        "instructions": diff("Ir"),
        "d1_misses": diff("D1mr", "D1mw"),
        "ll_misses": diff("ILmr", "DLmr", "DLmw"),
    }


# ---------------------------------------------------------------------------
# summary


@dataclass(frozen=True)
class _Info:
    cxx: str
    compiler: str
    reps: int
    iterations: int
    inner_reps: int
    cachegrind: bool
    valgrind_rounds: int
    geometry: CacheGeometry
    commands: list[str]


def _write_summary(rows: Sequence[Row], out_dir: Path, ref_name: str, info: _Info) -> None:
    ref = _find(rows, ref_name)
    (out_dir / "summary.json").write_text(
        json.dumps([r.to_json(ref) for r in rows], indent=2) + "\n")
    g = info.geometry
    n = info.valgrind_rounds
    md = [
        "# Cost of one IPC per tcb variant (examples/ipc pingpong)",
        "",
        format_table(rows, ref_name),
        "",
        f"Ratio columns: the variant's figure divided by the figure of {ref_name!r}; "
        "below 1 is better.",
        "",
        "## How the figures were measured",
        "",
        f"* Build: `{info.cxx} {' '.join(BASE_CXXFLAGS)}` plus each variant's flags (a "
        "variant with its own compiler command, such as cachefit's wrapper in optimize mode "
        f"around {info.cxx}, is listed under Commands) "
        f"(compiler: {info.compiler}; CPU: {_cpu_model()}). Every variant printed the same "
        "`checksum`, `state_checksum`, `ipcs` and `kind_*` counts for every run below.",
        f"* cycles/IPC: pingpong's `ipc_cycles_median` (rdtsc around each `ipc()` call, mean "
        f"per IPC of each of {info.inner_reps} inner repetitions of {info.iterations} rounds, "
        "median over them; timer overhead included) with clflush of both TCBs before each "
        f"IPC; {info.reps} runs per variant, round-robin across the variants with a rotating "
        "start; the table shows the median of the runs' medians.",
    ]
    if info.cachegrind:
        md += [
            "* instructions, D1 misses (read + write) and LL misses (instruction + data) per "
            f"IPC: valgrind 3.19 callgrind, inclusive cost of `{IPC_FUNCTION}` "
            "(`--toggle-collect`; the cache simulation runs for the whole program, only the "
            "attribution is restricted), evict mode: before each IPC pingpong reads one byte "
            f"per line of a {g.evict_bytes}-byte buffer (2 x LL), which evicts both TCBs, the "
            "kernel stacks and the globals from the simulated D1 and LL. Each binary ran with "
            f"N = {n} and 2N = {2 * n} rounds; per IPC = (cost(2N) - cost(N)) / "
            "(ipcs(2N) - ipcs(N)). The first N rounds of both runs are identical (pingpong is "
            "deterministic), so start-up, set-up, cold misses of the first calls and the final "
            "dump cancel and only rounds N..2N-1 remain; N is a multiple of 8, so they have "
            "the steady mix of IPC kinds.",
            "* Why not cachegrind's program totals: the eviction sweep costs about "
            f"{g.evict_bytes // 64} D1 and LL misses and ~4 instructions per line for every "
            "IPC, and cachegrind 3.19 cannot restrict counting to `ipc()`; those totals "
            "(same geometry, same N/2N difference) are below for reference.",
            "",
            "## Simulated cache geometry (valgrind --cache-sim=yes)",
            "",
            "| cache | size (bytes) | associativity | line (bytes) |",
            "| --- | ---: | ---: | ---: |",
            *(f"| {name} | {t[0]} | {t[1]} | {t[2]} |"
              for name, t in (("I1", g.i1), ("D1", g.d1), ("LL", g.ll))),
            "",
            f"Options: `--cache-sim=yes {' '.join(g.valgrind_args())}`, pingpong "
            f"`-f evict --evict-bytes {g.evict_bytes}`.",
            "",
            "## Whole program per IPC (cachegrind, driver and eviction sweep included)",
            "",
            "| variant | instructions/IPC | D1 misses/IPC | LL misses/IPC |",
            "| --- | ---: | ---: | ---: |",
            *(f"| {r.variant} | {_num(r.whole_run_instructions_per_ipc, 1)} | "
              f"{_num(r.whole_run_d1_misses_per_ipc, 2)} | "
              f"{_num(r.whole_run_ll_misses_per_ipc, 2)} |" for r in rows),
        ]
    md += [
        "",
        "## Native runs (cycles/IPC per run, in run order)",
        "",
        "| variant | sizeof(tcb) | median | min | max | timer overhead | runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        *(f"| {r.variant} | {r.sizeof_tcb} | {_num(r.cycles_per_ipc, 1)} | "
          f"{_num(min(r.cycles_samples), 1)} | {_num(max(r.cycles_samples), 1)} | "
          f"{_num(r.timer_overhead_cycles, 0)} | "
          f"{' '.join(_num(c, 0) for c in r.cycles_samples)} |" for r in rows),
        "",
        "## Commands",
        "",
        "```",
        *info.commands,
        "```",
        "",
    ]
    (out_dir / "summary.md").write_text("\n".join(md))


# ---------------------------------------------------------------------------
# helpers


def _reference_name(names: Sequence[str], reference: str | None) -> str:
    if reference is None:
        return REFERENCE_VARIANT if REFERENCE_VARIANT in names else names[0]
    if reference not in names:
        raise UserError(f"reference variant {reference!r} is not measured",
                        f"use one of: {', '.join(names)}")
    return reference


def _find(rows: Iterable[Row], name: str) -> Row:
    return next(r for r in rows if r.variant == name)


def _short(name: str) -> str:
    return "flat" if name == REFERENCE_VARIANT else name


def _ratio(value: float | None, ref: float | None) -> float | None:
    if value is None or ref is None or ref == 0:
        return None
    return value / ref


def _num(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"
