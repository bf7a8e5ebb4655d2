"""`cachefit build`: profile build -> workload under trace -> reorder -> plan -> optimized build
-> report, every file kept under the output directory (paper 000, Fig. 2).

`run_pipeline(config, steps, progress)` runs the named steps in order; each step reads what
earlier steps left in the output tree (cachefit.pipeline.output_tree) and raises a UserError
(exit 2) naming the missing file when it is not there. The project's build runs through
cachefit's compiler wrapper (cachefit.pipeline.build_env): in profile mode with a flatten-only
layout plan, in optimize mode with the computed plan. Layouts are chosen by the reorder
analysis (`cachefit.reorder.analysis`) on the
transformed units that the profile build wrote to CACHEFIT_UNITS_DIR, so the constraints
come from every unit of the build, and the order by the deciding stage
(`cachefit.reorder.decide`); the layout step rewrites nothing: the optimize build's
wrapper applies the plan to each unit and checks the compiler's layout of it, and the
optimized binaries' layouts are then read back from their DWARF and compared with the
plan. The retrace step (issue 26; only on request:
`--step retrace` or `[build] retrace = true`) measures the plan instead of predicting it:
a profile build with the plan applied to the preprocessed units (flattened and reordered,
CACHEFIT_PROFILE_REORDER), the workload traced again, and each planned type's lines per
invocation, per kind, at the offsets its DWARF and the new profile hold and at the
alignment the new profile observed. A type the layout step refuses (a UserError of its
analysis or optimization) keeps its layout and is listed in the summary with the reason;
the other types go on, and the step fails only when every type is refused. A `[trace] types`
name that the program defines twice with different members (issue 27: Redis's `dict` and
hiredis's) is traced as one type per definition, `dict@src/dict.h:79`; each such key is a
type of its own from there on: its analysis and decision cover the units whose `dict` is
defined there only (the kept units' line markers tell), it has its own `layout/<key>.json`
and plan record, its DWARF is that definition's (frontend.dwarf_definitions.record_of), and
the summary and the report list it. When the place does not tell a name's definitions
apart (two layouts at one place: a key by layout fingerprint, `dict@50fc03a7`), their
layouts do (pipeline.definition_keys), and the name's keys are planned all or none.

`run_pipeline`'s `watch` callable is told, as each step starts, which files that step
writes while it runs (its log, the wrapper's units): a display can follow them live; its
`stage` callable is told each stage of the layout step as it starts (which type, of how
many, and the analysis' or optimizer's stage: "item (1/2): optimizing"). A cache
directory that the build commands' compiler wrappers cannot write is said once per run
(a `progress` line "warning: ..."), not once per wrapper process: the wrappers record it
in the output tree (cachefit.cache_files.NOTICE_ENV) and the pipeline reads it after each
build command.

What it must not do: print (progress goes through the callbacks), edit the project's
sources, or derive a layout itself; the figures come from the optimizer, the compiler and
DWARF.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cachefit.atomic_files import make_output_dir
from cachefit.cache_files import NOTICE_ENV
from cachefit.errors import CachefitError, Location, UserError
from cachefit.model.layout_plan import (
    PROFILE_REORDER_ENV,
    LayoutPlan,
    RecordPlan,
    load_plan,
    save_plan,
)
from cachefit.model.type_names import split_definition, traced_as
from cachefit.pipeline.build_env import (
    build_environment,
    compiler_family,
    llvm_profdata,
    tailoring_flags,
    write_wrappers,
)
from cachefit.pipeline.build_summary import (
    KindSummary,
    StepTime,
    TypeSummary,
    write_summary,
)
from cachefit.pipeline.definition_keys import (
    KeyTest,
    UnitFingerprints,
    key_test,
    planned_record,
)
from cachefit.pipeline.output_tree import (
    DEFAULT_STEPS,
    STEPS,
    OutputTree,
    fresh_dir,
    invalidate_after,
    read_stamp,
    require,
    write_json,
    write_stamp,
)
from cachefit.pipeline.pipeline_config import PipelineConfig
from cachefit.pipeline.unit_transform import original_location
from cachefit.report.report_files import write_reports

if TYPE_CHECKING:
    from cachefit.reorder.decide import OrderDecision

Progress = Callable[[str], None]


@dataclass(frozen=True)
class StepDisplay:
    """What a running step may tell the display: a line of its own (`say`, such as a
    warning) and the stage starting (`stage`, for a live line; the layout step's)."""

    say: Progress
    stage: Progress


QUIET = StepDisplay(lambda _line: None, lambda _stage: None)


@dataclass(frozen=True)
class StepFiles:
    """What a starting step will write while it runs, for a live display: its log (the
    project's build output, the workload's) and the directory where the compiler wrapper
    keeps one `<unit>.json` per unit compiled (build steps only)."""

    step: str
    title: str
    number: int
    total: int
    log: Path | None = None
    units: Path | None = None


Watch = Callable[[StepFiles], None]


@dataclass
class PipelineResult:
    """What a run did: the time of each step run, and the per-type figures when known."""

    tree: OutputTree
    steps: list[StepTime] = field(default_factory=list)
    types: list[TypeSummary] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    products: list[Path] = field(default_factory=list)   # what the steps run wrote


def write_plan(path: Path, flatten: Sequence[str], records: Mapping[str, RecordPlan]) -> None:
    """Write the layout plan (model.layout_plan, docs/layout-plan.md) atomically."""
    save_plan(LayoutPlan(tuple(flatten), dict(records)), path)


# ---------------------------------------------------------------------------
# running commands


SHELL_GRACE = 10.0    # seconds an interrupted build or workload command has to stop


def _tail(path: Path, lines: int = 12) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []


def _shell(command: str, cwd: Path, env: dict[str, str], log: Path, what: str) -> None:
    """Run a shell command, appending its output to `log`; UserError when it fails."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as fh:
        fh.write(f"$ {command}\n")
        fh.flush()
        proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, env=env, stdout=fh,
                                stderr=subprocess.STDOUT)
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            _stop(proc)
            raise
    if code != 0:
        raise UserError(f"{what} failed (`{command}` exited with status {code})",
                        f"see {log}", details=_tail(log))


def _stop(proc: subprocess.Popen[bytes], grace: float = SHELL_GRACE) -> None:
    """After Ctrl-C: let the command stop by itself (a terminal's Ctrl-C reached it too;
    make waits for its compilers and removes their half-written targets), for up to
    `grace` seconds, then kill it. Returning earlier, as `subprocess.run` does after a
    quarter of a second, would leave make's compilers writing into the tree after
    cachefit has exited."""
    for stop in (None, proc.terminate, proc.kill):
        if stop is not None:
            stop()
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:       # a second Ctrl-C: do not wait any longer
            proc.kill()
            proc.wait()
            return


def _run_build(config: PipelineConfig, tree: OutputTree, mode: Literal["profile", "optimize"],
               plan: Path | None, flags: list[str], log_dir: Path,
               shown: StepDisplay, step: str | None = None) -> None:
    """Run the project's build through the wrappers in `mode`; `step` (default: the mode)
    names its wrappers and units directories and what the build tree then holds. The
    retrace step is a profile build that reorders too (PROFILE_REORDER_ENV)."""
    step = step or mode
    log = log_dir / "build.log"
    log.unlink(missing_ok=True)
    wrappers = write_wrappers(tree.wrappers_dir(step), flags)
    units = fresh_dir(tree.units_dir(step))
    env = build_environment(config, mode, wrappers, units, plan)
    env.pop(PROFILE_REORDER_ENV, None)
    if step == "retrace":
        env[PROFILE_REORDER_ENV] = "1"
    env[NOTICE_ENV] = str(tree.cache_notice)    # one warning for the run, not per compile
    state = tree.root / "steps" / "build-tree.json"
    write_json(state, {"build": f"{step} (incomplete)"})   # until the build succeeds
    try:
        if config.clean:
            _shell(config.clean, config.root, env, log,
                   f"the clean command before the {step} build")
        _shell(config.command, config.root, env, log, f"the {step} build")
    except UserError:       # a failed build: the warning may be part of the story
        _say_cache_notice(tree, shown)
        raise
    _say_cache_notice(tree, shown)
    write_json(state, {"build": step})
    _keep_binaries(config, log_dir / "bin")


def _say_cache_notice(tree: OutputTree, shown: StepDisplay) -> None:
    """The wrappers' warning that the cache cannot be written, once per run: the notice
    file is emptied once said (it stays, so that later wrappers do not write it again)."""
    try:
        with tree.cache_notice.open("r+") as fh:
            text = fh.read().strip()
            if text:
                fh.seek(0)
                fh.truncate()
    except OSError:
        return
    if text:
        shown.say(f"warning: {text}")


def _keep_binaries(config: PipelineConfig, dest: Path) -> list[Path]:
    kept = []
    for name in config.binaries:
        src = config.root / name
        if not src.is_file():
            raise UserError(f"{src}: the build did not produce this binary",
                            "fix [build] binaries in cachefit.toml or the build command")
        dest.mkdir(parents=True, exist_ok=True)
        target = dest / Path(name).name
        tmp = target.with_name(f".{target.name}.tmp")
        try:
            shutil.copy2(src, tmp)
            os.replace(tmp, target)
        except BaseException:       # an interrupt included: no half copy left behind
            tmp.unlink(missing_ok=True)
            raise
        kept.append(target)
    return kept


# ---------------------------------------------------------------------------
# the steps


def step_profile(config: PipelineConfig, tree: OutputTree,
                 shown: StepDisplay = QUIET) -> dict[str, Any]:
    plan = None
    if config.flatten:
        plan = tree.flatten_plan
        write_plan(plan, config.flatten, {})
    if config.pgo:
        fresh_dir(tree.pgo_dir)
    flags = tailoring_flags(config, "profile", tree.pgo_dir)
    _run_build(config, tree, "profile", plan, flags, tree.profile_dir, shown)
    units = _unit_sidecars(tree.units_dir("profile"))
    data: dict[str, Any] = {"units": len(units), "flags": flags}
    counts = [side["static_filter"] for _unit, side in units if "static_filter" in side]
    if counts:      # issue 31's filter (instrument = "auto"): functions instrumented
        data["static_filter"] = {k: sum(c[k] for c in counts)
                                 for k in ("instrumented", "functions")}
    return data


def _build_tree_holds(tree: OutputTree) -> str | None:
    try:
        return json.loads((tree.root / "steps" / "build-tree.json").read_text()).get("build")
    except (OSError, ValueError):
        return None


def check_trace(config: PipelineConfig, tree: OutputTree) -> None:
    require(tree, "trace", "profile")
    holds = _build_tree_holds(tree)
    if holds != "profile":
        desc = {"optimize": "the optimized build", None: "no finished build"}.get(
            holds, f"the {holds} build")
        raise UserError(f"the build tree holds {desc}, not the profile build",
                        "run `cachefit build --step profile` before --step trace")


def step_trace(config: PipelineConfig, tree: OutputTree,
               shown: StepDisplay = QUIET) -> dict[str, Any]:
    pgo = config.pgo and compiler_family(config) == "clang"
    prof = _traced_workload(config, tree, tree.profile, tree.trace_log, pgo)
    if pgo:
        raws = sorted((tree.pgo_dir / "raw").glob("*.profraw"))
        if not raws:
            raise UserError(f"{tree.pgo_dir / 'raw'}: the workload wrote no PGO profile",
                            "the profile build must be linked by the wrapper")
        _shell(shlex.join([llvm_profdata(config), "merge", "-o",
                           str(tree.pgo_dir / "merged.profdata"), *map(str, raws)]),
               config.root, dict(os.environ), tree.trace_log, "llvm-profdata merge")
    # Traced types whose objects were not found: the allocation sites the build saw, and
    # the allocators line to add (cachefit.trace.alloc_sites; also said by the trace).
    # The memory guards that fired (what was lost, which setting to raise; issue 26).
    from cachefit.trace.alloc_sites import missed_notes
    from cachefit.trace.raw_trace import guard_notes
    return {"invocations": prof.invocations, "types": sorted(prof.types),
            "notes": guard_notes(prof) + missed_notes(prof)}


def _traced_workload(config: PipelineConfig, tree: OutputTree, profile: Path, log: Path,
                     pgo: bool) -> Any:
    """Run the workload under the trace stage into `profile` (a failed run leaves none),
    its output in `log`; the loaded profile, which must have invocations and every type.
    `pgo`: the clang PGO build's .profraw files go to OUT/pgo/raw."""
    env = dict(os.environ)
    if pgo:
        env["LLVM_PROFILE_FILE"] = str(tree.pgo_dir / "raw" / "%p-%m.profraw")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    tmp = profile.with_name(".profile.tmp.json")
    kept = log.parent / "raw-interrupted"  # the finished processes' traces
    # A child process running the trace stage's entry point, not a call of it: the
    # workload's output goes to the log, and Ctrl-C stops it as any build command
    # (cachefit.pipeline.workload_trace says why).
    cmd = shlex.join([sys.executable, "-m", "cachefit.pipeline.workload_trace", str(tmp),
                      str(kept), "--", "/bin/sh", "-c", config.workload])
    try:
        _shell(cmd, config.root, env, log, "the workload under `cachefit trace`")
        os.replace(tmp, profile)
    finally:
        tmp.unlink(missing_ok=True)     # the profile of a failed workload is not kept
    from cachefit.model.profile import load
    prof = load(profile)
    if prof.invocations == 0:
        raise UserError(f"{profile}: the workload ran no entry function",
                        "check [trace] entry and [build] workload in cachefit.toml")
    missing = [t for t in config.types
               if prof.name_of(t) is None and not traced_as(t, prof.types)]
    if missing:
        raise UserError(f"{profile}: no accesses to {', '.join(missing)}",
                        "check [trace] types, and that the workload uses them")
    return prof


def _unit_sidecars(units_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for side in sorted(units_dir.glob("*.json")):
        data = json.loads(side.read_text())
        for suffix in (".ii", ".i"):
            unit = side.with_suffix(suffix)
            if unit.is_file():
                out.append((unit, data))
                break
    return out


class _UnitSources:
    """Maps places in the kept units (`units/profile/x-1234abcd.i:L:C`) back to the source
    files and lines their line markers name, for the layout step's errors and constraints."""

    def __init__(self, sidecars: list[tuple[Path, dict[str, Any]]]) -> None:
        self.sources = {str(unit): str(data.get("source", "")) for unit, data in sidecars}
        self.maps: dict[str, tuple[bytes, Any]] = {}

    def location(self, loc: Location) -> Location:
        source = self.sources.get(loc.file)
        if source is None or loc.line <= 0:
            return loc
        from cachefit.trace.unit_instrument import LineMap
        if loc.file not in self.maps:
            data = Path(loc.file).read_bytes()
            self.maps[loc.file] = (data, LineMap(data))
        text, lmap = self.maps[loc.file]
        mapped = original_location(text, loc, lmap)
        if mapped is loc:
            return loc
        main = lmap.files[0] if lmap.files else None
        if mapped.file == main and source:
            return Location(source, mapped.line, mapped.col)   # the main file, absolute
        rel = main.removeprefix("./") if main else ""
        if rel and source and not os.path.isabs(mapped.file) and \
                source.endswith(os.sep + rel):
            # a header named relative to the compile's directory, which is the source's
            # path without the main file's spelling (`src/main.c`)
            base = source[:-len(rel)]
            return Location(os.path.normpath(base + mapped.file), mapped.line, mapped.col)
        return mapped

    def location_text(self, text: str) -> str:
        parts = text.rsplit(":", 2)
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            return text
        return str(self.location(Location(parts[0], int(parts[1]), int(parts[2]))))

    def repoint(self, exc: CachefitError) -> None:
        if exc.location is not None:
            exc.location = self.location(exc.location)
        for unit, source in self.sources.items():
            if source:
                exc.what = exc.what.replace(unit, f"{source} (as kept in {unit})")


def check_layout(config: PipelineConfig, tree: OutputTree) -> None:
    require(tree, "layout", "trace", tree.profile)


def step_layout(config: PipelineConfig, tree: OutputTree,
                shown: StepDisplay = QUIET) -> dict[str, Any]:
    sidecars = _unit_sidecars(tree.units_dir("profile"))
    if not sidecars:
        raise UserError(f"{tree.units_dir('profile')}: the profile build wrote no units",
                        "the build command must compile through $CC/$CXX (cachefit's "
                        "wrapper); check profile/build.log")
    from cachefit.model.profile import load
    from cachefit.reorder.analysis import analyse
    from cachefit.reorder.decide import DecideOptions, decide
    from cachefit.reorder.scan_pool import ScanOptions
    profile = load(tree.profile)
    options = DecideOptions(object_align=config.object_align, time_limit=config.time_limit)
    units = [(str(unit), list(data.get("args", []))) for unit, data in sidecars]
    records: dict[str, RecordPlan] = {}
    figures: dict[str, Any] = {}
    tree.layout_dir.mkdir(parents=True, exist_ok=True)
    sources = _UnitSources(sidecars)
    refused: dict[str, UserError] = {}
    keys = _layout_keys(config.types, profile.types)
    fingerprints = UnitFingerprints(dict(units))
    for n, type_name in enumerate(keys, 1):
        which = f"{type_name} (type {n} of {len(keys)})" if len(keys) > 1 else type_name

        def stage(what: str, which: str = which) -> None:
            shown.stage(f"{which}: {what}")     # "item (type 1 of 2): optimizing"

        test = key_test(type_name, keys)
        defined_at = _defined_at(test, sources, config.root, fingerprints)
        try:
            analysis = analyse(type_name, units,
                               scan_options=ScanOptions(config.jobs, config.scan_cache),
                               stage=stage, defined_at=defined_at)
            decision = decide(analysis, options, profile, str(tree.profile), stage=stage)
            data = _decision_json(decision)
        except CachefitError as exc:
            sources.repoint(exc)
            if not isinstance(exc, UserError):
                raise
            if test is not None and test.fingerprint is not None and \
                    defined_at is not None and not defined_at.accepted:
                exc = _unfound_layout(test, profile.types.get(type_name))
            refused[type_name] = exc     # this type keeps its layout; the others go on
            write_json(tree.layout_dir / f"{_slug(type_name)}.json",
                       {"type": type_name, "refused": exc.message()})
            continue
        for c in data.get("constraints", []):
            if c.get("location"):
                c["location"] = sources.location_text(c["location"])
        data["units"] = len(units)
        write_json(tree.layout_dir / f"{_slug(type_name)}.json", data)
        # The optimize build's wrapper applies the order to each unit and checks the
        # compiler's layout of it against this size (cachefit.pipeline.unit_transform).
        records[type_name] = RecordPlan(tuple(data["new_order"]), decision.size,
                                        dict(decision.padding))
        figures[type_name] = {"lines": data["lines"], "dirty_lines": data["dirty_lines"],
                              "size": data["size"], "warnings": data.get("warnings", []),
                              "kinds": decision.kinds()}
    for key in _refuse_together(keys, records, refused, figures):
        write_json(tree.layout_dir / f"{_slug(key)}.json",
                   {"type": key, "refused": refused[key].message()})
    if refused and not records:
        _raise_all_refused(refused)
    write_plan(tree.plan, config.flatten, records)
    sizes = {name: t.size for name, t in profile.types.items() if t.fields}
    return {"types": figures, "refused": {name: {"reason": exc.message(),
                                                 "size": sizes.get(name)}
                                          for name, exc in refused.items()}}


def _layout_keys(types: Sequence[str], traced: Mapping[str, Any]) -> list[str]:
    """The types the layout step plans: each `[trace] types` entry, or the definitions it
    was traced as (`dict` -> `dict@src/dict.h:79`, `dict@deps/hiredis/dict.h:60`; issue
    27), each once."""
    keys: list[str] = []
    for t in types:
        keys += [k for k in traced_as(t, traced) or [t] if k not in keys]
    return keys


class _DefinedAt:
    """For a definition key (`dict@src/dict.h:79`, `dict@50fc03a7`): whether a kept
    unit's definition of the record at a place of the unit is the key's (by the unit's
    line markers, a path relative to the project's directory; and by its layout when the
    place does not tell: pipeline.definition_keys). `accepted`: whether some definition
    was."""

    def __init__(self, test: KeyTest, sources: _UnitSources, root: Path,
                 fingerprints: UnitFingerprints) -> None:
        self.test, self.sources, self.root = test, sources, root
        self.fingerprints = fingerprints
        self.accepted = False

    def __call__(self, unit: str, place: Location) -> bool:
        mapped = self.sources.location(place)
        found = self.test.matches(mapped.file, mapped.line,
                                  lambda: self.fingerprints.at(unit, place), str(self.root))
        self.accepted = self.accepted or found
        return found


def _defined_at(test: KeyTest | None, sources: _UnitSources, root: Path,
                fingerprints: UnitFingerprints) -> _DefinedAt | None:
    """The definition test of a key (None for a plain name)."""
    return None if test is None else _DefinedAt(test, sources, root, fingerprints)


def _unfound_layout(test: KeyTest, traced: Any) -> UserError:
    """The refusal of a fingerprint key that no kept unit defines."""
    name = split_definition(test.key)[0]
    layout = ""
    if traced is not None and traced.fields:
        layout = (f" ({traced.size} bytes: "
                  f"{', '.join(f'{f.name}@{f.offset}' for f in traced.fields)})")
    return UserError(f"{test.key}: no unit of the profile build defines this layout of "
                     f"{name}{layout}", "build the units that define it through cachefit's "
                     "wrapper, or name another definition in [trace] types")


def _refuse_together(keys: Sequence[str], records: dict[str, RecordPlan],
                     refused: dict[str, UserError], figures: dict[str, Any]) -> list[str]:
    """A name with a fingerprint key is planned whole or not at all: the optimize wrapper
    tells its definitions apart by the plan's fingerprint keys, so a place key planned
    without the others would be applied to their records too. The keys refused here."""
    out: list[str] = []
    for key in keys:
        test = key_test(key, keys)
        if test is None or not test.by_layout or key not in refused:
            continue
        name = split_definition(key)[0]
        for other in keys:
            if other in records and split_definition(other)[0] == name:
                del records[other]
                figures.pop(other, None)
                refused[other] = UserError(
                    f"{other}: not reordered: {key}, another layout of {name} that the "
                    f"place does not tell from it, is refused ({refused[key].message()})",
                    f"fix what {key}'s refusal says, or make the definitions of {name} agree")
                out.append(other)
    return out


def _decision_json(decision: OrderDecision) -> dict[str, Any]:
    """`layout/<type>.json`: the keys of `cachefit reorder --json` (docs/reorder.md), from
    the decision: the predicted layout, no headers, no initialisers rewritten; `padding`
    and `transfers` only for a type whose profile records sharing between threads."""
    a, fig = decision.analysis, decision.figures_json()
    order = list(decision.declared)
    offsets = decision.offsets or {}
    return {
        "type": decision.record.name, "file": a.file,
        "old_order": decision.old_order, "new_order": order,
        "lines": fig["lines"], "dirty_lines": fig["dirty_lines"],
        "size": {"before": decision.record.size, "after": decision.size},
        "optimal": fig["optimal"], "solver_seconds": fig["solver_seconds"],
        "method": fig["method"], "constraints": fig["constraints"],
        "merged": fig["merged"], "relaxed_alignment": fig["relaxed_alignment"],
        "split_declarations": list(decision.split), "initializers_fixed": 0,
        "changed_files": [a.file] if decision.changes_text else [], "headers": [],
        "offsets": {n: offsets[n] for n in order if n in offsets},
        "bitfield_barriers": fig["bitfield_barriers"], "gap": fig["gap"],
        "warnings": decision.warnings,
    } | {k: fig[k] for k in ("padding", "transfers") if k in fig}


def _raise_all_refused(refused: dict[str, UserError]) -> None:
    """Every type was refused: the first refusal is the step's error, the others its
    details (nothing would change in the optimized build)."""
    (_, first), *others = refused.items()
    first.details += [f"{name} was refused too: {exc.message()}" for name, exc in others]
    raise first


def check_retrace(config: PipelineConfig, tree: OutputTree) -> None:
    require(tree, "retrace", "layout", tree.plan)


def step_retrace(config: PipelineConfig, tree: OutputTree,
                 shown: StepDisplay = QUIET) -> dict[str, Any]:
    """Measure the plan (issue 26): profile-build it (flattened and reordered), trace the
    workload, and evaluate each planned type at its new offsets and observed alignment."""
    plan = load_plan(tree.plan)
    for stale in (tree.retrace_profile, tree.retrace_dir / "bin"):
        if stale.is_dir():
            shutil.rmtree(stale)
        else:
            stale.unlink(missing_ok=True)
    # No tailoring flags: the PGO data and the optimized build are the other steps'.
    _run_build(config, tree, "profile", tree.plan, [], tree.retrace_dir, shown, "retrace")
    prof = _traced_workload(config, tree, tree.retrace_profile, tree.retrace_log, False)
    from cachefit.trace.raw_trace import guard_notes
    return {"invocations": prof.invocations,
            "types": _measure_plan(config, tree, plan, prof),
            "notes": [f"retrace: {n}" for n in guard_notes(prof)]}


def _measure_plan(config: PipelineConfig, tree: OutputTree, plan: LayoutPlan,
                  prof: Any) -> dict[str, Any]:
    """Per planned type: check that the retraced build has the planned layout (the new
    profile's field offsets and size, and the kept binaries' DWARF order), then its lines
    and dirty lines per invocation, in all and per kind, at the alignment the new profile
    observed (else [build] object_align, as the layout step)."""
    from cachefit.model.padding_members import declared_members
    from cachefit.model.project_config import load_reorder_config
    from cachefit.report.layout_figures import measure_record
    from cachefit.report.record_lookup import record_from_profile
    weights = load_reorder_config().entry_weights or None
    out: dict[str, Any] = {}
    for type_name, entry in plan.records.items():
        try:
            layout = json.loads((tree.layout_dir / f"{_slug(type_name)}.json").read_text())
        except (OSError, ValueError):
            layout = {}
        planned = layout.get("offsets") or {}
        expected = entry.expected_size
        name = _retraced_name(prof, type_name, planned, expected, plan)
        if name is None:
            continue        # _traced_workload refused a [trace] type without accesses
        tp = prof.types[name]
        order = list(entry.order)
        traced = {f.name: f.offset for f in tp.fields}
        wrong = [n for n in order if n in planned and traced.get(n) != planned[n]]
        if wrong or (expected is not None and tp.size != expected):
            raise UserError(
                f"{tree.retrace_profile}: {type_name} does not have the planned layout in "
                "the retraced build (issue 26)", f"check {tree.retrace_dir / 'build.log'}: "
                "was every unit compiled through the wrapper?",
                details=[f"sizeof planned {expected}, traced {tp.size}"] +
                [f"{n}: planned offset {planned[n]}, traced {traced.get(n)}" for n in wrong])
        record, source = None, "profile"
        for binary in config.binaries:
            path = tree.retrace_dir / "bin" / Path(binary).name
            members = list(declared_members(order, entry.padding))   # with padding members
            try:
                rec = _built_record(path, type_name, members, plan, config.root)
            except CachefitError:
                continue            # this binary does not use the type
            built = [f.name for f in rec.fields]
            if built != members:
                raise UserError(f"{path}: {type_name} does not have the planned member "
                                "order (DWARF; issue 26)", f"check {tree.retrace_dir}/build.log",
                                details=[f"planned: {', '.join(members)}",
                                         f"built:   {', '.join(built)}"])
            record, source = rec, "DWARF"
        if record is None:
            record = record_from_profile(tp)
        m = measure_record(record, tp, cache_line=prof.cache_line,
                           object_align=None if tp.alignment else config.object_align,
                           entry_weights=weights)
        out[type_name] = {
            "lines": m.lines, "dirty_lines": m.dirty, "size": tp.size,
            "layout_checked": source, "object_align": m.object_align,
            "start_distribution": {str(k): v for k, v in m.start_distribution.items()},
            "alignment": {str(k): v for k, v in (tp.alignment or {}).items()},
            "kinds": [{"entry": k.entry, "invocations": k.invocations, "lines": k.lines,
                       "dirty_lines": k.dirty} for k in m.kinds]}
    return out


def _retraced_name(prof: Any, key: str, planned: Mapping[str, int], expected: int | None,
                   plan: LayoutPlan) -> str | None:
    """The retraced profile's type of a planned key. When the place does not tell the
    name's definitions apart (definition_keys), the new layouts have new fingerprints and
    the link step may key them otherwise: the type of the name with the planned size and
    offsets."""
    test = key_test(key, plan.records)
    if test is not None and test.by_layout:
        plain = split_definition(key)[0]
        for name, tp in prof.types.items():
            offsets = {f.name: f.offset for f in tp.fields}
            if split_definition(name)[0] == plain and tp.size == expected and \
                    all(offsets.get(n) == off for n, off in planned.items()):
                return str(name)
    return prof.name_of(key)


def check_optimize(config: PipelineConfig, tree: OutputTree) -> None:
    require(tree, "optimize", "layout", tree.plan)
    if config.pgo:
        needed = (tree.pgo_dir / "merged.profdata" if compiler_family(config) == "clang"
                  else tree.pgo_dir / "gcda")
        if not needed.exists():
            raise UserError(f"{needed}: missing; [build] pgo needs the PGO data of the trace "
                            "step", "run `cachefit build --step profile`, then --step trace")


def step_optimize(config: PipelineConfig, tree: OutputTree,
                  shown: StepDisplay = QUIET) -> dict[str, Any]:
    flags = tailoring_flags(config, "optimize", tree.pgo_dir)
    _run_build(config, tree, "optimize", tree.plan, flags, tree.optimize_dir, shown)
    return {"flags": flags, "layouts": _check_binaries(config, tree, load_plan(tree.plan))}


def _check_binaries(config: PipelineConfig, tree: OutputTree,
                    plan: LayoutPlan) -> dict[str, Any]:
    """Read each planned record from the kept binaries' DWARF (a definition key's record
    from its definition: dwarf_definitions.record_of); it must follow the plan."""
    from cachefit.model.padding_members import declared_members
    out: dict[str, Any] = {}
    for name in config.binaries:
        binary = tree.optimize_dir / "bin" / Path(name).name
        for type_name, entry in plan.records.items():
            members = declared_members(entry.order, entry.padding)  # with padding members
            try:
                rec = _built_record(binary, type_name, members, plan, config.root)
            except CachefitError:
                continue            # this binary does not use the type
            order = [f.name for f in rec.fields]
            if order != list(members):
                raise UserError(f"{binary}: {type_name} does not have the planned member "
                                "order (DWARF)", "check optimize/build.log: was every unit "
                                "compiled through the wrapper in optimize mode?",
                                details=[f"planned: {', '.join(members)}",
                                         f"built:   {', '.join(order)}"])
            out.setdefault(type_name, {})[str(binary)] = {
                "size": rec.size, "offsets": {f.name: f.offset for f in rec.fields}}
    return out


def _built_record(binary: Path, key: str, members: Sequence[str], plan: LayoutPlan,
                  root: Path) -> Any:
    """A planned record in a built binary's DWARF: a definition key's from its definition
    (dwarf_definitions.record_of), or, when the place does not tell the name's
    definitions apart, the one of them with the planned members (definition_keys)."""
    from cachefit.frontend.dwarf_definitions import record_of
    test = key_test(key, plan.records)
    if test is not None and test.by_layout:
        return planned_record(str(binary), test, members, str(root))
    return record_of(str(binary), key)


def check_report(config: PipelineConfig, tree: OutputTree) -> None:
    require(tree, "report", "layout", tree.profile, tree.plan)


def step_report(config: PipelineConfig, tree: OutputTree,
                shown: StepDisplay = QUIET) -> dict[str, Any]:
    reports, note = _reports(config, tree)
    return {"reports": [str(p) for p in reports], "note": note}


def _reports(config: PipelineConfig, tree: OutputTree) -> tuple[list[Path], str]:
    """`cachefit report`'s text and HTML files for the profile, the plan and the binaries."""
    tree.report_dir.mkdir(parents=True, exist_ok=True)
    kept: dict[str, str] = {}
    for kind, directory in (("binary", tree.profile_dir), ("optimized_binary",
                                                           tree.optimize_dir)):
        paths = [directory / "bin" / Path(b).name for b in config.binaries]
        if paths and paths[0].is_file():
            kept[kind] = str(paths[0])
    layout = read_stamp(tree, "layout") or {}
    refused = layout.get("refused", {})
    planned = [*layout.get("types", {}), *refused] or config.types   # keys (issue 27)
    reports = write_reports(tree.profile, tree.report_dir, plan_path=tree.plan,
                            types=[t for t in planned if t not in refused],
                            object_align=config.object_align,
                            binary=kept.get("binary"),
                            optimized_binary=kept.get("optimized_binary"))
    return [Path(p) for p in reports], ""


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


STEP_FUNCTIONS: dict[str, Callable[[PipelineConfig, OutputTree, StepDisplay],
                                   dict[str, Any]]] = {
    "profile": step_profile, "trace": step_trace, "layout": step_layout,
    "retrace": step_retrace, "optimize": step_optimize, "report": step_report,
}
# What a step needs from earlier steps, checked before a run starts with that step.
STEP_CHECKS: dict[str, Callable[[PipelineConfig, OutputTree], None]] = {
    "trace": check_trace, "layout": check_layout, "retrace": check_retrace,
    "optimize": check_optimize,
    "report": check_report,
}
STEP_TITLES = {"profile": "profile build", "trace": "workload under cachefit trace",
               "layout": "reorder and layout plan",
               "retrace": "planned layout traced (profile build + workload)",
               "optimize": "optimized build",
               "report": "report"}


def _step_files(tree: OutputTree, step: str, n: int, total: int) -> StepFiles:
    if step in ("profile", "optimize"):
        log_dir = tree.profile_dir if step == "profile" else tree.optimize_dir
        return StepFiles(step, STEP_TITLES[step], n, total, log_dir / "build.log",
                         tree.units_dir(step))
    if step == "trace":
        return StepFiles(step, STEP_TITLES[step], n, total, tree.trace_log)
    if step == "retrace":
        return StepFiles(step, STEP_TITLES[step], n, total, tree.retrace_dir / "build.log",
                         tree.units_dir(step))
    return StepFiles(step, STEP_TITLES[step], n, total)


def default_steps(config: PipelineConfig) -> tuple[str, ...]:
    """The steps of a plain `cachefit build`: all but retrace, unless [build] retrace."""
    return STEPS if config.retrace else DEFAULT_STEPS


def run_pipeline(config: PipelineConfig, steps: Sequence[str] | None = None,
                 progress: Progress | None = None, watch: Watch | None = None,
                 stage: Progress | None = None) -> PipelineResult:
    """Run `steps` (in pipeline order; default `default_steps`) and write the summary; see
    the module docstring."""
    if steps is None:
        steps = default_steps(config)
    bad = [s for s in steps if s not in STEPS]
    if bad:
        raise UserError(f"unknown step {bad[0]!r}", f"use one of {', '.join(STEPS)}")
    say = progress or (lambda _line: None)
    tree = OutputTree(config.output)
    make_output_dir(tree.root, "choose another one with `cachefit build -o DIR` or [build] "
                    "output in cachefit.toml")
    result = PipelineResult(tree=tree)
    shown = StepDisplay(say, stage or (lambda _stage: None))
    tree.cache_notice.unlink(missing_ok=True)       # a previous run's
    ordered = [s for s in STEPS if s in steps]
    if ordered and ordered[0] in STEP_CHECKS:
        STEP_CHECKS[ordered[0]](config, tree)
    for n, step in enumerate(ordered, 1):
        if n > 1 and step in STEP_CHECKS:     # e.g. --step profile --step layout
            STEP_CHECKS[step](config, tree)
        title = STEP_TITLES[step]
        say(f"[{n}/{len(ordered)}] {title} ...")
        invalidate_after(tree, step)
        if watch is not None:
            watch(_step_files(tree, step, n, len(ordered)))
        start = time.monotonic()
        data = STEP_FUNCTIONS[step](config, tree, shown)
        seconds = time.monotonic() - start
        write_stamp(tree, step, {"seconds": seconds, **data})
        result.steps.append(StepTime(step, title, seconds))
        result.products += [p for p in tree.products(step) if p.exists()]
        say(f"[{n}/{len(ordered)}] {title}: done in {seconds:.1f} s{_detail(step, data)}")
    result.types, result.reports, notes = _collect(config, tree)
    result.notes += notes
    all_steps = [StepTime(s, STEP_TITLES[s], float(st["seconds"])) for s in STEPS
                 if (st := read_stamp(tree, s)) is not None]
    write_summary(tree.summary_md, tree.summary_json, result.types, all_steps, result.notes)
    result.products.insert(0, tree.summary_md)
    return result


def _detail(step: str, data: dict[str, Any]) -> str:
    if step == "profile":
        chosen = data.get("static_filter")
        return (f" ({data['units']} transformed unit{'s' if data['units'] != 1 else ''}" +
                (f"; static filter: {chosen['instrumented']} of {chosen['functions']} "
                 "functions instrumented" if chosen else "") + ")")
    if step == "trace":
        return f" ({data['invocations']} invocations)"
    if step == "layout":
        return "".join([*(f"; {t}: {v['lines']['before']:.2f} -> {v['lines']['after']:.2f} "
                          "lines" for t, v in data["types"].items()),
                        *(f"; {t}: refused" for t in data.get("refused", {}))])
    if step == "retrace":
        return "".join(f"; {t}: {v['lines']:.2f} lines measured" for t, v in
                       data["types"].items())
    if step == "report":
        return f" ({len(data['reports'])} files)" if data["reports"] else f" ({data['note']})"
    return ""


def _collect(config: PipelineConfig,
             tree: OutputTree) -> tuple[list[TypeSummary], list[Path], list[str]]:
    """Per-type figures from the stamps the steps left (whatever steps have run)."""
    layout = read_stamp(tree, "layout") or {}
    retrace = (read_stamp(tree, "retrace") or {}).get("types", {})
    optimize = read_stamp(tree, "optimize") or {}
    report = read_stamp(tree, "report") or {}
    types = []
    for name, fig in layout.get("types", {}).items():
        built = optimize.get("layouts", {}).get(name, {})
        sizes = sorted({v["size"] for v in built.values()})
        types.append(TypeSummary(
            name=name, lines_before=fig["lines"]["before"], lines_after=fig["lines"]["after"],
            lines_lower_bound=fig["lines"]["lower_bound"],
            dirty_before=fig["dirty_lines"]["before"], dirty_after=fig["dirty_lines"]["after"],
            size_before=fig["size"]["before"],
            size_after=sizes[0] if len(sizes) == 1 else fig["size"]["after"],
            size_after_source="DWARF" if len(sizes) == 1 else "planned",
            lines_measured=retrace[name]["lines"] if name in retrace else None,
            dirty_measured=retrace[name]["dirty_lines"] if name in retrace else None,
            kinds=_kind_rows(fig.get("kinds", []), retrace.get(name, {}).get("kinds"))))
    for name, why in layout.get("refused", {}).items():
        types.append(TypeSummary(
            name=name, lines_before=None, lines_after=None, lines_lower_bound=None,
            dirty_before=None, dirty_after=None, size_before=why["size"],
            size_after=why["size"], size_after_source="unchanged", refused=why["reason"]))
    notes = [report["note"]] if report.get("note") else []
    notes += list((read_stamp(tree, "trace") or {}).get("notes", []))
    notes += list((read_stamp(tree, "retrace") or {}).get("notes", []))
    for name, fig in layout.get("types", {}).items():
        notes += [w if name in w else f"{name}: {w}" for w in fig.get("warnings", [])]
    if optimize:
        notes += _unchecked_notes(config, list(layout.get("types", {})),
                                  optimize.get("layouts", {}))
    return types, [Path(p) for p in report.get("reports", [])], notes


def _kind_rows(predicted: list[dict[str, Any]],
               measured: list[dict[str, Any]] | None) -> tuple[KindSummary, ...]:
    """Per kind: the layout step's before and predicted after, the retrace's measured
    after (None without a retrace, or for a kind the retrace did not run)."""
    got = {k["entry"]: k for k in measured or []}
    rows = [KindSummary(
        entry=k["entry"], invocations=k["invocations"], lines_before=k["lines"]["before"],
        lines_after=k["lines"]["after"],
        lines_measured=got[k["entry"]]["lines"] if k["entry"] in got else None,
        dirty_before=k["dirty_lines"]["before"], dirty_after=k["dirty_lines"]["after"],
        dirty_measured=got[k["entry"]]["dirty_lines"] if k["entry"] in got else None,
        measured_invocations=got[k["entry"]]["invocations"] if k["entry"] in got else None)
        for k in predicted]
    seen = {k["entry"] for k in predicted}
    rows += [KindSummary(entry=e, invocations=None, lines_before=None, lines_after=None,
                         lines_measured=k["lines"], dirty_before=None, dirty_after=None,
                         dirty_measured=k["dirty_lines"], measured_invocations=k["invocations"])
             for e, k in got.items() if e not in seen]
    return tuple(rows)


def _unchecked_notes(config: PipelineConfig, types: Sequence[str],
                     checked: dict[str, Any]) -> list[str]:
    """Say which planned records the optimized binaries' DWARF did not confirm: no kept
    binary, or none whose debug information has the record (a build without -g)."""
    missing = [t for t in types if not checked.get(t)]
    if not missing:
        return []
    if not config.binaries:
        return [f"the new layouts of {', '.join(missing)} were not checked against DWARF: "
                "list the programs in [build] binaries"]
    return [f"the new layouts of {', '.join(missing)} were not checked against DWARF: no "
            f"binary of [build] binaries ({', '.join(config.binaries)}) has them in its "
            "debug information (build with -g, or list a program that uses them)"]
