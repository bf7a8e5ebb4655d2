"""Where a record comes from on the command line: FILEs with arguments, a compilation
database (-p), or an ELF file's DWARF (--binary). Chooses the front end; parses nothing itself."""

from __future__ import annotations

from collections.abc import Sequence

from cachefit.errors import TypeNotFound, UserError
from cachefit.frontend.clang_records import load_record, not_found_in_any
from cachefit.frontend.compile_db import commands_for
from cachefit.model import Record


def load_record_for_cli(type_name: str, files: Sequence[str], build_dir: str | None,
                        binary: str | None, args: Sequence[str]) -> Record:
    if binary:
        from cachefit.frontend.dwarf_records import read_record
        return read_record(binary, type_name)
    misses: list[TypeNotFound] = []
    if build_dir:
        for cmd in commands_for(build_dir, list(files)):
            try:
                return load_record(cmd.file, [*cmd.args, *args], type_name)
            except TypeNotFound as exc:
                misses.append(exc)
        if misses:
            raise not_found_in_any(type_name, misses)
        raise UserError(f"{build_dir}/compile_commands.json lists no unit",
                        "build the project once so the database is filled")
    if not files:
        raise UserError("no source given", "name FILEs, or -p BUILD_DIR, or --binary ELF")
    for f in files:
        try:
            return load_record(f, list(args), type_name)
        except TypeNotFound as exc:
            misses.append(exc)
    raise not_found_in_any(type_name, misses)
