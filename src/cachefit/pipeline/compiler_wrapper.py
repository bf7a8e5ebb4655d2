"""`cachefit cc` / `cachefit c++`: a drop-in compiler for plain, profile and optimize builds.

plain    runs the real compiler with the arguments unchanged.
profile  compiles every C/C++ source as: preprocess with the real compiler, edit the
         preprocessed unit (cachefit.trace.unit_instrument: invocation begin/end in the
         entry functions, heap registrations), compile it with load/store
         instrumentation (clang: -fsanitize-coverage=trace-loads,trace-stores, with the
         allowlist of an `instrument` list, or with `instrument = "auto"` the ignorelist of
         the unit's functions that cannot touch a traced type (cachefit.trace.touch_filter,
         issue 31; CACHEFIT_UNITS_DIR gets their list and the unit's sidecar their count);
         gcc: -fsanitize=thread served by the cachefit runtime). A link
         adds the runtime library and a blob object, then fills the blob in the output
         with the static objects and type layouts found in its debug information; the
         executable exports the runtime (cachefit.pipeline.runtime_exports). A shared library
         gets no runtime but its own blob and a constructor/destructor that register its
         static objects with the executable's runtime at load and forget them at unload
         (runtime/shlib/cf_shlib_ctor.c).
         With a layout plan, the plan's `flatten` classes are flattened first, so the
         profile describes the flattened classes; with CACHEFIT_PROFILE_REORDER=1 (the
         retrace step of `cachefit build`, issue 26) the plan's member orders are applied
         too, so the profile measures the planned layout.
optimize applies the layout plan (cachefit.pipeline.optimize_wrapper).
Steps the modes share are in cachefit.pipeline.wrapper_steps. The module runs compilers and
edits only temporary files and the link output; the CLI (cachefit.cli.cc_cmd) prints
what it returns.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cachefit.atomic_files import write_bytes_atomic
from cachefit.cache_files import CacheWrites, build_cached, cache_dir
from cachefit.errors import ToolMissing, UserError
from cachefit.frontend.compiler_args import (
    CompilerCommand,
    Language,
    Source,
    parse_command,
    select,
    unit_language,
    unit_suffix,
)
from cachefit.frontend.unit_compile import is_clang
from cachefit.model.layout_plan import LAYOUTS_ENV, PROFILE_REORDER_ENV, load_plan, plan_path
from cachefit.model.project_config import ProjectConfig, effective_mode, load_config, real_compiler
from cachefit.pipeline.wrapper_steps import (
    GUARD_ENV,
    WrapperResult,
    call,
    compile_preprocessed,
    compile_unchanged,
    full_debug_args,
    has_debug,
    link_args,
    output_for,
    parse_args_for_unit,
    preprocess,
    produces_no_code,
    save_unit_copy,
)
from cachefit.scratch import scratch_directory

if TYPE_CHECKING:
    from cachefit.trace.touch_filter import FilterResult

__all__ = ["GUARD_ENV", "Language", "WrapperResult", "run", "ProfileBuild", "allowlist_text",
           "detect_backend"]

Backend = Literal["sanitizer-coverage", "tsan"]

BLOB_CAPACITY = 16 * 1024
# clang profile builds: keep the optimizer from forming memset/memcpy/memmove out of
# stores and loops (see ProfileBuild._instrument_flags).
NO_IDIOM_FLAGS = ("-fno-builtin-memset", "-fno-builtin-memcpy", "-fno-builtin-memmove")
_call = call


def run(language: Language, argv: list[str], env: Mapping[str, str] | None = None) -> WrapperResult:
    """Run the wrapper for `cachefit cc` (language "c") or `cachefit c++`."""
    env = dict(os.environ if env is None else env)
    config = load_config(env)
    mode = effective_mode(config, env)
    compiler = real_compiler(config, language, env)
    if env.get(GUARD_ENV):
        raise UserError("the real compiler calls cachefit again",
                        "set CACHEFIT_CC/CACHEFIT_CXX (or [build] cc/cxx) to a real compiler")
    if shutil.which(compiler[0]) is None:
        raise ToolMissing(f"compiler {compiler[0]} not found",
                          "install it or set CACHEFIT_CC/CACHEFIT_CXX")
    if mode == "plain":
        return WrapperResult(_call([*compiler, *argv], env))
    if mode == "optimize":
        from cachefit.pipeline import optimize_wrapper
        return optimize_wrapper.run(language, argv, config, compiler, env)
    return ProfileBuild(config, compiler, language, env).run(argv)




def detect_backend(compiler: list[str], env: Mapping[str, str]) -> Backend:
    """clang gets sanitizer coverage, gcc gets -fsanitize=thread."""
    return "sanitizer-coverage" if is_clang(compiler, env) else "tsan"


def _mangled_patterns(name: str) -> list[str]:
    simple = name.rsplit("::", 1)[-1]
    return [name, f"_Z{len(simple)}{simple}*", f"_ZN*{len(simple)}{simple}*"]


def allowlist_text(functions: Sequence[str], files: Sequence[str]) -> str:
    """A clang sanitizer-coverage allowlist: both a `src:` and a `fun:` entry must match."""
    lines = ["# cachefit: functions instrumented in the profile build"]
    for f in files:
        lines.append(f"src:{f}")
        if f != "*":
            lines.append(f"src:*{f}.i")
            lines.append(f"src:*{f}.ii")
    for fn in functions:
        lines.extend(f"fun:{p}" for p in _mangled_patterns(fn))
    return "\n".join(lines) + "\n"


class ProfileBuild:
    """One profile-mode compiler invocation."""

    def __init__(self, config: ProjectConfig, compiler: list[str], language: Language,
                 env: Mapping[str, str]) -> None:
        if config.path is None:
            raise UserError("profile mode needs a project file",
                            "create cachefit.toml with [trace] types and entry, or set "
                            "CACHEFIT_CONFIG")
        if not config.trace.types or not config.trace.entry:
            raise UserError(f"{config.path}: [trace] needs `types` and `entry`",
                            "name the traced types and the entry functions")
        self.config = config
        self.trace = config.trace
        self.compiler = compiler
        self.language = language
        self.env = dict(env)
        self.warnings: list[str] = []
        self.writes: CacheWrites | None = None     # the cache, from run() on
        backend = self.trace.backend
        detected = detect_backend(compiler, env)
        if backend == "auto":
            backend = detected
        elif backend == "sanitizer-coverage" and detected != "sanitizer-coverage":
            raise UserError(f"backend sanitizer-coverage needs clang, but {compiler[0]} is not "
                            "clang", "set CACHEFIT_CC=clang-19 or backend = \"tsan\"")
        self.backend: Backend = backend
        # A plan named by [build] layouts may not exist yet when the profile build runs
        # (the pipeline writes it from this build's profile); CACHEFIT_LAYOUTS must exist.
        plan_file = plan_path(config.path, config.build.layouts, env)
        self.plan = load_plan(plan_file) if plan_file is not None and (
            env.get(LAYOUTS_ENV) or plan_file.is_file()) else None
        self.reorder = env.get(PROFILE_REORDER_ENV) == "1"
        if self.reorder and self.plan is None:
            raise UserError(f"{PROFILE_REORDER_ENV}=1 needs a layout plan (issue 26)",
                            f"set {LAYOUTS_ENV} or [build] layouts")

    # ---------------------------------------------------------------- driver

    def run(self, argv: list[str]) -> WrapperResult:
        cmd = parse_command(argv)
        if produces_no_code(cmd) or (not cmd.sources and cmd.action != "link"):
            return WrapperResult(_call([*self.compiler, *argv], self.env), self.warnings)
        self._check_conflicts(cmd)
        with scratch_directory("cachefit-cc-") as tmpdir:
            self.writes = CacheWrites(cache_dir(), self.warnings, tmpdir,
                                      env=self.env)
            objects: dict[int, str] = {}
            for n, src in enumerate(cmd.sources):
                out = output_for(cmd, src, tmpdir, n)
                code = self._compile(cmd, src, out, tmpdir)
                if code != 0:
                    return WrapperResult(code, self.warnings)
                objects[src.index] = out
            if cmd.action != "link":
                return WrapperResult(0, self.warnings)
            code = self._link(cmd, objects, tmpdir)
            return WrapperResult(code, self.warnings)

    def _check_conflicts(self, cmd: CompilerCommand) -> None:
        for a in cmd.args:
            if a.startswith("-fsanitize-coverage") or (
                    self.backend == "tsan" and a.startswith("-fsanitize=") and "thread" in a):
                raise UserError(f"{a} conflicts with the profile build's instrumentation",
                                "remove it from the flags of the profile build")

    # ---------------------------------------------------------------- compile

    def _filtered(self) -> bool:
        """Whether this build instruments only the functions that can touch a traced type
        (issue 31: `instrument = "auto"`, opt-in, the clang backend)."""
        return self.backend == "sanitizer-coverage" and self.trace.instrument is None and \
            self.trace.instrument_auto

    def _instrument_flags(self, tmpdir: Path, ignorelist: str | None = None) -> list[str]:
        """The instrumentation flags; `ignorelist`: the static filter's list of the unit's
        functions that cannot touch a traced type (cachefit.trace.touch_filter)."""
        if self.backend == "tsan":
            return ["-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0"]
        # Sanitizer coverage sees load and store instructions only, at the end of the
        # optimizer's pipeline: stores that MemCpyOpt or LoopIdiomRecognize turned into
        # llvm.memset/memcpy/memmove before it would never be traced (issue 26: zlib's
        # init_block, gen_bitlen). With the C library's functions not builtins those
        # passes leave the stores alone; written calls are redirected in the source.
        flags = ["-fsanitize-coverage=func,trace-loads,trace-stores",
                 *NO_IDIOM_FLAGS]
        if self.trace.instrument is not None:
            text = allowlist_text(self.trace.instrument, self.trace.instrument_files)
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            path = build_cached(cache_dir() / "allowlists" / f"{digest}.txt",
                                lambda out: out.write_text(text), self.writes)
            flags.append(f"-fsanitize-coverage-allowlist={path}")
        elif ignorelist is not None:
            digest = hashlib.sha256(ignorelist.encode()).hexdigest()[:16]
            path = build_cached(cache_dir() / "ignorelists" / f"{digest}.txt",
                                lambda out: out.write_text(ignorelist), self.writes)
            flags.append(f"-fsanitize-coverage-ignorelist={path}")
        return flags

    def _compile(self, cmd: CompilerCommand, src: Source, out: str, tmpdir: Path) -> int:
        if not src.is_c_family:
            # Assembler and other languages: compile as the driver would, uninstrumented.
            return compile_unchanged(self.compiler, cmd, src, out, self.env)
        from cachefit.trace.runtime_build import include_dir
        from cachefit.trace.unit_instrument import instrument_preprocessed

        lang = unit_language(src)
        stem = Path(src.path).resolve()
        unit_dir = tmpdir / "units" / str(stem.parent).lstrip("/")
        unit_dir.mkdir(parents=True, exist_ok=True)
        pre = unit_dir / (stem.name + unit_suffix(lang))
        if src.lang in ("c-cpp-output", "c++-cpp-output"):
            text = Path(src.path).read_bytes()
        else:
            code = preprocess(self.compiler, cmd, src, out, pre, self.env,
                              ["-DCACHEFIT_PROFILE=1", "-I", str(include_dir())])
            if code != 0:
                return code
            text = pre.read_bytes()
        if self.plan is not None and (self.plan.flatten or self.reorder):
            from cachefit.pipeline.unit_transform import apply_plan
            flat = apply_plan(text, lang, self.plan, parse_args_for_unit(lang, cmd.args),
                              tmpdir / f"flatten{unit_suffix(lang)}",
                              "<stdin>" if src.path == "-" else src.path,
                              reorder=self.reorder)
            self.warnings.extend(flat.warnings)
            text = flat.text
        edited, report = instrument_preprocessed(
            text, lang, self.trace, cmd.args, source=src.path,
            struct_copies=self.backend == "sanitizer-coverage", by_value_copies=True,
            touch_filter=self._filtered())
        self.warnings.extend(report.warnings)
        pre.write_bytes(edited)
        flags = select(cmd, keep={"other"})
        chosen = report.functions
        extra = self._instrument_flags(
            tmpdir, chosen.ignorelist_text() if chosen is not None else None)
        if not has_debug(flags):
            extra.append("-g")
        extra += full_debug_args(self.compiler, self.env, lang)
        if self.backend == "sanitizer-coverage":  # checks inlined: cachefit.trace.sancov_inline
            from cachefit.trace.sancov_inline import compile_commands
            code = 0
            for step in compile_commands(self.compiler, cmd, lang, pre, out, self.env, extra,
                                         tmpdir, source=src.path, writes=self.writes,
                                         largest_function=report.largest_function,
                                         warnings=self.warnings):
                code = _call(step, self.env)
                if code != 0:
                    break
        else:
            code = compile_preprocessed(self.compiler, cmd, lang, pre, out, self.env, extra,
                                        source=src.path)
        # Only a unit that compiled is kept: a configure check that fails on purpose (CMake's
        # CheckSymbolExists) is no unit of the program, and the layout step parses them all.
        if code == 0:
            counts = None if chosen is None else {
                "functions": len(chosen.functions), "instrumented": chosen.instrumented}
            kept = save_unit_copy(self.env, src, lang, text, cmd.args, out,
                                  static_filter=counts)
            if chosen is not None:
                self._keep_choice(src.path, chosen, kept)
        return code

    def _keep_choice(self, source: str, chosen: FilterResult, kept: Path | None) -> None:
        """With CACHEFIT_UNITS_DIR, list the functions the static filter instruments in a
        unit as `<unit>.instrumented.txt` beside the unit's copy. Nothing on stderr: the
        wrapper is as quiet as the compiler (the counts are in the unit's sidecar, summed
        in `cachefit build`'s profile step line)."""
        if kept is not None:
            listing = kept.with_name(kept.stem + ".instrumented.txt")
            write_bytes_atomic(listing, chosen.listing(source).encode())

    # ---------------------------------------------------------------- link

    def _link(self, cmd: CompilerCommand, objects: dict[int, str], tmpdir: Path) -> int:
        args: list[str] = []
        for a in link_args(cmd, objects):
            if a in ("-s", "-Wl,-s", "-Wl,--strip-all", "-Wl,--strip-debug", "-Wl,-S"):
                self.warnings.append(f"profile build: ignoring {a} (the link step needs "
                                     "the symbols and debug information)")
                continue
            args.append(a)
        if cmd.relocatable:
            # Partial links are instrumented; the blob belongs to the final link.
            return _call([*self.compiler, *args], self.env)
        from cachefit.trace.elf_objects import BLOB_SYMBOL, SHLIB_BLOB_SYMBOL

        output = cmd.output or "a.out"
        if cmd.shared:
            # The library's own blob and its constructor; the runtime is the executable's.
            return self._link_with_blob(
                output, SHLIB_BLOB_SYMBOL,
                lambda capacity: [*args, str(self._shlib_object(tmpdir, capacity, cmd))])
        from cachefit.pipeline.runtime_exports import export_flags, linker_of
        from cachefit.trace.runtime_build import runtime_library

        runtime = runtime_library([*self.compiler], self.writes)
        exports = export_flags(linker_of(self.compiler, args, self.env), tmpdir)
        return self._link_with_blob(
            output, BLOB_SYMBOL,
            lambda capacity: [*args, str(self._blob_object(tmpdir, capacity, cmd)),
                              str(runtime), "-lpthread", *exports])

    def _link_with_blob(self, output: str, symbol: str,
                        link_line: Callable[[int], list[str]]) -> int:
        """Link with a blob of growing capacity until the output's facts fit in it, and
        fill it in (the executable's `__cachefit_blob` or a library's own)."""
        from cachefit.trace.alloc_sites import unconverted_count
        from cachefit.trace.elf_objects import (
            SHLIB_BLOB_SYMBOL,
            analyze,
            blob_text,
            find_blob,
            got_slots,
            patch_blob,
        )

        shared = symbol == SHLIB_BLOB_SYMBOL
        capacity = BLOB_CAPACITY
        for _attempt in range(3):
            code = _call([*self.compiler, *link_line(capacity)], self.env)
            if code != 0:
                return code
            facts = analyze(output, self.trace.types)
            slot = find_blob(output, symbol)
            if slot is None:
                self.warnings.append(f"{output}: the cachefit blob is missing from the output; "
                                     "static objects are not registered")
                return 0
            got = got_slots(output, {o.symbol for o in facts.objects if o.symbol}) \
                if shared else None
            meta = {"instrumentation": self.backend, "program": str(Path(output).resolve()),
                    "entry": list(self.trace.entry),
                    "unconverted_sites": unconverted_count(output)}
            limits = {"max_accesses": self.trace.max_accesses,
                      "max_objects": self.trace.max_objects,
                      "max_sequences": self.trace.max_sequences,
                      "max_distinct": self.trace.max_distinct}
            payload = blob_text(slot.address, facts, self.trace.types, self.trace.entry,
                                limits, meta, got)
            if len(payload) + 1 <= slot.capacity:
                patch_blob(output, slot, payload)
                if not facts.has_debug_info:
                    self.warnings.append(f"{output}: no debug information; static objects of "
                                         "the traced types are not found" +
                                         ("" if shared else " and the profile will lack "
                                          "field layouts") + " (compile with -g)")
                for t, why in sorted(facts.problems.items()):
                    self.warnings.append(f"{output}: type {t}: {why}")
                # A library need not hold every traced type; a program must.
                for t in self.trace.types:
                    if t not in facts.layouts and facts.has_debug_info and not shared \
                            and t not in facts.problems:
                        self.warnings.append(f"{output}: type {t} is not in the debug "
                                             "information of the program")
                return 0
            capacity = 1 << (len(payload) + 1024).bit_length()
        raise UserError(f"{output}: could not fit the cachefit blob", "report this as a bug")

    def _target_flags(self, cmd: CompilerCommand) -> list[str]:
        """The -m32/-m64/--target options of the command (for the objects cachefit adds)."""
        from cachefit.trace.unit_instrument import libclang_flags
        target: list[str] = []
        flags = libclang_flags(cmd.args)
        for i, a in enumerate(flags):
            if a.startswith(("-m32", "-m64", "-mx32", "--target=")):
                target.append(a)
            elif a == "-target" and i + 1 < len(flags):
                target += [a, flags[i + 1]]
        return target

    def _shlib_object(self, tmpdir: Path, capacity: int, cmd: CompilerCommand) -> Path:
        """runtime/shlib/cf_shlib_ctor.c compiled for a library: its blob of `capacity`
        bytes and the constructor/destructor that hand it to the runtime."""
        from cachefit.trace.runtime_build import runtime_dir
        src = runtime_dir() / "shlib" / "cf_shlib_ctor.c"
        obj = tmpdir / f"cachefit_shlib_{capacity}.o"
        if obj.is_file():
            return obj
        if not src.is_file():
            raise UserError(f"the cachefit runtime source {src} is missing",
                            "set CACHEFIT_RUNTIME_DIR to the runtime/ directory")
        code = _call([*self.compiler, *self._target_flags(cmd), "-x", "c", "-std=c11", "-O2",
                      "-fPIC", "-fno-sanitize=all", f"-DCF_BLOB_CAPACITY={capacity}", "-c",
                      str(src), "-o", str(obj)], self.env)
        if code != 0:
            raise UserError("compiling the cachefit library constructor failed",
                            f"check that {self.compiler[0]} can compile C")
        return obj

    def _blob_object(self, tmpdir: Path, capacity: int, cmd: CompilerCommand) -> Path:
        src = tmpdir / f"cachefit_blob_{capacity}.c"
        obj = src.with_suffix(".o")
        if obj.is_file():
            return obj
        # Each runtime object a library loaded with dlopen may call, linked in even when
        # the executable itself does not use it (the core, library objects, heap and
        # invocation entry points, memory operations, the backend's callbacks).
        anchors = ["__cachefit_rt_anchor", "__cachefit_shlib_load", "__cachefit_enter",
                   "__cachefit_memcpy",
                   "__sanitizer_cov_load1" if self.backend == "sanitizer-coverage" else
                   "__tsan_read1"]
        src.write_text(
            "/* generated by cachefit: filled in after linking */\n"
            f"__attribute__((used, aligned(64))) char __cachefit_blob[{capacity}] = "
            '"CACHEFIT-BLOB-1\\n";\n'
            + "".join(f"extern void {s}(void);\n" for s in anchors)
            + "__attribute__((used)) void (*const __cachefit_anchor[])(void) = {"
            + ", ".join(anchors) + "};\n")
        code = _call([*self.compiler, *self._target_flags(cmd), "-x", "c", "-O0", "-fPIC", "-c",
                      str(src), "-o", str(obj)], self.env)
        if code != 0:
            raise UserError("compiling the cachefit blob object failed",
                            f"check that {self.compiler[0]} can compile C")
        return obj
