"""`cachefit cc` / `cachefit c++` in optimize mode: build with the layout plan applied.

For every C/C++ source of a compile command: preprocess with the real compiler and the
same flags (this also writes the dependency file, naming the original source and
headers), look the object up in the content cache (cachefit.pipeline.unit_cache), and on a
miss flatten the plan's classes and reorder its records in the preprocessed text
(cachefit.pipeline.unit_transform) and compile that text with the user's flags minus the
preprocessor's. Units that define none of the plan's types are compiled from the
original source, unchanged. Assembler and other languages, link-only commands, queries,
preprocess-only commands (-E, -M, -MM) and -fsyntax-only go to the real compiler as they
are; a command that compiles and links gets its objects compiled here and linked by the
real compiler.
Original sources are never written; scratch files live in a temporary directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from cachefit.errors import UserError
from cachefit.frontend.compiler_args import (
    CompilerCommand,
    Language,
    Source,
    parse_command,
    select,
    unit_language,
    unit_suffix,
)
from cachefit.model.layout_plan import LayoutPlan, find_plan
from cachefit.model.project_config import ProjectConfig
from cachefit.pipeline.unit_transform import apply_plan, mentioned_names
from cachefit.pipeline.wrapper_steps import (
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


def run(language: Language, argv: list[str], config: ProjectConfig, compiler: list[str],
        env: Mapping[str, str]) -> WrapperResult:
    """One optimize-mode compiler invocation."""
    plan = find_plan(config.path, config.build.layouts, env)
    if plan is None:
        raise UserError("optimize mode needs a layout plan",
                        "set CACHEFIT_LAYOUTS=plan.json or [build] layouts in cachefit.toml "
                        "(docs/layout-plan.md)")
    return OptimizeBuild(plan, compiler, language, env).run(argv)


class OptimizeBuild:
    """The compile steps of one optimize-mode command."""

    def __init__(self, plan: LayoutPlan, compiler: list[str], language: Language,
                 env: Mapping[str, str]) -> None:
        self.plan = plan
        self.compiler = compiler
        self.language = language
        self.env = dict(env)
        self.warnings: list[str] = []
        from cachefit.pipeline.unit_cache import UnitCache
        self.cache = UnitCache.from_env(self.env, self.warnings)

    def run(self, argv: list[str]) -> WrapperResult:
        cmd = parse_command(argv)
        c_family = [s for s in cmd.sources if s.is_c_family]
        if produces_no_code(cmd) or not c_family:
            return WrapperResult(call([*self.compiler, *argv], self.env), self.warnings)
        with scratch_directory("cachefit-opt-") as tmpdir:
            objects: dict[int, str] = {}
            for n, src in enumerate(cmd.sources):
                out = output_for(cmd, src, tmpdir, n)
                code = self._compile(cmd, src, out, tmpdir, n)
                if code != 0:
                    return WrapperResult(code, self.warnings)
                objects[src.index] = out
            if cmd.action != "link":
                return WrapperResult(0, self.warnings)
            return WrapperResult(call([*self.compiler, *link_args(cmd, objects)], self.env),
                                 self.warnings)

    def _compile(self, cmd: CompilerCommand, src: Source, out: str, tmpdir: Path,
                 n: int) -> int:
        if not src.is_c_family:
            return compile_unchanged(self.compiler, cmd, src, out, self.env)
        lang = unit_language(src)
        unit = tmpdir / f"{n}-{'stdin' if src.path == '-' else Path(src.path).stem}" \
                        f"{unit_suffix(lang)}"
        if src.lang in ("c-cpp-output", "c++-cpp-output"):
            text = Path(src.path).read_bytes()
        else:
            code = preprocess(self.compiler, cmd, src, out, unit, self.env)
            if code != 0:
                return code
            text = unit.read_bytes()
        names = mentioned_names(text, self.plan.type_names)
        key = self.cache.key(text, cmd, self.compiler, self.plan.entries_for(names),
                             os.getcwd(), lang) if self.cache.enabled else None
        hit = self.cache.fetch(key, out) if key is not None else None
        if hit is not None:
            if hit.unit_text is not None:
                save_unit_copy(self.env, src, lang, hit.unit_text, cmd.args, out)
            if hit.messages:        # the compiler's warnings of the first compile
                sys.stderr.buffer.write(hit.messages)
                sys.stderr.buffer.flush()
            return 0
        messages_out: list[bytes] = []
        code, transformed = self._transform_and_compile(cmd, src, lang, text, unit, out,
                                                        messages_out)
        if code == 0 and key is not None:
            self.cache.store(key, out, transformed, b"".join(messages_out))
        return code

    def _transform_and_compile(self, cmd: CompilerCommand, src: Source, lang: Language,
                               text: bytes, unit: Path, out: str,
                               messages: list[bytes]) -> tuple[int, bytes | None]:
        """Apply the plan and compile (the compiler's messages are also collected in
        `messages`); returns the exit code and the transformed text (None when the plan
        left the unit alone)."""
        source = "<stdin>" if src.path == "-" else src.path
        result = apply_plan(text, lang, self.plan, parse_args_for_unit(lang, cmd.args), unit,
                            source)
        self.warnings.extend(result.warnings)
        if not result.changed:
            if src.path == "-":     # stdin was read by the preprocessor: compile its output
                unit.write_bytes(text)
                return compile_preprocessed(self.compiler, cmd, lang, unit, out, self.env,
                                            stderr_copy=messages), None
            return compile_unchanged(self.compiler, cmd, src, out, self.env, with_deps=False,
                                     stderr_copy=messages), None
        unit.write_bytes(result.text)
        # The binaries' DWARF is checked against the plan: every class of the unit whole.
        debug = full_debug_args(self.compiler, self.env, lang) \
            if has_debug(select(cmd, keep={"other"})) else []
        code = compile_preprocessed(self.compiler, cmd, lang, unit, out, self.env, debug,
                                    stderr_copy=messages, source=src.path)
        if code == 0:       # as in profile builds, only units that compiled are kept
            save_unit_copy(self.env, src, lang, result.text, cmd.args, out)
        return code, result.text
