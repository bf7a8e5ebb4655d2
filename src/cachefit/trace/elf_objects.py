"""Link-step facts from a linked profile build: target objects in static storage, type
layouts, typedef aliases; and patching them into the program's or library's cachefit blob.

Global and static variables whose type is, or contains, a target type (plain, arrays,
structs holding them, arrays of such structs: a strided array) are found in the DWARF
debug information and listed with their link-time addresses; the runtime adds the load
bias. An executable's copies of variables defined in a shared library (COPY relocations
of variables its debug information declares) are listed too. The blob is a fixed-size
char array that the link step defines (`__cachefit_blob` in an executable, the hidden
`__cachefit_shlib_blob` in a shared library); it is filled in place in the output file
so that no address moves. A shared library's exported variables are listed with the
GOT slot its code reads their address from, since an executable may hold the variable
instead (copy relocation). Layouts, sizes and array bounds are the front end's reading
of the DWARF (`cachefit.frontend.dwarf_records`); a type it cannot lay out gets no layout
and a reason in `ElfFacts.problems`, never a guessed size. This module never runs a
compiler or the program.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.dwarf.die import DIE
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from cachefit.errors import CachefitError, TypeNotFound, UserError
from cachefit.frontend.dwarf_definitions import decl_place as _decl_place
from cachefit.frontend.dwarf_definitions import die_fingerprint, project_root
from cachefit.frontend.dwarf_records import DwarfReader, die_key
from cachefit.model import Record
from cachefit.model.profile import FieldSpan
from cachefit.model.type_names import definition_matches, definition_name, split_definition

BLOB_SYMBOL = "__cachefit_blob"
SHLIB_BLOB_SYMBOL = "__cachefit_shlib_blob"
BLOB_MAGIC = b"CACHEFIT-BLOB-1\n"
MAX_OCCURRENCES = 4096

_RECORDS = {"DW_TAG_structure_type", "DW_TAG_class_type", "DW_TAG_union_type"}


@dataclass(frozen=True)
class StaticObject:
    """Objects of a target type in static storage: `count` of `elem` bytes, `stride` apart."""

    address: int
    count: int
    elem: int
    stride: int
    type_name: str
    variable: str
    symbol: str | None = None        # the ELF symbol of an external variable
    variable_address: int = 0        # link-time address of the whole variable


@dataclass
class TypeLayout:
    name: str
    size: int
    fields: list[FieldSpan]


@dataclass
class ElfFacts:
    objects: list[StaticObject] = field(default_factory=list)
    layouts: dict[str, TypeLayout] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    has_debug_info: bool = True
    problems: dict[str, str] = field(default_factory=dict)
    """Per target type: why its layout is missing or doubtful (said by the link step)."""
    definitions: dict[str, list[Definition]] = field(default_factory=dict)
    """Per `[trace] types` entry whose objects are told apart by definition (issue 27): a
    plain name with several definitions in the program, or a `name@path[:line]` entry;
    the blob lists their keys as types instead of the entry."""

    def type_names(self, types: tuple[str, ...]) -> list[str]:
        """The runtime's types for `types`: each entry, or the keys of its definitions."""
        out: list[str] = []
        for t in types:
            out += [d.key for d in self.definitions.get(t, [])] or [t]
        return out


@dataclass(frozen=True)
class Definition:
    """One definition of a traced record, told apart from the others of its name: the
    type's key (`dict@deps/hiredis/dict.h:55`, or the user's `[trace] types` entry), the
    plain name and the layout fingerprint its instrumented units register it with
    (cachefit.model.record_fingerprint)."""

    key: str
    name: str
    fingerprint: str


def _name(die: DIE) -> str | None:
    attr = die.attributes.get("DW_AT_name")
    if attr is None:
        return None
    v = attr.value
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def _type_of(die: DIE) -> DIE | None:
    """A variable's type, also through the declaration its definition completes."""
    if "DW_AT_type" in die.attributes:
        return die.get_DIE_from_attribute("DW_AT_type")
    for ref in ("DW_AT_specification", "DW_AT_abstract_origin"):
        if ref in die.attributes:
            return _type_of(die.get_DIE_from_attribute(ref))
    return None


def _attr_text(die: DIE, names: tuple[str, ...]) -> str | None:
    """The first of `names` on the DIE or on the declaration it completes."""
    for ref in (None, "DW_AT_specification", "DW_AT_abstract_origin"):
        d = die if ref is None else (die.get_DIE_from_attribute(ref)
                                     if ref in die.attributes else None)
        if d is None:
            continue
        for n in names:
            attr = d.attributes.get(n)
            if attr is not None:
                v = attr.value
                return v.decode(errors="replace") if isinstance(v, bytes) else str(v)
    return None


def _symbol_of(var: DIE) -> str | None:
    """The ELF symbol of a variable with external linkage (None for static ones)."""
    external = var.attributes.get("DW_AT_external")
    if external is None and "DW_AT_specification" in var.attributes:
        external = var.get_DIE_from_attribute("DW_AT_specification").attributes.get(
            "DW_AT_external")
    if external is None or not external.value:
        return None
    return _attr_text(var, ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_name"))


class _CuTypes:
    """Target resolution within one compile unit: where target objects sit inside a type
    (sizes, array bounds and member offsets are the front end's reading of the DWARF)."""

    def __init__(self, targets: set[str], reader: DwarfReader) -> None:
        self.targets = targets
        self.reader = reader
        self.target_of: dict[int, str] = {}     # record DIE (die_key) -> target name
        self._occ: dict[int, tuple[tuple[int, int, int, int, str], ...]] = {}

    def count(self, array: DIE) -> int:
        n = 1
        for d in self.reader.dims(array) or [None]:
            n *= d or 0
        return n

    def occurrences(self, die: DIE | None) -> tuple[tuple[int, int, int, int, str], ...]:
        reader = self.reader
        die = reader.strip(die)
        if die is None:
            return ()
        if die.tag in _RECORDS:
            die = reader.definition(die)
        key = die_key(die)
        if key in self._occ:
            return self._occ[key]
        self._occ[key] = ()   # recursion guard
        out: list[tuple[int, int, int, int, str]] = []
        if die.tag in _RECORDS:
            name = self.target_of.get(die_key(die))
            if name is not None:
                size = reader.type_size(die)
                if size > 0:
                    out.append((0, 1, size, size, name))
            else:
                for m in die.iter_children():
                    if m.tag not in ("DW_TAG_member", "DW_TAG_inheritance"):
                        continue
                    if "DW_AT_bit_size" in m.attributes or "DW_AT_external" in m.attributes:
                        continue
                    off = reader.location(m)[0]
                    if off is None:
                        continue
                    for o in self.occurrences(reader.type_of(m)):
                        out.append((o[0] + off, *o[1:]))
        elif die.tag == "DW_TAG_array_type":
            n = self.count(die)
            elem = reader.type_of(die)
            esize = reader.type_size(elem)
            for o in self.occurrences(elem):
                if n <= 0:
                    break
                if o[1] == 1:
                    out.append((o[0], n, o[2], esize, o[4]))
                else:
                    out.extend((i * esize + o[0], o[1], o[2], o[3], o[4]) for i in range(n))
                if len(out) > MAX_OCCURRENCES:
                    break
        result = tuple(out[:MAX_OCCURRENCES])
        self._occ[key] = result
        return result


def _unique(fields: list[FieldSpan]) -> list[FieldSpan]:
    """One entry per field: a virtual base reached on several paths, and the vtable
    pointer a class shares with its primary bases, are listed once."""
    out: dict[tuple[int, str], FieldSpan] = {}
    vptrs: dict[int, FieldSpan] = {}
    for f in fields:
        if f.name.startswith("<vptr"):
            have = vptrs.get(f.offset)
            if have is None or len(f.name) < len(have.name):
                vptrs[f.offset] = f
        else:
            out.setdefault((f.offset, f.name), f)
    return sorted([*out.values(), *vptrs.values()], key=lambda f: (f.offset, f.name))


def _spans(reader: DwarfReader, rec: Record, base_off: int, prefix: str,
           depth: int) -> list[FieldSpan]:
    """The record's fields as byte spans, with the members of base classes flattened in as
    `Base::member` (a base subobject is not a field one could move)."""
    out: list[FieldSpan] = []
    if rec.vptr_offset is not None:
        out.append(FieldSpan(f"<vptr {prefix[:-2]}>" if prefix else "<vptr>",
                             base_off + rec.vptr_offset, reader.addr_size))
    for b in rec.bases:
        inner: list[FieldSpan] = []
        if depth < 16:
            try:
                inner = _spans(reader, reader.find(b.name), base_off + b.offset,
                               f"{prefix}{b.name}::", depth + 1)
            except CachefitError:   # a base not found by its name: kept whole
                inner = []
        out += inner or [FieldSpan(f"<base {b.name}>", base_off + b.offset, b.size)]
    for f in rec.fields:
        size = (f.end - f.offset) if f.bit_size is not None else f.size
        out.append(FieldSpan(prefix + f.name, base_off + f.offset, size))
    return out


def _definitions(reader: DwarfReader, types: tuple[str, ...], root: str,
                 facts: ElfFacts) -> None:
    """Which `[trace] types` entries are told apart by definition (ElfFacts.definitions):
    a plain name the program defines with several layouts (each definition its own type,
    keyed `name@path:line`), and a `name@path[:line]` entry (the definitions of `name`
    there). Definitions with one fingerprint are one."""
    for t in types:
        name, where = split_definition(t)
        try:
            found = reader.definitions(name)
        except Exception:  # noqa: BLE001 - said by _layouts for plain names
            continue
        by_fp: dict[str, tuple[DIE, tuple[str, int] | None]] = {}
        for die, _rec in found:
            by_fp.setdefault(die_fingerprint(reader, die),
                             (die, _decl_place(reader, die, root)))
        if where is not None:
            chosen = [Definition(t, name, fp) for fp, (_d, place) in by_fp.items()
                      if place is not None and definition_matches(where, place[0], place[1],
                                                                 root)]
            facts.definitions[t] = chosen
        elif len(by_fp) > 1:
            defs: list[Definition] = []
            for fp, (_d, place) in by_fp.items():
                key = definition_name(name, *place) if place is not None else f"{name}@{fp}"
                if any(d.key == key for d in defs):
                    key = f"{name}@{fp}"
                defs.append(Definition(key, name, fp))
            facts.definitions[t] = defs
            facts.problems[t] = (f"{len(defs)} different definitions of {name}, traced as "
                                 f"{len(defs)} types: {', '.join(d.key for d in defs)} "
                                 "(name one in [trace] types to trace only it)")
        for d in facts.definitions.get(t, []):
            facts.aliases[f"{name}@{d.fingerprint}"] = d.key


def _layouts(reader: DwarfReader, types: tuple[str, ...], facts: ElfFacts) -> None:
    """Each target type's layout, from the front end's reading of the DWARF. A type the
    file cannot lay out (a member's class only declared) gets no layout and a problem,
    never a guessed size; one with several definitions uses the first and says so, unless
    they are told apart (ElfFacts.definitions: each definition's layout)."""
    for name in types:
        if name in facts.definitions:
            _definition_layouts(reader, facts.definitions[name], facts)
            continue
        try:
            found = reader.definitions(name)
        except TypeNotFound:
            continue        # not in this file (a library need not hold every type)
        except CachefitError as exc:
            facts.problems[name] = exc.what + (f"; {exc.todo}" if exc.todo else "")
            continue
        except Exception as exc:  # noqa: BLE001 - pyelftools on a broken file
            facts.problems[name] = f"cannot read its layout from the DWARF: {exc}"
            continue
        rec = found[0][1]
        if len(found) > 1:
            facts.problems[name] = (f"{len(found)} different definitions of {rec.name}; "
                                    "the profile uses the first one's layout")
        try:
            fields = _spans(reader, rec, 0, "", 0)
        except CachefitError as exc:
            facts.problems[name] = exc.what + (f"; {exc.todo}" if exc.todo else "")
            continue
        facts.layouts[name] = TypeLayout(name, rec.size, _unique(fields))


def _definition_layouts(reader: DwarfReader, defs: list[Definition], facts: ElfFacts) -> None:
    """The layout of each definition told apart, under its key."""
    if not defs:
        return
    wanted = {d.fingerprint: d for d in defs}
    for die, rec in reader.definitions(defs[0].name):
        d = wanted.pop(die_fingerprint(reader, die), None)
        if d is None:
            continue
        try:
            fields = _spans(reader, rec, 0, "", 0)
        except CachefitError as exc:
            facts.problems[d.key] = exc.what + (f"; {exc.todo}" if exc.todo else "")
            continue
        facts.layouts[d.key] = TypeLayout(d.key, rec.size, _unique(fields))


class _Resolver:
    """The traced type a record DIE is: its plain name, or for a name told apart by
    definition the key of the definition with the DIE's fingerprint (None: a definition
    that is not traced)."""

    def __init__(self, reader: DwarfReader, facts: ElfFacts) -> None:
        self.reader = reader
        self.by_name: dict[str, dict[str, str]] = {}
        for defs in facts.definitions.values():
            for d in defs:
                self.by_name.setdefault(d.name, {})[d.fingerprint] = d.key

    def __call__(self, name: str | None, die: DIE) -> str | None:
        if name is None or name not in self.by_name:
            return name
        return self.by_name[name].get(die_fingerprint(self.reader, die))


def _target_named(reader: DwarfReader, die: DIE, targets: set[str]) -> str | None:
    """The target type a named record DIE is, by qualified or plain name (None: none)."""
    simple = _name(die)
    if simple is None:
        return None
    q = reader.qualified_name(die)
    return q if q in targets else (simple if simple in targets else None)


def analyze(elf_path: str | Path, types: tuple[str, ...], root: str | None = None) -> ElfFacts:
    """Static objects of the target types, their layouts and typedef aliases; a record
    name with several definitions is told apart by definition, named with paths relative
    to `root` (default: `project_root()`)."""
    facts = ElfFacts()
    targets = {split_definition(t)[0] for t in types}
    try:
        fh = open(elf_path, "rb")
    except OSError as exc:
        raise UserError(f"cannot read {elf_path}: {exc.strerror}") from exc
    with fh:
        try:
            elf = ELFFile(fh)
        except ELFError as exc:
            raise UserError(f"{elf_path} is not an ELF file: {exc}") from exc
        if not elf.has_dwarf_info():
            facts.has_debug_info = False
            return facts
        fh.seek(0)
        reader = DwarfReader(str(elf_path), fh)
        dwarf = reader.dwarf
        parser = DWARFExprParser(dwarf.structs)
        _definitions(reader, types, root or project_root(), facts)
        resolve = _Resolver(reader, facts)
        seen_addr: set[tuple[int, str]] = set()
        # Variables declared here but defined in a shared library: an executable that
        # refers to one directly holds a copy of it (a COPY relocation), used by all.
        copy_candidates: dict[str, tuple[tuple[int, int, int, int, str], ...]] = {}
        # Target types defined in type units (-fdebug-types-section): any unit may use them.
        in_type_units: dict[int, str] = {}
        if dwarf.has_debug_types():
            for tu in dwarf.iter_TUs():
                for die in tu.iter_DIEs():
                    if die.tag in _RECORDS and "DW_AT_declaration" not in die.attributes:
                        name = resolve(_target_named(reader, die, targets), die)
                        if name is not None:
                            in_type_units[die_key(die)] = name
        for cu in dwarf.iter_CUs():
            cu_types = _CuTypes(targets, reader)
            cu_types.target_of.update(in_type_units)
            variables: list[DIE] = []
            declared: list[DIE] = []
            typedefs: list[DIE] = []
            relevant = False    # the unit defines or declares a target type
            for die in cu.iter_DIEs():
                tag = die.tag
                if tag in _RECORDS:
                    name = _target_named(reader, die, targets)
                    if name is None:
                        continue
                    relevant = True
                    defn = die if "DW_AT_declaration" not in die.attributes \
                        else reader.definition(die)   # defined in another unit or type unit
                    key = resolve(name, defn)
                    if key is not None:
                        cu_types.target_of[die_key(defn)] = key
                elif tag == "DW_TAG_typedef":
                    typedefs.append(die)
                elif tag == "DW_TAG_variable" and "DW_AT_location" in die.attributes:
                    variables.append(die)
                elif tag == "DW_TAG_variable" and "DW_AT_declaration" in die.attributes:
                    declared.append(die)
            for td in typedefs:
                tname = reader.qualified_name(td) if _name(td) else None
                under = reader.strip(reader.type_of(td))
                if under is None or under.tag not in _RECORDS:
                    continue
                under_key = die_key(under)
                if tname in targets and under_key not in cu_types.target_of:
                    key = resolve(tname, reader.definition(under)
                                  if "DW_AT_declaration" in under.attributes else under)
                    if key is not None:
                        cu_types.target_of[under_key] = key
                elif under_key in cu_types.target_of and tname and \
                        tname != cu_types.target_of[under_key] and \
                        split_definition(cu_types.target_of[under_key])[1] is None:
                    facts.aliases[tname] = cu_types.target_of[under_key]
            if not relevant and not cu_types.target_of:
                continue
            for var in declared:
                symbol = _symbol_of(var)
                occ = cu_types.occurrences(_type_of(var))
                if symbol and occ:
                    copy_candidates.setdefault(symbol, occ)
            for var in variables:
                loc = var.attributes["DW_AT_location"]
                if not isinstance(loc.value, list):
                    continue
                ops = parser.parse_expr(loc.value)
                if len(ops) != 1:
                    continue
                if ops[0].op_name == "DW_OP_addr":
                    addr = int(ops[0].args[0])
                elif ops[0].op_name in ("DW_OP_addrx", "DW_OP_GNU_addr_index"):
                    addr = dwarf.get_addr(cu, int(ops[0].args[0]))
                else:
                    continue
                vname = _attr_text(var, ("DW_AT_name",)) or "?"
                symbol = _symbol_of(var)
                for off, count, elem, stride, tname in cu_types.occurrences(_type_of(var)):
                    key = (addr + off, tname)
                    if key in seen_addr or count <= 0:
                        continue
                    seen_addr.add(key)
                    facts.objects.append(StaticObject(addr + off, count, elem, stride, tname,
                                                      vname, symbol, addr))
        copies = _dynamic_relocations(elf, _COPY, set(copy_candidates))
        for symbol, addr in sorted(copies.items()):
            for off, count, elem, stride, tname in copy_candidates[symbol]:
                key = (addr + off, tname)
                if key not in seen_addr and count > 0:
                    seen_addr.add(key)
                    facts.objects.append(StaticObject(addr + off, count, elem, stride, tname,
                                                      symbol, symbol, addr))
        _layouts(reader, types, facts)
    return facts


# Dynamic relocation numbers (e_machine -> r_type): GLOB_DAT fills the GOT slot of a
# data symbol, COPY copies a library's variable into the executable.
_GLOB_DAT = {"EM_X86_64": 6, "EM_386": 6, "EM_AARCH64": 1025}
_COPY = {"EM_X86_64": 5, "EM_386": 5, "EM_AARCH64": 1024}


def _dynamic_relocations(elf: ELFFile, kinds: dict[str, int],
                         symbols: set[str]) -> dict[str, int]:
    """{symbol: r_offset} of the dynamic relocations of one kind naming `symbols`."""
    out: dict[str, int] = {}
    rtype = kinds.get(elf["e_machine"])
    if not symbols or rtype is None:
        return out
    for sec in elf.iter_sections():
        if sec["sh_type"] not in ("SHT_RELA", "SHT_REL") or not sec["sh_flags"] & 2:
            continue   # only relocations the dynamic loader applies (SHF_ALLOC)
        symtab = elf.get_section(sec["sh_link"])
        if not isinstance(symtab, SymbolTableSection):
            continue
        for rel in sec.iter_relocations():
            if rel["r_info_type"] != rtype or rel["r_info_sym"] == 0:
                continue
            name = symtab.get_symbol(rel["r_info_sym"]).name
            if name in symbols:
                out.setdefault(name, int(rel["r_offset"]))
    return out


def got_slots(elf_path: str | Path, symbols: set[str]) -> dict[str, int]:
    """Link-time addresses of the GOT slots through which a shared library's code reads
    the address of `symbols` (dynamic GLOB_DAT relocations); symbols without one are
    left out (the library then uses its own copy)."""
    with open(elf_path, "rb") as fh:
        return _dynamic_relocations(ELFFile(fh), _GLOB_DAT, symbols)


def blob_text(self_address: int, facts: ElfFacts, types: tuple[str, ...],
              entries: tuple[str, ...], limits: dict[str, int], meta: dict[str, Any],
              got: dict[str, int] | None = None) -> bytes:
    """The text the runtime reads at startup or at a library's load (see
    docs/raw-trace-format.md); `got` (libraries only) adds `via GOT VAR` to the objects
    of exported variables."""
    lines = [BLOB_MAGIC.decode().rstrip("\n"), f"self {self_address:x}"]
    lines += [f"limit {k} {v}" for k, v in limits.items()]
    lines += [f"type {t}" for t in facts.type_names(types)]
    lines += [f"alias {a} {t}" for a, t in sorted(facts.aliases.items()) if " " not in a]
    lines += [f"entry {e}" for e in entries]
    for o in facts.objects:
        line = f"global {o.address:x} {o.count} {o.elem} {o.stride} {o.type_name}"
        slot = (got or {}).get(o.symbol or "")
        if slot is not None:
            line += f" via {slot:x} {o.variable_address:x}"
        lines.append(line)
    # Each traced type's fields as byte spans, for the runtime's summaries by field
    # footprint (runtime/src/cf_fields.c); the same facts as the layout line's.
    lines += [f"fields {name} " + " ".join(f"{f.offset}:{f.size}" for f in lay.fields)
              for name, lay in sorted(facts.layouts.items())
              if lay.fields and " " not in name]
    layout = {
        "types": {name: {"size": lay.size, "fields": [f.to_json() for f in lay.fields]}
                  for name, lay in sorted(facts.layouts.items())},
        **meta,
    }
    lines.append("layout " + json.dumps(layout, separators=(",", ":"), sort_keys=True))
    return ("\n".join(lines) + "\n").encode()


@dataclass(frozen=True)
class BlobSlot:
    address: int
    file_offset: int
    capacity: int


def find_blob(elf_path: str | Path, symbol: str = BLOB_SYMBOL) -> BlobSlot | None:
    """Where the blob symbol lives in the file."""
    with open(elf_path, "rb") as fh:
        elf = ELFFile(fh)
        symtab = elf.get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            return None
        syms = symtab.get_symbol_by_name(symbol)
        if not syms:
            return None
        sym = syms[0]
        sec = elf.get_section(sym["st_shndx"]) if isinstance(sym["st_shndx"], int) else None
        if sec is None or sec["sh_type"] == "SHT_NOBITS":
            return None
        off = sec["sh_offset"] + (sym["st_value"] - sec["sh_addr"])
        slot = BlobSlot(sym["st_value"], off, sym["st_size"])
    with open(elf_path, "rb") as fh:
        fh.seek(slot.file_offset)
        if fh.read(len(BLOB_MAGIC)) != BLOB_MAGIC:
            return None
    return slot


def patch_blob(elf_path: str | Path, slot: BlobSlot, payload: bytes) -> None:
    if len(payload) + 1 > slot.capacity:
        raise ValueError("blob payload larger than its slot")
    with open(elf_path, "r+b") as fh:
        fh.seek(slot.file_offset)
        fh.write(payload + b"\0" * (slot.capacity - len(payload)))
