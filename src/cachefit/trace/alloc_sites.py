"""Allocation sites of the traced types, from the profile build to `cachefit trace`.

The unit instrumenter (cachefit.trace.unit_instrument) notes every allocation site of a
traced type it sees in a unit: the sites it registers (malloc & co, `allocators`, typed
calls found without configuration, C++ `new`) and the candidates it does not (a call with
a `sizeof(T)` size whose result is not used as a `T *`; a call converted to `T *` whose
size it does not recognise, or that is also passed a `T *`). Each unit carries its notes
in a section of its object file that is not loaded (`.cachefit.sites`, one base64 JSON
record per unit, written by a top-level `asm`); the linker concatenates them into the
program. After a run, `missed_notes` reads them back from the traced programs and says,
for each traced type the profile touched no object of (or whose candidate sites were not
registered), where its objects come from and what to add to `cachefit.toml`. With the
runtime's count of objects registered per type (profile metadata `registered`, raw trace
`objects` lines), it tells a type no object of which was registered from one whose
registered objects no invocation touched. A C unit's note also names the definition
its record had (`dict@FP`); the program's blob maps it to the profile's type when the
program defines the name several times (issue 27, `definition_aliases`).

The link step also writes the number of unconverted notes into the program's blob
(`unconverted_sites`, `unconverted_count`); the raw trace carries it into the profile's
metadata, so that a run whose types were all touched and whose programs have none needs
no look at the programs (nor pyelftools' import, a fifth of `cachefit trace`'s own time).

Nothing here parses C or runs a program; the notes are the instrumenter's, read with
pyelftools.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.model.profile import Profile
from cachefit.model.type_names import plain_type_name

SECTION = ".cachefit.sites"
RECORD_END = b";"
MAX_LISTED = 8        # sites named per type and note

# kinds of a note: registered sites, then candidates that were not registered
REGISTERED = {"malloc": "registered (C library)", "allocator": "registered (allocators)",
              "typed": "registered (typed allocation)", "new": "registered (new)",
              "carve": "registered (carved out of a block)"}
UNCONVERTED = "unconverted"   # sizeof(T) size, result not used as T *: `allocators` helps
UNSIZED = "unsized"           # converted to T *, no size cachefit recognises
PASSES = "passes"             # converted to T *, but also passed a T * (realloc, copy)


@dataclass(frozen=True)
class SiteNote:
    """One allocation site of traced type `type_name`: where (the original source's file
    and line), the called function (a name, a function-pointer member such as `zalloc`,
    or empty when the callee is an expression) and what the instrumenter made of it."""

    type_name: str
    file: str
    line: int
    callee: str
    kind: str
    # the name the unit registers type_name's objects under, `dict@FP` (a C unit's
    # definition, issue 27; cachefit.model.record_fingerprint), or "" (C++, older notes)
    definition: str = ""

    @property
    def registered(self) -> bool:
        return self.kind in REGISTERED

    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> list[object]:
        head: list[object] = [self.type_name, self.file, self.line, self.callee, self.kind]
        return [*head, self.definition] if self.definition else head

    @staticmethod
    def from_json(v: object) -> SiteNote | None:
        if not isinstance(v, list) or len(v) not in (5, 6):
            return None
        t, f, line, callee, kind = v[:5]
        definition = v[5] if len(v) == 6 else ""
        if not (isinstance(t, str) and isinstance(f, str) and isinstance(line, int) and
                isinstance(callee, str) and isinstance(kind, str) and
                isinstance(definition, str)):
            return None
        return SiteNote(t, f, line, callee, kind, definition)


def section_asm(notes: Sequence[SiteNote]) -> str:
    """A top-level `asm` statement putting the unit's notes into SECTION (not loaded, so
    the program's memory and addresses do not change). base64 needs no escaping in the C
    string nor in the assembler's."""
    payload = json.dumps([n.to_json() for n in notes], separators=(",", ":"))
    b64 = base64.b64encode(payload.encode()).decode()
    return (f'__asm__(".pushsection {SECTION},\\"\\",%progbits\\n'
            f'.ascii \\"{b64}{RECORD_END.decode()}\\"\\n.popsection");')


def parse_section(data: bytes) -> list[SiteNote]:
    """The notes of SECTION's contents (the records of all units linked in); records
    that do not decode are skipped."""
    out: list[SiteNote] = []
    for record in data.replace(b"\0", b"").split(RECORD_END):
        if not record.strip():
            continue
        try:
            items = json.loads(base64.b64decode(record, validate=True))
        except (binascii.Error, ValueError):
            continue
        if isinstance(items, list):
            out.extend(n for n in map(SiteNote.from_json, items) if n is not None)
    return out


def read_site_notes(program: str | Path) -> list[SiteNote]:
    """The allocation-site notes of a program built in profile mode (none when it has no
    SECTION or is no ELF file)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        with open(program, "rb") as fh:
            sec = ELFFile(fh).get_section_by_name(SECTION)
            data = sec.data() if sec is not None else b""
    except (OSError, ELFError):
        return []
    return parse_section(data)


def unconverted_count(program: str | Path) -> int:
    """How many of a program's notes are candidates left unconverted (the blob's
    `unconverted_sites`, written at link time)."""
    return sum(n.kind == UNCONVERTED for n in read_site_notes(program))


def definition_aliases(program: str | Path) -> dict[str, str]:
    """The blob's `alias NAME@FP KEY` lines of a program built in profile mode: which
    traced type each definition its units noted became (issue 27); empty when it has no
    blob or names no definition."""
    from elftools.common.exceptions import ELFError

    from cachefit.trace.elf_objects import find_blob
    try:
        slot = find_blob(program)
        if slot is None:
            return {}
        with open(program, "rb") as fh:
            fh.seek(slot.file_offset)
            text = fh.read(slot.capacity).split(b"\0", 1)[0].decode(errors="replace")
    except (OSError, ELFError):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split(" ")
        if len(words) == 3 and words[0] == "alias" and "@" in words[1]:
            out[words[1]] = words[2]
    return out


def _with_definitions(notes: Iterable[SiteNote], aliases: dict[str, str]) -> list[SiteNote]:
    """The notes of one program with each noted definition's type key as type name."""
    return [SiteNote(aliases[n.definition], n.file, n.line, n.callee, n.kind, n.definition)
            if n.definition in aliases else n for n in notes]


def _callees(notes: Iterable[SiteNote]) -> list[str]:
    names: list[str] = []
    for n in notes:
        if n.callee and n.callee.isidentifier() and n.callee not in names:
            names.append(n.callee)
    return names


def _listed(notes: Sequence[SiteNote]) -> str:
    shown = [f"{n.where()} ({n.callee or 'a call'})" for n in notes[:MAX_LISTED]]
    more = len(notes) - MAX_LISTED
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def type_notes(type_name: str, touched: bool, notes: Sequence[SiteNote],
               registered: int | None = None) -> list[str]:
    """What to tell the user about one traced type (`touched`: the profile holds accesses
    to its objects), given the allocation sites of that type seen in the build and the
    number of its objects the runtime registered during the run (None: unknown, a
    runtime before the raw trace's `objects` lines). An untouched type is either one no
    object of which was registered (where do its objects come from) or one whose objects
    were registered but never touched during an invocation (the entry functions or the
    instrumentation miss the code that uses them). A type that is one definition of a
    shared name (`dict@deps/dict.h:55`, issue 27) gets the sites noted under its key
    (missed_notes maps each note's definition through the program's blob), else those
    noted under the plain name (notes of C++ units do not tell definitions apart)."""
    plain = plain_type_name(type_name)     # as the code spells it: sizeof(dict)
    same = {n for n in notes if n.type_name == type_name}
    if not same:    # one definition of a name several records share (`dict@file:line`)
        same = {n for n in notes if n.type_name == plain}
    mine = sorted(same, key=lambda n: (n.file, n.line, n.callee, n.kind))
    unconverted = [n for n in mine if n.kind == UNCONVERTED]
    unsized = [n for n in mine if n.kind in (UNSIZED, PASSES)]
    sites = [n for n in mine if n.registered]
    fix = _callees(unconverted)
    why = (f"its size is sizeof({plain}), but its result is not used as a pointer to "
           f"{plain}")
    add = (f'; to register the objects they return, add `allocators = '
           f'[{", ".join(json.dumps(f) for f in fix)}]` to [trace] in cachefit.toml'
           if fix else "")
    unsized_text = (f"calls whose result is used as a pointer to {plain} without a "
                    f"size cachefit recognises (register such objects with CACHEFIT_OBJECT "
                    f"of cachefit.h, or give the call a sizeof({plain}) size): "
                    f"{_listed(unsized)}" if unsized else "")
    if touched:
        if not unconverted:
            return []
        return [f"{type_name}: objects from allocation sites that cachefit does not register "
                f"are missing from the profile: {_listed(unconverted)} ({why}){add}"]
    if registered:
        objects = f"{registered} object{'s' if registered != 1 else ''}"
        return [f"{type_name}: {objects} of {type_name} "
                f"{'were' if registered != 1 else 'was'} registered, but none was touched "
                "during an invocation; check that the [trace] entry functions use them "
                "and that the code touching them is instrumented ([trace] instrument)"]
    what = "registered" if registered == 0 else "touched during an invocation"
    parts = [f"{type_name}: no object of {type_name} was {what}"]
    if not mine:
        parts.append(f"the build shows no allocation site of {type_name} (objects from a "
                     f"call without a sizeof({plain}) size need CACHEFIT_OBJECT of "
                     "cachefit.h)")
    if sites:
        parts.append(f"objects are registered at {_listed(sites)}"
                     + (" (none of them ran)" if registered == 0 else
                        "; if those run, check [trace] entry and instrument"))
    if unconverted:
        parts.append(f"not registered: {_listed(unconverted)} ({why}){add}")
    if unsized_text:
        parts.append(f"not registered: {unsized_text}")
    return ["; ".join(parts)]


def missed_notes(profile: Profile, programs: Sequence[str | Path] | None = None) -> list[str]:
    """Notes for the traced types of `profile` whose objects were not found: a type with
    no access at all, or one whose build has allocation sites cachefit did not register.
    The sites are read from `programs` (default: the profile's traced programs)."""
    # invocations cut off as runaway or lost to a full table touched objects too
    touched = {name: t.counted > 0 or t.runaway > 0 or t.table_full > 0
               for name, t in profile.types.items()}
    if programs is None:
        raw = profile.metadata.get("programs", [])
        programs = [p for p in raw if isinstance(p, str)] if isinstance(raw, list) else []
        known = profile.metadata.get("unconverted_sites")
        if all(touched.values()) and isinstance(known, dict) and \
                all(known.get(p) == 0 for p in programs):
            return []   # what the programs' blobs said at link time: nothing to read
    by_program: dict[str, tuple[str | Path, list[SiteNote]]] = {}
    for p in programs:
        key = str(Path(p).resolve()) if Path(p).exists() else str(p)
        if key not in by_program:
            by_program[key] = (p, read_site_notes(p))
    if all(touched.values()) and not any(n.kind == UNCONVERTED for _, mine in
                                         by_program.values() for n in mine):
        return []   # type_notes says nothing then: no blob to read (a symbol table lookup)
    notes: list[SiteNote] = []
    for p, mine in by_program.values():
        notes.extend(_with_definitions(mine, definition_aliases(p)))
    counts = profile.metadata.get("registered")
    registered = counts if isinstance(counts, dict) else {}
    out: list[str] = []
    for name in sorted(profile.types):
        n = registered.get(name)
        out.extend(type_notes(name, touched[name], notes,
                              n if isinstance(n, int) and not isinstance(n, bool) else None))
    return out
