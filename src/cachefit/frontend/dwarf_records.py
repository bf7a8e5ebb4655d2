"""Records of an ELF file's DWARF debug information as `cachefit.model.Record`s (pyelftools).

`read_record(elf, name)` finds one struct/class/union by qualified, partially qualified
(`tcb` -> `ns::tcb`) or template-instantiation name (`ring<int,16>`; spaces, integer suffixes
and inline namespaces such as `std::__cxx11` do not matter) and builds only that record;
`list_records(elf)` builds every named record once (identical definitions repeated across
units are one record). Objects and executables built with `-g` are read: DWARF 4 and 5 from
gcc and clang are tested, DWARF 2/3 member locations (`DW_OP_plus_uconst`) are understood.
Offsets, sizes, bit positions (both `DW_AT_bit_offset` and `DW_AT_data_bit_offset`), bases,
vtable pointers and access come from the debug information; errors are raised as
`cachefit.errors` exceptions (TypeNotFound with the closest names, AmbiguousType with the
qualified names), never printed. This module does not compile, run or disassemble anything,
does not write to the ELF file, and reads no source file.

DWARF does not state everything the model holds; where it does not, this module derives:

* Record alignment: `DW_AT_alignment` when the compiler emitted it (gcc and clang do for
  `aligned`/`alignas` records, clang also for `#pragma pack(N)`); otherwise the largest
  alignment of the members and bases (base types: their size, capped by the target, complex
  types half their size), lowered when the layout shows packing (a member off its alignment,
  or a size that is not a multiple of it): to 1 when the record has no tail padding, else to
  the largest alignment its padding fits. So a packed record whose members all happen to be
  aligned, and whose size is a multiple of their alignment, shows its natural alignment, and
  a gcc-built `#pragma pack(N)` record without tail padding shows 1. Field alignment is the
  type's alignment, or the member's `DW_AT_alignment` (written for `alignas`/`aligned`).
* Virtual-base offsets: DWARF gives them as an expression reading the vtable at run time.
  They are read from the record's vtable group (`_ZTV...`, demangled with `c++filt`) in the
  ELF file: each vtable of the group is found by its typeinfo pointer and offset-to-top, and
  the expression's slot is read below its address point. When the vtable is not in the file
  (the class is never constructed there, `-fno-rtti`, no `c++filt`), the offsets are
  estimated the Itanium-ABI way (virtual bases after the non-virtual part in inheritance
  order, a nearly empty one shares offset 0 as the primary base, empty ones sit at 0) and
  may be wrong in unusual hierarchies.
* Names and type spellings: gcc's base-type names are respelled like clang's (`long int` ->
  `long`, `model.type_names.clang_type_words`); names are matched by `type_key`, then by
  `loose_type_key`; a field's type is spelled without the scopes it shares with the record, so it
  reads like the source (typedef names kept, C++ records without `struct`); unnamed types
  read `struct {...}`. Source extents are not recorded (None).

* Array bounds: read as signed numbers of the subrange's index type, so gcc's upper bound -1
  of a zero-length array (`T x[0]`; as `DW_FORM_implicit_const 4294967295` with -m32 and
  DWARF 5) gives 0 elements, not 2**32. A flexible array member (`T x[]`, `T x[0]`) is a field
  of size 0 spelled `T[]`/`T[0]`, which is how the layout stages recognise it.

Type units of DWARF 4 (`-gdwarf-4 -fdebug-types-section`, the `.debug_types` section) are read:
a declaration with a type signature is completed by its type unit's definition. A class
declared in one unit and defined in another is completed the same way; one that no unit
defines (clang's limited debug information: a class whose constructor or key function is in
a library without debug information) makes the record unreadable (`IncompleteRecord`, naming
the member and `-fstandalone-debug`), never a guessed size.

Not supported: split DWARF (.dwo), DWARF 5 type units (refused, naming -gdwarf-4), records
local to a function, big-endian and 32-bit targets beyond the obvious (untested).
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from elftools.common.exceptions import DWARFError, ELFError
from elftools.dwarf.die import DIE
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.dwarfinfo import DWARFInfo
from elftools.dwarf.typeunit import TypeUnit
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from cachefit.errors import AmbiguousType, TypeNotFound, UserError
from cachefit.input_files import require_file
from cachefit.model import Base, Field, Record
from cachefit.model.record_layout import RecordKind
from cachefit.model.type_names import (
    clang_type_words,
    key_matches,
    loose_type_key,
    type_key,
)

_RECORD_TAGS: dict[str, RecordKind] = {"DW_TAG_structure_type": "struct",
                                       "DW_TAG_class_type": "class",
                                       "DW_TAG_union_type": "union"}
_QUALIFIER_TAGS = {"DW_TAG_const_type": "const", "DW_TAG_volatile_type": "volatile",
                   "DW_TAG_restrict_type": "restrict", "DW_TAG_atomic_type": "_Atomic"}
_SCOPE_TAGS = {"DW_TAG_namespace", *_RECORD_TAGS}
_UNIT_TAGS = {"DW_TAG_compile_unit", "DW_TAG_partial_unit", "DW_TAG_type_unit"}
_ACCESS = {1: "public", 2: "protected", 3: "private"}
_C_LANGS = {0x1, 0x2, 0xC, 0x1D, 0x2C}  # DW_LANG_C89, C, C99, C11, C17
_MAX_ALIGN = {"EM_386": 4, "EM_ARM": 8}  # others (x86-64, AArch64, RISC-V...): 16
_DECLARED_HINT = ("clang leaves out classes whose vtable is in another file: rebuild with "
                  "-fstandalone-debug, or show the record from its sources")
_TYPE_UNITS_HINT = ("DWARF 5 type units are not supported: rebuild with -gdwarf-4, or without "
                    "-fdebug-types-section")
_INLINE_NAMESPACES = {"__cxx11", "__1"}  # libstdc++, libc++ (DWARF 4 does not mark them)
_SYSTEM_DIRS = ("/usr/include/", "/usr/lib/", "/usr/local/include/")

def split_scopes(name: str) -> list[str]:
    """`ns::ring<a::b, 4>::x` -> [`ns`, `ring<a::b, 4>`, `x`] (only top-level `::` split)."""
    parts, depth, cur, i = [], 0, "", 0
    while i < len(name):
        ch = name[i]
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if depth == 0 and name.startswith("::", i):
            parts.append(cur)
            cur, i = "", i + 2
            continue
        cur += ch
        i += 1
    parts.append(cur)
    return parts


def _attr(die: DIE, name: str, default: Any = None) -> Any:
    a = die.attributes.get(name)
    return default if a is None else a.value


def _name(die: DIE) -> str | None:
    value = _attr(die, "DW_AT_name")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


_UNSIGNED_FORMS = {"DW_FORM_data1": 8, "DW_FORM_data2": 16, "DW_FORM_data4": 32,
                   "DW_FORM_data8": 64, "DW_FORM_udata": 64}


def _constant(die: DIE, name: str) -> int | None:
    """A constant attribute as a signed number (None when absent or not a constant)."""
    a = die.attributes.get(name)
    if a is None or not isinstance(a.value, int):
        return None
    if a.form in ("DW_FORM_sdata", "DW_FORM_implicit_const"):
        return int(a.value)
    bits = _UNSIGNED_FORMS.get(a.form)
    if bits is None:
        return None  # a reference or an expression: not known before run time
    value = int(a.value)
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _is_declaration(die: DIE) -> bool:
    return bool(_attr(die, "DW_AT_declaration", False))


def die_key(die: DIE) -> int:
    """A DIE's identity within one file: its offset, told apart by section (a type unit's
    DIEs sit in .debug_types, whose offsets restart at 0)."""
    return die.offset * 2 + isinstance(die.cu, TypeUnit)


@dataclass
class _Entry:
    """A record definition (or a typedef naming one) found in the DWARF."""

    name: str       # the name this entry answers to (qualified)
    qualified: str  # the record's own qualified name
    die: DIE        # the record's definition
    origin: DIE     # where `name` is declared: the record, or a typedef naming it


@dataclass
class _Sub:
    """A base-class subobject: the base's record DIE and where it sits."""

    die: DIE
    offset: int | None     # None: virtual base (offset in the vtable)
    vtable_slot: int | None  # for a virtual base: bytes below the address point
    virtual: bool


@dataclass
class _Layout:
    """What one record DIE says, before virtual bases are placed."""

    name: str
    kind: RecordKind
    size: int
    fields: list[Field] = field(default_factory=list)
    bases: list[_Sub] = field(default_factory=list)
    vptr: int | None = None  # this record's own vtable pointer member


class IncompleteRecord(UserError):
    """The DWARF declares a class the record needs (a base, or a member's type) without
    defining it, so the record's layout cannot be read from this file."""


class _Vtables:
    """Virtual-base offsets read from the Itanium vtable groups (`_ZTV...`) in the ELF file."""

    def __init__(self, elf: ELFFile) -> None:
        self.elf = elf
        self.word = elf.elfclass // 8
        self._symbols: dict[str, Any] | None = None
        self._vtable_of: dict[str, str] | None = None
        self._relocs: dict[int, dict[int, tuple[str, int, int]]] = {}
        self._groups: dict[str, tuple[bytes, dict[int, int]] | None] = {}

    def _load_symbols(self) -> dict[str, Any]:
        if self._symbols is None:
            self._symbols = {}
            for secname in (".symtab", ".dynsym"):
                sec = self.elf.get_section_by_name(secname)
                if sec is None:
                    continue
                for sym in sec.iter_symbols():
                    if sym.name.startswith(("_ZTV", "_ZTI")) and sym["st_shndx"] != "SHN_UNDEF":
                        self._symbols.setdefault(sym.name, sym)
        return self._symbols

    def _vtable_symbol(self, qualified: str) -> str | None:
        if self._vtable_of is None:
            self._vtable_of = {}
            names = [n for n in self._load_symbols() if n.startswith("_ZTV")]
            demangler = shutil.which("c++filt") or shutil.which("llvm-cxxfilt")
            if names and demangler:
                proc = subprocess.run([demangler], input="\n".join(names), capture_output=True,
                                      text=True, check=False)
                lines = proc.stdout.splitlines()
                if proc.returncode == 0 and len(lines) == len(names):
                    for mangled, text in zip(names, lines, strict=True):
                        if text.startswith("vtable for "):
                            self._vtable_of[loose_type_key(text[len("vtable for "):])] = mangled
        return self._vtable_of.get(loose_type_key(qualified))

    def _relocations(self, target: int) -> dict[int, tuple[str, int, int]]:
        """Relocations applying to section `target` (ET_REL) or, for -1, the dynamic
        relocations of an executable or shared object (by address), keyed by place."""
        if target not in self._relocs:
            found: dict[int, tuple[str, int, int]] = {}
            for sec in self.elf.iter_sections():
                if not isinstance(sec, RelocationSection):
                    continue
                if target >= 0 and sec["sh_info"] != target:
                    continue
                if target < 0 and not sec["sh_flags"] & 0x2:  # SHF_ALLOC: dynamic relocations
                    continue
                symtab = self.elf.get_section(sec["sh_link"]) if sec["sh_link"] else None
                for rel in sec.iter_relocations():
                    symname, symvalue = "", 0
                    if rel["r_info_sym"] and symtab is not None:
                        sym = symtab.get_symbol(rel["r_info_sym"])
                        symname, symvalue = sym.name, sym["st_value"]
                        if sym["st_info"]["type"] == "STT_SECTION":
                            symname = f"section:{sym['st_shndx']}"
                    addend = rel["r_addend"] if rel.is_RELA() else 0
                    found[rel["r_offset"]] = (symname, symvalue, addend)
            self._relocs[target] = found
        return self._relocs[target]

    def _group(self, qualified: str) -> tuple[bytes, dict[int, int]] | None:
        """The vtable group's bytes and, per subobject offset, its address point (bytes)."""
        mangled = self._vtable_symbol(qualified)
        if mangled is None:
            return None
        syms = self._load_symbols()
        vt = syms[mangled]
        ti = syms.get("_ZTI" + mangled[4:])
        try:
            sec = self.elf.get_section(vt["st_shndx"])
        except (TypeError, ELFError):
            return None
        if sec is None or sec["sh_type"] == "SHT_NOBITS":
            return None
        relocatable = self.elf["e_type"] == "ET_REL"
        start = vt["st_value"] if relocatable else vt["st_value"] - sec["sh_addr"]
        data = sec.data()[start:start + vt["st_size"]]
        relocs = self._relocations(vt["st_shndx"] if relocatable else -1)
        order = "little" if self.elf.little_endian else "big"
        points: dict[int, int] = {}
        w = self.word
        for i in range(1, len(data) // w):
            slot = i * w
            place = start + slot if relocatable else vt["st_value"] + slot
            raw = int.from_bytes(data[slot:slot + w], order)
            if not self._is_typeinfo(relocs.get(place), raw, mangled, ti):
                continue
            top = int.from_bytes(data[slot - w:slot], order, signed=True)
            points.setdefault(-top, slot + w)
        return (data, points) if points else None

    def _is_typeinfo(self, rel: tuple[str, int, int] | None, raw: int, mangled: str,
                     ti: Any) -> bool:
        want = "_ZTI" + mangled[4:]
        if rel is not None:
            symname, symvalue, addend = rel
            if symname == want:
                return True
            if ti is None:
                return False
            if symname == "":  # R_*_RELATIVE: the addend is the address
                return bool(addend == ti["st_value"])
            if symname == f"section:{ti['st_shndx']}":
                return bool(symvalue + addend == ti["st_value"])
            return False
        return ti is not None and self.elf["e_type"] != "ET_REL" and raw == ti["st_value"] != 0

    def reader(self, qualified: str) -> _VbaseReader | None:
        if qualified not in self._groups:
            self._groups[qualified] = self._group(qualified)
        group = self._groups[qualified]
        if group is None:
            return None
        return _VbaseReader(group[0], group[1], self.word, self.elf.little_endian)


@dataclass
class _VbaseReader:
    data: bytes
    points: dict[int, int]
    word: int
    little: bool

    def offset(self, subobject: int, slot: int) -> int | None:
        """Offset of a virtual base in the complete object, for the subobject at `subobject`
        whose DWARF says the base's offset is `slot` bytes below its vtable's address point."""
        point = self.points.get(subobject)
        if point is None or slot % self.word or not 0 < slot <= point:
            return None
        pos = point - slot
        value = int.from_bytes(self.data[pos:pos + self.word],
                               "little" if self.little else "big", signed=True)
        return subobject + value


class DwarfReader:
    """One open ELF file's DWARF: the record index, and records built on demand."""

    def __init__(self, path: str, stream: BinaryIO) -> None:
        self.path = path
        try:
            self.elf = ELFFile(stream)
        except ELFError as exc:
            raise UserError(f"{path} is not an ELF file ({exc})",
                            "give an object file or executable built with -g") from exc
        if not self.elf.has_dwarf_info() or self.elf.get_section_by_name(".debug_info") is None \
                and self.elf.get_section_by_name(".zdebug_info") is None:
            raise UserError(f"{path} has no DWARF debug information",
                            "rebuild it with -g (or name the sources instead of --binary)")
        try:
            self.dwarf: DWARFInfo = self.elf.get_dwarf_info()
        except Exception as exc:  # pyelftools raises many kinds of errors on malformed input
            if self.elf.get_section_by_name(".debug_types") is not None:
                raise UserError(f"cannot read the DWARF of {path}: it uses type units",
                                _TYPE_UNITS_HINT) from exc
            raise UserError(f"cannot read the DWARF of {path}: {exc}",
                            "rebuild it with -g, or give the sources instead") from exc
        self.addr_size = self.elf.elfclass // 8
        self.max_align = _MAX_ALIGN.get(self.elf["e_machine"], 16)
        self.vtables = _Vtables(self.elf)
        self._expr = DWARFExprParser(self.dwarf.structs)
        self._qualified: dict[int, str] = {}
        self._own: dict[int, str | None] = {}
        self._typedef_name: dict[int, str] = {}
        self._align: dict[int, int] = {}
        self._layouts: dict[int, _Layout] = {}
        self._records: dict[int, Record] = {}
        self._lang_c: dict[int, bool] = {}
        self._skeleton = False
        self._type_units = False
        self._entries: list[_Entry] | None = None
        self._declared: set[str] = set()
        self._definitions: dict[tuple[str, str], DIE] | None = None
        self._unit_files: dict[int, list[str]] = {}

    # ----- index ---------------------------------------------------------------------------

    def entries(self) -> Iterator[_Entry]:
        """Every record definition and typedef-to-record outside function bodies."""
        for cu in self.dwarf.iter_CUs():
            top = cu.get_top_DIE()
            if "DW_AT_GNU_dwo_name" in top.attributes or "DW_AT_dwo_name" in top.attributes:
                self._skeleton = True
            lang = _attr(top, "DW_AT_language")
            self._lang_c[cu.cu_offset] = lang in _C_LANGS
            yield from self._scope_entries(top, "", "")
        if self.dwarf.has_debug_types():    # DWARF 4 type units (-fdebug-types-section)
            for tu in self.dwarf.iter_TUs():
                yield from self._scope_entries(tu.get_top_DIE(), "", "")

    def _scope_entries(self, scope: DIE, prefix: str, alias: str) -> Iterator[_Entry]:
        """Entries of one scope; `alias` is `prefix` without inline namespaces (`std::` for
        `std::__cxx11::`), as libclang spells names and users write them."""
        for die in scope.iter_children():
            tag = die.tag
            if tag in _RECORD_TAGS:
                name = self._own_name(die)
                if "DW_AT_signature" in die.attributes:
                    self._type_units = True
                if _is_declaration(die) or "DW_AT_signature" in die.attributes:
                    if name is not None:
                        self._declared.add(self.qualified_name(die))
                    continue
                if name is not None:
                    qualified = self.qualified_name(die)
                    yield _Entry(qualified, qualified, die, die)
                    if alias != prefix:
                        yield _Entry(alias + name, qualified, die, die)
                    yield from self._scope_entries(die, qualified + "::", f"{alias}{name}::")
            elif tag == "DW_TAG_namespace":
                ns = _name(die) or "(anonymous namespace)"
                inline = _attr(die, "DW_AT_export_symbols", False) or ns in _INLINE_NAMESPACES
                yield from self._scope_entries(die, f"{prefix}{ns}::",
                                               alias if inline else f"{alias}{ns}::")
            elif tag == "DW_TAG_typedef":
                target = self.strip(die)
                if target is not None and target.tag in _RECORD_TAGS and \
                        not _is_declaration(target) and "DW_AT_byte_size" in target.attributes:
                    tname = prefix + clang_type_words(_name(die) or "")
                    if self._own_name(target) is None:
                        self._typedef_name.setdefault(die_key(target), tname)
                    qualified = self.qualified_name(target)
                    yield _Entry(tname, qualified, target, die)
                    if alias != prefix:
                        yield _Entry(alias + clang_type_words(_name(die) or ""), qualified,
                                     target, die)

    # ----- names ---------------------------------------------------------------------------

    def _own_name(self, die: DIE) -> str | None:
        """The record's own (unqualified) name, None when it is unnamed."""
        key = die_key(die)
        if key not in self._own:
            self._own[key] = self._compute_own_name(die)
        return self._own[key]

    def _compute_own_name(self, die: DIE) -> str | None:
        name = _name(die)
        if name is None and "DW_AT_specification" in die.attributes:
            name = _name(die.get_DIE_from_attribute("DW_AT_specification"))
        if name is None:
            return None
        name = clang_type_words(name)
        if name.startswith("typedef "):  # gcc names its builtin va_list struct so
            name = name.split()[-1]
        if "<" not in name:
            args = self._template_args(die)
            if args is not None:
                name = f"{name}<{', '.join(args)}>"
        return name

    def _template_args(self, die: DIE) -> list[str] | None:
        """Arguments of a template instantiation named without them (-gsimple-template-names)."""
        args: list[str] = []
        for child in die.iter_children():
            if child.tag == "DW_TAG_template_type_param":
                args.append(self.spell(self.type_of(child)))
            elif child.tag == "DW_TAG_template_value_param":
                value = _attr(child, "DW_AT_const_value")
                if value is None:
                    return None
                args.append(str(value))
        return args or None

    def qualified_name(self, die: DIE) -> str:
        """`ns::outer::inner`, `(anonymous namespace)::x`, or the typedef naming an unnamed one."""
        key = die_key(die)
        if key in self._qualified:
            return self._qualified[key]
        own = self._own_name(die)
        if own is None:
            own = self._typedef_name.get(key)
            if own is not None:
                self._qualified[key] = own
                return own
            own = f"(unnamed {_RECORD_TAGS.get(die.tag, 'type')})"
        parts = [own]
        scope_of = die
        if "DW_AT_specification" in die.attributes:
            scope_of = die.get_DIE_from_attribute("DW_AT_specification")
        parent = scope_of.get_parent()
        while parent is not None and parent.tag not in _UNIT_TAGS:
            if parent.tag == "DW_TAG_namespace":
                parts.append(_name(parent) or "(anonymous namespace)")
            elif parent.tag in _RECORD_TAGS:
                parts.append(self.qualified_name(parent))
                break
            elif parent.tag == "DW_TAG_subprogram":
                break
            parent = parent.get_parent()
        result = "::".join(reversed(parts))
        self._qualified[key] = result
        return result

    def _is_c(self, die: DIE) -> bool:
        return self._lang_c.get(die.cu.cu_offset, False)

    # ----- types ---------------------------------------------------------------------------

    def type_of(self, die: DIE) -> DIE | None:
        if "DW_AT_type" not in die.attributes:
            return None
        return die.get_DIE_from_attribute("DW_AT_type")

    def strip(self, die: DIE | None) -> DIE | None:
        """Follow typedefs and cv-qualifiers to the underlying type (None: void)."""
        seen = 0
        while die is not None and (die.tag == "DW_TAG_typedef" or die.tag in _QUALIFIER_TAGS):
            die = self.type_of(die)
            seen += 1
            if seen > 64:
                return None
        return die

    def definition(self, die: DIE) -> DIE:
        """A record declaration's definition elsewhere in the file, when the index knows one
        (a declaration with a type signature: the type unit's definition)."""
        if "DW_AT_signature" in die.attributes:    # gcc: no DW_AT_declaration with it
            try:
                return die.get_DIE_from_attribute("DW_AT_signature")
            except (KeyError, DWARFError):   # DWARF 5 type units: not in .debug_types
                return die
        if not _is_declaration(die):
            return die
        if self._definitions is None:
            self._definitions = {}
            for e in self._all_entries():
                self._definitions.setdefault((e.qualified, e.die.tag), e.die)
        return self._definitions.get((self.qualified_name(die), die.tag), die)

    def _all_entries(self) -> list[_Entry]:
        if self._entries is None:
            self._entries = list(self.entries())
        return self._entries

    def type_size(self, die: DIE | None) -> int:
        die = self.strip(die)
        if die is None:
            return 0
        if die.tag == "DW_TAG_array_type":
            if "DW_AT_byte_size" in die.attributes:
                return int(_attr(die, "DW_AT_byte_size"))
            count = 1
            for n in self.dims(die):
                count *= n or 0
            return count * self.type_size(self.type_of(die))
        if die.tag in _RECORD_TAGS:     # a declaration, or a type unit's signature
            die = self.definition(die)
        size = _attr(die, "DW_AT_byte_size")
        if isinstance(size, int):
            return size
        if die.tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type",
                       "DW_TAG_rvalue_reference_type", "DW_TAG_unspecified_type"):
            return self.addr_size
        if die.tag == "DW_TAG_ptr_to_member_type":
            target = self.strip(self.type_of(die))
            sub = target is not None and target.tag == "DW_TAG_subroutine_type"
            return self.addr_size * (2 if sub else 1)
        if die.tag == "DW_TAG_enumeration_type":
            return self.type_size(self.type_of(die))
        return 0

    def type_align(self, die: DIE | None) -> int:
        if die is None:
            return 1
        explicit = _attr(die, "DW_AT_alignment")
        if isinstance(explicit, int) and explicit > 0:
            return explicit
        tag = die.tag
        if tag == "DW_TAG_typedef" or tag in _QUALIFIER_TAGS:
            return self.type_align(self.type_of(die))
        if tag == "DW_TAG_array_type":
            if _attr(die, "DW_AT_GNU_vector", False):  # SIMD vector types align to their size
                return max(1, self.type_size(die))
            return self.type_align(self.type_of(die))
        if tag in _RECORD_TAGS:
            return self.record_align(self.definition(die))
        if tag == "DW_TAG_base_type":
            size = int(_attr(die, "DW_AT_byte_size", 1))
            if _attr(die, "DW_AT_encoding") == 0x3:  # DW_ATE_complex_float
                size //= 2
            return max(1, min(size, self.max_align))
        if tag == "DW_TAG_enumeration_type":
            under = self.type_of(die)
            if under is not None:
                return self.type_align(under)
            return max(1, min(self.type_size(die), self.max_align))
        if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_ptr_to_member_type",
                   "DW_TAG_rvalue_reference_type", "DW_TAG_unspecified_type"):
            return min(self.addr_size, self.max_align)
        return 1

    def dims(self, array: DIE) -> list[int | None]:
        """Element counts of an array type's dimensions; None: flexible or variable length."""
        dims: list[int | None] = []
        for sub in array.iter_children():
            if sub.tag != "DW_TAG_subrange_type":
                continue
            count = self._bound(sub, "DW_AT_count")
            upper = self._bound(sub, "DW_AT_upper_bound")
            if count is not None:
                dims.append(count if count >= 0 else None)  # clang: count -1 for `T x[]`
            elif upper is not None:
                lower = self._bound(sub, "DW_AT_lower_bound") or 0
                dims.append(max(upper - lower + 1, 0))  # gcc: upper bound -1 for `T x[0]`
            else:
                dims.append(None)
        return dims

    def _bound(self, sub: DIE, name: str) -> int | None:
        """A subrange bound as a signed number of the subrange's index type.

        gcc writes the upper bound of a zero-length (flexible) array `T x[0]` as -1 of its
        index type, in whatever form fits: `DW_FORM_data4 0xffffffff`, `DW_FORM_data8`, or (DWARF 5,
        -m32) `DW_FORM_implicit_const 4294967295`, which a plain reading takes for an array of
        2**32 elements. The value is wrapped to the index type's width (the address size when the
        subrange names no type; at least 4 bytes, so a small index type cannot turn a real
        bound negative) and read as signed, so all of them give -1, i.e. 0 elements.
        """
        attr = sub.attributes.get(name)
        if attr is None or not isinstance(attr.value, int) or attr.form not in (
                "DW_FORM_sdata", "DW_FORM_implicit_const", *_UNSIGNED_FORMS):
            return None  # absent, or a reference/expression (a variable-length array)
        value = int(attr.value)  # data1/2/4/8 and udata unsigned: clang's count 200 is data1
        index = self.type_of(sub)
        width = self.type_size(index) if index is not None else 0
        bits = 8 * (width if width in (4, 8) else max(self.addr_size, 4))
        value &= (1 << bits) - 1
        return value - (1 << bits) if value >= 1 << (bits - 1) else value

    def spell(self, die: DIE | None, inner: str = "", scope: list[str] | None = None) -> str:
        """A C declarator for the type, e.g. `int[16]`, `struct node *`, `void (*)(int)`."""

        def join(name: str, rest: str) -> str:
            if not rest:
                return name
            return name + rest if rest.startswith("[") else f"{name} {rest}"

        if die is None:
            return join("void", inner)
        tag = die.tag
        if tag in ("DW_TAG_base_type", "DW_TAG_unspecified_type"):
            name = _name(die) or "?"
            if tag == "DW_TAG_base_type":
                name = clang_type_words(name)
                if self._is_c(die) and name == "bool":
                    name = "_Bool"
                if name == "complex":  # clang names every complex type so; its size tells
                    name = {8: "_Complex float", 16: "_Complex double"}.get(
                        self.type_size(die), "_Complex long double")
            return join(name, inner)
        if tag == "DW_TAG_typedef" or tag in _RECORD_TAGS or tag == "DW_TAG_enumeration_type":
            if tag == "DW_TAG_typedef":
                name = self._scoped(self._typedef_qualified(die), scope)
            elif self._own_name(die) is None and die_key(die) not in self._typedef_name:
                name = {"DW_TAG_enumeration_type": "enum"}.get(tag, _RECORD_TAGS.get(tag, "")) + \
                    " {...}"
                return join(name, inner)
            else:
                name = self._scoped(self.qualified_name(die), scope)
            if self._is_c(die) and tag != "DW_TAG_typedef" and \
                    die_key(die) not in self._typedef_name:
                word = "enum" if tag == "DW_TAG_enumeration_type" else _RECORD_TAGS[tag]
                name = f"{word} {name}"
            return join(name, inner)
        if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type",
                   "DW_TAG_rvalue_reference_type", "DW_TAG_ptr_to_member_type"):
            mark = {"DW_TAG_pointer_type": "*", "DW_TAG_reference_type": "&",
                    "DW_TAG_rvalue_reference_type": "&&"}.get(tag)
            if mark is None:
                owner = die.get_DIE_from_attribute("DW_AT_containing_type") \
                    if "DW_AT_containing_type" in die.attributes else None
                cls = self.spell(owner, "", scope) if owner is not None else "?"
                mark = f"{cls}::*"
            target = self.type_of(die)
            rest = mark + inner
            bare = self._strip_cv_only(target)
            if bare is not None and bare.tag in ("DW_TAG_array_type", "DW_TAG_subroutine_type"):
                return self.spell(target, f"({rest})", scope)
            return self.spell(target, rest, scope)
        if tag in _QUALIFIER_TAGS:
            word = _QUALIFIER_TAGS[tag]
            target = self.type_of(die)
            bare = self._strip_cv_only(target)
            if bare is not None and bare.tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type",
                                                 "DW_TAG_rvalue_reference_type",
                                                 "DW_TAG_ptr_to_member_type"):
                # `char *const`: the qualifier follows the declarator it applies to.
                return self.spell(target, word + (f" {inner}" if inner else ""), scope)
            return f"{word} {self.spell(target, inner, scope)}"
        if tag == "DW_TAG_array_type":
            dims = "".join(f"[{'' if n is None else n}]" for n in self.dims(die))
            return self.spell(self.type_of(die), inner + dims, scope)
        if tag == "DW_TAG_subroutine_type":
            params: list[str] = []
            for child in die.iter_children():
                if child.tag == "DW_TAG_formal_parameter":
                    params.append(self.spell(self.type_of(child), "", scope))
                elif child.tag == "DW_TAG_unspecified_parameters":
                    params.append("...")
            if not params and self._is_c(die) and _attr(die, "DW_AT_prototyped", False):
                params = ["void"]
            return self.spell(self.type_of(die), f"{inner}({', '.join(params)})", scope)
        return join("?", inner)

    def _strip_cv_only(self, die: DIE | None) -> DIE | None:
        while die is not None and die.tag in _QUALIFIER_TAGS:
            die = self.type_of(die)
        return die

    def _typedef_qualified(self, die: DIE) -> str:
        parts = [clang_type_words(_name(die) or "?")]
        parent = die.get_parent()
        while parent is not None and parent.tag not in _UNIT_TAGS:
            if parent.tag == "DW_TAG_namespace":
                parts.append(_name(parent) or "(anonymous namespace)")
            elif parent.tag in _RECORD_TAGS:
                parts.append(self.qualified_name(parent))
                break
            else:
                break
            parent = parent.get_parent()
        return "::".join(reversed(parts))

    @staticmethod
    def _scoped(qualified: str, scope: list[str] | None) -> str:
        """`qualified` without the leading scopes it shares with the record being shown."""
        parts = split_scopes(qualified)
        if scope:
            n = 0
            while n < len(parts) - 1 and n < len(scope) and parts[n] == scope[n]:
                n += 1
            parts = parts[n:]
        return "::".join(parts)

    # ----- members -------------------------------------------------------------------------

    def location(self, die: DIE) -> tuple[int | None, int | None]:
        """(byte offset, None) for a constant location; (None, slot) for a virtual base."""
        attr = die.attributes.get("DW_AT_data_member_location")
        if attr is None:
            return 0, None
        if isinstance(attr.value, int) and attr.form not in ("DW_FORM_block1", "DW_FORM_block2",
                                                             "DW_FORM_block4", "DW_FORM_block",
                                                             "DW_FORM_exprloc"):
            return attr.value, None
        ops = self._expr.parse_expr(attr.value)
        stack: list[int] = []
        derefs = 0
        slot = None
        for op in ops:
            name = op.op_name
            if name.startswith("DW_OP_lit"):
                stack.append(int(name[len("DW_OP_lit"):]))
            elif name in ("DW_OP_constu", "DW_OP_consts") or name.startswith("DW_OP_const"):
                stack.append(int(op.args[0]))
            elif name == "DW_OP_plus_uconst":
                stack.append((stack.pop() if stack else 0) + int(op.args[0]))
            elif name == "DW_OP_deref":
                derefs += 1
            elif name == "DW_OP_minus" and stack:
                slot = stack.pop()
            elif name == "DW_OP_plus" and len(stack) >= 2:
                stack.append(stack.pop() + stack.pop())
        if derefs:
            return None, slot
        return (stack[-1] if stack else 0), None

    def layout(self, die: DIE) -> _Layout:
        """The record's own members, direct bases and vtable pointer, as DWARF states them."""
        if die_key(die) in self._layouts:
            return self._layouts[die_key(die)]
        name = self.qualified_name(die)
        out = _Layout(name, _RECORD_TAGS[die.tag], int(_attr(die, "DW_AT_byte_size", 0)))
        self._layouts[die_key(die)] = out
        try:
            scope = split_scopes(name)
            self._members(die, 0, None, scope, out)
            for child in die.iter_children():
                if child.tag == "DW_TAG_inheritance":
                    base = self.strip(self.type_of(child))
                    if base is None or base.tag not in _RECORD_TAGS:
                        continue
                    offset, slot = self.location(child)
                    virtual = bool(_attr(child, "DW_AT_virtuality", 0))
                    out.bases.append(_Sub(self._complete(base, name, "base class"), offset,
                                          slot, virtual or offset is None))
        except Exception:
            # an incomplete record (a member's or base's class only declared) is asked
            # again and raises again, never answered from a half-filled layout
            del self._layouts[die_key(die)]
            raise
        return out

    def _complete(self, die: DIE, record: str, role: str) -> DIE:
        """The definition of a record the layout of `record` depends on; raise when the file
        only declares it."""
        found = self.definition(die)
        if "DW_AT_signature" in found.attributes:
            raise IncompleteRecord(
                f"the debug information of {self.path} puts {role} "
                f"{self.qualified_name(die)} of {record} in a type unit it cannot read",
                _TYPE_UNITS_HINT)
        if _is_declaration(found):
            raise IncompleteRecord(
                f"the debug information of {self.path} declares {role} "
                f"{self.qualified_name(die)} of {record} without defining it", _DECLARED_HINT)
        return found

    def _members(self, die: DIE, base_bits: int, anon: str | None, scope: list[str],
                 out: _Layout, anon_access: str | None = None) -> None:
        default_access = "private" if die.tag == "DW_TAG_class_type" else "public"
        for child in die.iter_children():
            if child.tag != "DW_TAG_member" or _is_declaration(child) or \
                    _attr(child, "DW_AT_external", False):
                continue
            name = _name(child)
            offset, _ = self.location(child)
            offset = offset or 0
            if _attr(child, "DW_AT_artificial", False) and name and name.startswith("_vptr"):
                if out.vptr is None:
                    out.vptr = offset + base_bits // 8
                continue
            ftype = self.type_of(child)
            bare = self.strip(ftype)
            while bare is not None and bare.tag == "DW_TAG_array_type":
                bare = self.strip(self.type_of(bare))
            if bare is not None and bare.tag in _RECORD_TAGS:
                bare = self._complete(bare, out.name, f"the type of member {name}")
            bit_size = _attr(child, "DW_AT_bit_size")
            if "DW_AT_data_bit_offset" in child.attributes:
                bits = int(_attr(child, "DW_AT_data_bit_offset"))
            elif "DW_AT_bit_offset" in child.attributes and bit_size is not None:
                unit = int(_attr(child, "DW_AT_byte_size", 0)) or self.type_size(ftype)
                big = _constant(child, "DW_AT_bit_offset") or 0
                bits = offset * 8 + (big if not self.elf.little_endian else
                                     unit * 8 - big - int(bit_size))
            else:
                bits = offset * 8
            bits += base_bits
            if not name and bare is not None and bare.tag in _RECORD_TAGS and bit_size is None:
                # An anonymous struct/union member: its fields are members of this record.
                group = anon
                if group is None:  # the outermost anonymous member names the group
                    line = _attr(bare, "DW_AT_decl_line", _attr(child, "DW_AT_decl_line", 0))
                    col = _attr(bare, "DW_AT_decl_column", _attr(child, "DW_AT_decl_column"))
                    where = f"{line}:{col}" if col else str(line)
                    group = f"(anonymous {_RECORD_TAGS[bare.tag]} at line {where})"
                    if any(f.anonymous_parent == group for f in out.fields):
                        group = group[:-1] + f" #{child.offset:x})"  # clang gives no column
                # Its members have the access of the anonymous member's declaration.
                self._members(self.definition(bare), bits, group, scope, out, anon_access or
                              _ACCESS.get(_attr(child, "DW_AT_accessibility", 0), default_access))
                continue
            if not name:
                continue  # an unnamed bit-field is padding, not a member
            access = anon_access or _ACCESS.get(_attr(child, "DW_AT_accessibility", 0),
                                                default_access)
            size = self.type_size(ftype)
            align = max(self.type_align(ftype), int(_attr(child, "DW_AT_alignment", 0) or 0))
            spelled = self.spell(ftype, "", scope)
            if bit_size is not None:
                out.fields.append(Field(name, spelled, bits // 8, size, align, access,
                                        bits, int(bit_size), None, anon))
            else:
                out.fields.append(Field(name, spelled, bits // 8, size, align, access,
                                        None, None, None, anon))

    # ----- complete objects ----------------------------------------------------------------

    def _nv_vptrs(self, die: DIE, offset: int) -> list[int]:
        lay = self.layout(die)
        found = [offset + lay.vptr] if lay.vptr is not None else []
        for b in lay.bases:
            if not b.virtual and b.offset is not None:
                found += self._nv_vptrs(b.die, offset + b.offset)
        return found

    def _virtual_bases(self, die: DIE) -> list[DIE]:
        """All virtual bases of the record (direct or not), in inheritance-graph order."""
        seen: dict[str, DIE] = {}

        def walk(d: DIE) -> None:
            for b in self.layout(d).bases:
                key = self.qualified_name(b.die)
                if b.virtual and key not in seen:
                    seen[key] = b.die
                walk(b.die)

        walk(die)
        return list(seen.values())

    def _place_virtual_bases(self, die: DIE) -> dict[str, int]:
        """Offset of every virtual base in a complete object of the record."""
        vbases = self._virtual_bases(die)
        if not vbases:
            return {}
        reader = self.vtables.reader(self.qualified_name(die))
        placed: dict[str, int] = {}
        if reader is not None:
            def visit(d: DIE, at: int) -> None:
                for b in self.layout(d).bases:
                    key = self.qualified_name(b.die)
                    if b.virtual:
                        if key in placed:
                            continue
                        off = reader.offset(at, b.vtable_slot) if b.vtable_slot is not None \
                            else None
                        if off is None:
                            return
                        placed[key] = off
                        visit(b.die, off)
                    elif b.offset is not None:
                        visit(b.die, at + b.offset)

            visit(die, 0)
            if all(self.qualified_name(v) in placed for v in vbases):
                return placed
        return self._estimate_virtual_bases(die, vbases)

    def _nv_end(self, die: DIE) -> int:
        """End of the non-virtual part: data size without tail padding (Itanium dsize)."""
        lay = self.layout(die)
        end = (lay.vptr + self.addr_size) if lay.vptr is not None else 0
        for f in lay.fields:
            end = max(end, f.end)
        for b in lay.bases:
            if not b.virtual and b.offset is not None and not self._is_empty(b.die):
                end = max(end, b.offset + self._nv_size(b.die))
        return end

    def _nv_size(self, die: DIE) -> int:
        lay = self.layout(die)
        if not self._virtual_bases(die) and self._is_pod(die):
            return lay.size
        return self._nv_end(die)

    def _is_pod(self, die: DIE) -> bool:
        """C++03 POD-ness as far as DWARF shows it (decides whether tail padding is reused)."""
        lay = self.layout(die)
        if lay.bases or lay.vptr is not None:
            return False
        if any(f.access != "public" for f in lay.fields):
            return False
        for child in die.iter_children():
            if child.tag == "DW_TAG_subprogram" and not _attr(child, "DW_AT_artificial", False):
                name = _name(child) or ""
                short = split_scopes(lay.name)[-1].split("<")[0]
                if name in (short, "~" + short) or name.startswith("operator="):
                    return False
        return True

    def _is_empty(self, die: DIE) -> bool:
        """A C++ empty class: no data, no vtable pointer, no virtual or non-empty bases."""
        lay = self.layout(die)
        if lay.fields or lay.vptr is not None:
            return False
        return all(not b.virtual and self._is_empty(b.die) for b in lay.bases)

    def _estimate_virtual_bases(self, die: DIE, vbases: list[DIE]) -> dict[str, int]:
        lay = self.layout(die)
        placed: dict[str, int] = {}
        dynamic_nv = lay.vptr is not None or any(
            not b.virtual and self._nv_vptrs(b.die, 0) for b in lay.bases)
        cur = self._nv_end(die)
        for v in vbases:
            key = self.qualified_name(v)
            vlay = self.layout(v)
            nearly_empty = not vlay.fields and vlay.vptr is not None and not any(
                not self._is_empty(b.die) for b in vlay.bases)
            if nearly_empty and not dynamic_nv and not placed:
                placed[key] = 0
                dynamic_nv = True
                cur = max(cur, self.addr_size)
                continue
            if self._is_empty(v):
                placed[key] = 0
                continue
            align = self.record_align(v)
            off = (cur + align - 1) // align * align
            placed[key] = off
            cur = off + self._nv_size(v)
        return placed

    # ----- records -------------------------------------------------------------------------

    def record_align(self, die: DIE) -> int:
        key = die_key(die)
        if key in self._align:
            return self._align[key]
        self._align[key] = 1  # guards against cycles through pointers (not followed)
        explicit = _attr(die, "DW_AT_alignment")
        if isinstance(explicit, int) and explicit > 0:
            self._align[key] = explicit
            return explicit
        rec = self.record(die)
        lay = self.layout(die)
        spans: list[tuple[int, int, int]] = []  # (offset, alignment, is_bitfield)
        for f in rec.fields:
            spans.append((f.offset, f.align, int(f.is_bitfield)))
        for b in rec.bases:
            bdie = self._base_die(lay, b.name)
            if bdie is not None:
                spans.append((b.offset, self.record_align(bdie), 0))
        if rec.vptr_offset is not None:
            spans.append((rec.vptr_offset, min(self.addr_size, self.max_align), 0))
        natural = max((a for _, a, _ in spans), default=1)
        end = max([f.end for f in rec.fields] +
                  [b.offset + b.size for b in rec.bases if not b.empty] +
                  ([rec.vptr_offset + self.addr_size] if rec.vptr_offset is not None else []) +
                  [0])

        def fits(p: int) -> bool:
            return rec.size % p == 0 and all(
                off % min(p, a) == 0 for off, a, bitfield in spans if not bitfield)

        def round_up(n: int, p: int) -> int:
            return (n + p - 1) // p * p

        if fits(natural):
            align = natural
            if round_up(end, natural) != rec.size:
                p = natural * 2
                while p <= rec.size:
                    if round_up(end, p) == rec.size and fits(p):
                        align = p
                        break
                    p *= 2
        elif rec.size == end:
            align = 1
        else:
            align = 1
            p = natural // 2
            while p > 1:
                if fits(p) and round_up(end, p) == rec.size:
                    align = p
                    break
                p //= 2
        self._align[key] = rec.align = align
        return align

    def _base_die(self, lay: _Layout, name: str) -> DIE | None:
        stack = list(lay.bases)
        while stack:
            b = stack.pop()
            if self.qualified_name(b.die) == name:
                return b.die
            stack += self.layout(b.die).bases
        return None

    def record(self, die: DIE) -> Record:
        """The model of the record defined at `die`."""
        if die_key(die) in self._records:
            return self._records[die_key(die)]
        lay = self.layout(die)
        vplaced = self._place_virtual_bases(die)
        bases: list[Base] = []
        for b in lay.bases:
            if not b.virtual and b.offset is not None:
                bases.append(Base(self.qualified_name(b.die), b.offset,
                                  int(_attr(b.die, "DW_AT_byte_size", 0)), False,
                                  self._is_empty(b.die)))
        vptrs = self._nv_vptrs(die, 0)
        for v in sorted(self._virtual_bases(die),
                        key=lambda d: vplaced.get(self.qualified_name(d), 0)):
            vname = self.qualified_name(v)
            off = vplaced.get(vname, 0)
            bases.append(Base(vname, off, int(_attr(v, "DW_AT_byte_size", 0)), True,
                              self._is_empty(v)))
            vptrs += self._nv_vptrs(v, off)
        rec = Record(name=lay.name, kind=lay.kind, size=lay.size, align=1,
                     fields=list(lay.fields), bases=bases,
                     vptr_offset=min(vptrs) if vptrs else None)
        self._records[die_key(die)] = rec
        rec.align = self.record_align(die)
        return rec

    # ----- lookup --------------------------------------------------------------------------

    def find(self, wanted: str) -> Record:
        """The one record `wanted` names; raises AmbiguousType when it names several scopes
        or different definitions in different units, TypeNotFound with close names."""
        distinct = self.definitions(wanted)
        if len(distinct) > 1:
            qualified = distinct[0][1].name
            units = sorted({self._unit_name(d) for d, _ in distinct})
            raise AmbiguousType(
                f"'{wanted}' names {len(distinct)} different definitions of {qualified} "
                f"(in {', '.join(units)})", "the program breaks the one-definition rule; "
                "show it from the sources of one unit instead")
        return distinct[0][1]

    def definitions(self, wanted: str) -> list[tuple[DIE, Record]]:
        """The distinct definitions of the record `wanted` names, in DWARF order (several
        when units define one name differently); raises AmbiguousType when it matches
        several qualified names, TypeNotFound with close names when none."""
        entries = self._all_entries()
        for key in (type_key, loose_type_key):
            hits: dict[str, list[_Entry]] = {}
            for e in entries:
                if key_matches(e.name, wanted, key) or key_matches(e.qualified, wanted, key):
                    hits.setdefault(e.qualified, []).append(e)
            if hits:
                break
        if len(hits) > 1:
            names = sorted(hits)
            raise AmbiguousType(f"'{wanted}' matches {len(names)} records: {', '.join(names)}",
                                "name one of them with its qualified name")
        if hits:
            (_qualified, found), = hits.items()
            return self._distinct({die_key(e.die): e.die for e in found}.values())
        names = sorted({e.name for e in entries if not self._is_system(e.origin)})
        short = {split_scopes(n)[-1]: n for n in names}
        close = []
        if "<" in wanted:  # instantiations of the template (e.g. with default arguments)
            head = wanted.split("<", 1)[0]
            close = sorted({e.qualified for e in entries if e.origin is e.die and "<" in e.name
                            and key_matches(e.name.split("<", 1)[0], head)})[:5]
        close += [n for n in difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
                  if n not in close]
        close += [short[s] for s in difflib.get_close_matches(wanted, list(short), n=5,
                                                              cutoff=0.5)
                  if short[s] not in close]
        if close:
            hint = "did you mean: " + ", ".join(close[:5])
        elif self._skeleton:
            hint = "the file uses split DWARF (.dwo), which is not supported; build without " \
                   "-gsplit-dwarf"
        elif self._type_units:
            hint = _TYPE_UNITS_HINT
        elif any(key_matches(n, wanted) for n in self._declared):
            hint = f"its debug information only declares it; {_DECLARED_HINT}"
        else:
            hint = "no record of a similar name in its debug information; check the spelling"
        raise TypeNotFound(f"no record named '{wanted}' in {self.path}", hint)

    def _distinct(self, dies: Any) -> list[tuple[DIE, Record]]:
        out: list[tuple[DIE, Record]] = []
        seen: list[tuple[str, Any]] = []
        for d in dies:
            rec = self.record(d)
            key = (rec.kind, rec.to_json())
            if key not in seen:
                seen.append(key)
                out.append((d, rec))
        return out

    def all_records(self) -> list[Record]:
        by_name: dict[str, list[int]] = {}
        dies: dict[int, DIE] = {}
        for e in self._all_entries():
            if e.name == e.qualified or self._own_name(e.die) is None:
                dies[die_key(e.die)] = e.die
                by_name.setdefault(e.qualified, [])
                if die_key(e.die) not in by_name[e.qualified]:
                    by_name[e.qualified].append(die_key(e.die))
        out: list[Record] = []
        for offsets in by_name.values():
            try:
                out += [rec for _, rec in self._distinct(dies[o] for o in offsets)]
            except IncompleteRecord:
                continue  # its layout is not in this file (a base or member only declared)
        return out

    def _unit_name(self, die: DIE) -> str:
        top = die.cu.get_top_DIE()
        return _name(top) or f"unit at 0x{die.cu.cu_offset:x}"

    def _is_system(self, die: DIE) -> bool:
        """Whether the declaration is in a system header (left out of close-name hints)."""
        index = _attr(die, "DW_AT_decl_file")
        if not isinstance(index, int):
            return False
        files = self._files_of(die)
        return 0 <= index < len(files) and files[index].startswith(_SYSTEM_DIRS)

    def _files_of(self, die: DIE) -> list[str]:
        """The unit's file table, indexed like DW_AT_decl_file."""
        key = die.cu.cu_offset
        if key not in self._unit_files:
            names: list[str] = []
            try:
                lp = self.dwarf.line_program_for_CU(die.cu)
            except Exception:  # a broken line table only costs the system-header filter
                lp = None
            if lp is not None:
                v5 = lp.header["version"] >= 5
                dirs = [d.decode("utf-8", "replace") if isinstance(d, bytes) else str(d)
                        for d in lp.header["include_directory"]]
                if not v5:
                    names.append("")  # DWARF 2-4 number files from 1
                for entry in lp.header["file_entry"]:
                    name = entry.name.decode("utf-8", "replace") \
                        if isinstance(entry.name, bytes) else str(entry.name)
                    d = entry.dir_index if v5 else entry.dir_index - 1
                    if not os.path.isabs(name) and 0 <= d < len(dirs):
                        name = os.path.join(dirs[d], name)
                    names.append(name)
            self._unit_files[key] = names
        return self._unit_files[key]


def _open(elf_path: str) -> BinaryIO:
    require_file(elf_path, "check the path given to --binary")
    try:
        return open(elf_path, "rb")  # closed by the callers' `with`
    except OSError as exc:
        raise UserError(f"{elf_path}: {exc.strerror}", "check the path and its permissions") \
            from exc


@contextmanager
def open_dwarf(elf_path: str) -> Iterator[DwarfReader]:
    """The DWARF of `elf_path`, for callers that read several records or walk its units
    (the trace's link step); raises UserError when the file is no ELF or has no DWARF."""
    with _open(elf_path) as stream:
        yield DwarfReader(elf_path, stream)


def read_record(elf_path: str, type_name: str) -> Record:
    """The record called `type_name` in the DWARF of `elf_path`; builds only that record.

    Raises TypeNotFound (with the closest names), AmbiguousType (several scopes match, or one
    name has different definitions in different units) or UserError (no ELF, no DWARF)."""
    with _open(elf_path) as stream:
        return DwarfReader(elf_path, stream).find(type_name)


def list_records(elf_path: str) -> list[Record]:
    """Every named record (struct, class, union, or one named by a typedef) in the DWARF of
    `elf_path`, once each: identical definitions repeated across units are one record."""
    with _open(elf_path) as stream:
        return DwarfReader(elf_path, stream).all_records()
