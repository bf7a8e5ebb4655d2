"""The record corpus of tests/frontend/corpus and a probe program that asks the compiler.

`probe_source` writes a C or C++ program that includes a corpus file and prints, for every
record, what the compiler itself says: sizeof, alignof, the offset and size of every field,
the first bit and width of every bit-field (found by setting it in a zeroed object and
comparing bytes), the offset of every base subobject, and the offsets of the non-zero pointer
words of a zero-initialised object (its vtable pointers). `parse_probe_output` reads that back.
The probe names only what the model under test lists; the tests check the model's field list
itself against the other front end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.model import Record

CORPUS = Path(__file__).parent / "corpus"
C_FILE = CORPUS / "records_c.c"
CXX_FILE = CORPUS / "records_cpp.cpp"
C_ARGS = ["-std=gnu17"]
CXX_ARGS = ["-std=c++20"]

# (name looked up, spelling of the type in a C program)
C_RECORDS: list[tuple[str, str]] = [
    ("plain", "struct plain"),
    ("fixed_ints", "struct fixed_ints"),
    ("ptrs", "struct ptrs"),
    ("bits_basic", "struct bits_basic"),
    ("bits_cross", "struct bits_cross"),
    ("bits_zero", "struct bits_zero"),
    ("bits_mixed", "struct bits_mixed"),
    ("packed_hdr", "struct packed_hdr"),
    ("packed_aligned", "struct packed_aligned"),
    ("packed_bits", "struct packed_bits"),
    ("cacheline", "struct cacheline"),
    ("per_cpu", "struct per_cpu"),
    ("c11_align", "struct c11_align"),
    ("value", "union value"),
    ("tagged_bits", "union tagged_bits"),
    ("packet", "struct packet"),
    ("inner_c", "struct inner_c"),
    ("outer_c", "struct outer_c"),
    ("msg", "struct msg"),
    ("fam_aligned", "struct fam_aligned"),
    ("vec3_t", "vec3_t"),
    ("list_head_t", "list_head_t"),
    ("with_enum", "struct with_enum"),
    ("big_arrays", "struct big_arrays"),
    ("wide", "struct wide"),
    ("empty_c", "struct empty_c"),
    ("after_empty", "struct after_empty"),
]

# Qualified names; each is also how the C++ probe spells the type.
CXX_RECORDS: list[str] = [
    "kern::tcb", "user::tcb", "ns::ring<int, 16>", "ns::ring<double, 4>",
    "ns::pair2<char, long>", "ns::base_a", "ns::base_b", "ns::single", "ns::np_base",
    "ns::tail_reuse", "ns::multi", "ns::shape", "ns::circle", "ns::mixin", "ns::fancy",
    "ns::vb_root", "ns::vb_left", "ns::vb_right", "ns::vb_diamond", "ns::vplain",
    "ns::vderived", "ns::iface", "ns::impl", "ns::vmore", "ns::empty_a", "ns::empty_b",
    "ns::ebo", "ns::ebo_conflict", "ns::nua", "ns::account", "ns::priv_derived",
    "ns::cl_aligned", "ns::alignas_member", "ns::outer", "ns::outer::inner", "ns::variant",
    "ns::pod_t", "ns::node_base<ns::list_node>", "ns::list_node", "ns::holder",
    "ns::counted<int>", "ns::pixel", "ns::with_static", "hidden",
]


COMPILERS = {"gcc": {"c": "gcc", "cxx": "g++"}, "clang": {"c": "clang-19", "cxx": "clang++-19"}}
LANGS = ("c", "cxx")


@dataclass
class Build:
    """One compiler's build of one language's probe program (made by conftest.builds)."""

    compiler: str
    lang: str
    exe: Path      # -g -gdwarf-5, linked; its output is `figures`
    obj4: Path     # -g -gdwarf-4 -c
    figures: list[Figures]


def corpus_of(lang: str) -> tuple[Path, list[str], list[tuple[str, str]]]:
    """(file, compiler arguments, [(lookup name, spelling)]) of one language's corpus."""
    if lang == "c":
        return C_FILE, C_ARGS, C_RECORDS
    return CXX_FILE, CXX_ARGS, [(n, n) for n in CXX_RECORDS]


@dataclass
class LibclangCorpus:
    models: dict[str, Record]  # lookup name -> record
    defined: set[str]          # every record (or typedef of one) the file defines


@dataclass
class Figures:
    """What the compiled probe printed about one record."""

    size: int = -1
    align: int = -1
    offsets: dict[str, int] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    bits: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (first, width)
    bases: dict[str, int] = field(default_factory=dict)
    pointer_words: list[int] = field(default_factory=list)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def probe_source(corpus: Path, records: list[tuple[str, Record]], cxx: bool) -> str:
    """A program printing the compiler's figures for `records` ((spelling, model) pairs)."""
    out = [f'#include "{corpus}"', "#include <stdio.h>", "#include <string.h>", ""]
    out.append("""
static void cf_bits(int i, const char *name, const unsigned char *a, const unsigned char *b,
                    size_t n) {
    long first = -1, count = 0;
    for (size_t k = 0; k < n * 8; k++)
        if (((a[k / 8] ^ b[k / 8]) >> (k % 8)) & 1) {
            if (first < 0) first = (long)k;
            count++;
        }
    printf("B\\t%d\\t%s\\t%ld\\t%ld\\n", i, name, first, count);
}
static void cf_words(int i, const unsigned char *p, size_t n) {
    for (size_t k = 0; k + sizeof(void *) <= n; k += sizeof(void *)) {
        void *w;
        memcpy(&w, p + k, sizeof w);
        if (w) printf("W\\t%d\\t%zu\\n", i, k);
    }
}
""")
    for i, (spelling, _) in enumerate(records):
        out.append(f"static {spelling} cf_o{i};")
    body: list[str] = []
    for i, (spelling, rec) in enumerate(records):
        o = f"cf_o{i}"
        align = "alignof" if cxx else "_Alignof"
        body.append(f'printf("R\\t{i}\\t%zu\\t%zu\\n", sizeof({spelling}), {align}({spelling}));')
        body.append(f"cf_words({i}, (const unsigned char *)&{o}, sizeof {o});")
        for f in rec.fields:
            if f.is_bitfield:
                value = f"static_cast<decltype({o}.{f.name})>(~0ull)" if cxx else "-1"
                body.append(
                    f"{{ unsigned char a[sizeof {o} + 1], b[sizeof {o} + 1]; "
                    f"memcpy(a, &{o}, sizeof {o}); {o}.{f.name} = {value}; "
                    f"memcpy(b, &{o}, sizeof {o}); "
                    f"cf_bits({i}, {_c_string(f.name)}, a, b, sizeof {o}); }}")
                continue
            body.append(f'printf("F\\t{i}\\t%s\\t%ld\\n", {_c_string(f.name)}, '
                        f"(long)((char *)&{o}.{f.name} - (char *)&{o}));")
            if not f.type.endswith("[]"):
                body.append(f'printf("Z\\t{i}\\t%s\\t%zu\\n", {_c_string(f.name)}, '
                            f"sizeof {o}.{f.name});")
        for b in rec.bases:
            body.append(f'printf("S\\t{i}\\t%s\\t%ld\\n", {_c_string(b.name)}, '
                        f"(long)((char *)static_cast<{b.name} *>(&{o}) - (char *)&{o}));")
    if cxx:
        out.append("struct cachefit_probe { static void run(); };")
        out.append("void cachefit_probe::run() {")
        out += ["    " + line for line in body]
        out.append("}")
        out.append("int main() { cachefit_probe::run(); return 0; }")
    else:
        out.append("int main(void) {")
        out += ["    " + line for line in body]
        out.append("    return 0;")
        out.append("}")
    return "\n".join(out) + "\n"


def parse_probe_output(text: str, count: int) -> list[Figures]:
    figures = [Figures() for _ in range(count)]
    for line in text.splitlines():
        kind, index, *rest = line.split("\t")
        fig = figures[int(index)]
        if kind == "R":
            fig.size, fig.align = int(rest[0]), int(rest[1])
        elif kind == "F":
            fig.offsets[rest[0]] = int(rest[1])
        elif kind == "Z":
            fig.sizes[rest[0]] = int(rest[1])
        elif kind == "B":
            fig.bits[rest[0]] = (int(rest[1]), int(rest[2]))
        elif kind == "S":
            fig.bases[rest[0]] = int(rest[1])
        elif kind == "W":
            fig.pointer_words.append(int(rest[0]))
    return figures


def compare_with_compiler(rec: dict[str, Any], fig: Figures) -> list[str]:
    """Every figure of a record's `show --json` object that differs from the compiler's."""
    bad: list[str] = []

    def check(what: str, model: object, real: object) -> None:
        if model != real:
            bad.append(f"{rec['name']}: {what}: cachefit {model}, compiler {real}")

    check("size", rec["size"], fig.size)
    check("align", rec["align"], fig.align)
    for f in rec["fields"]:
        name = f["name"]
        if f["bit_size"] is not None:
            check(f"bit-field {name} (first bit, width)", (f["bit_offset"], f["bit_size"]),
                  fig.bits.get(name))
            check(f"bit-field {name} offset = bit_offset // 8", f["offset"],
                  f["bit_offset"] // 8)
        else:
            check(f"field {name} offset", f["offset"], fig.offsets.get(name))
            check(f"field {name} size", f["size"], fig.sizes.get(name, 0))  # 0: flexible
    check("base offsets", {b["name"]: b["offset"] for b in rec["bases"]}, fig.bases)
    check("vptr offset", rec["vptr_offset"], min(fig.pointer_words, default=None))
    return bad


_SCOPE = re.compile(r"\b[A-Za-z_]\w*::")
_KIND = re.compile(r"\b(struct|class|union|enum)\s+")


def loose_type(spelling: str) -> str | None:
    """A type spelling without kind keywords, scopes and spaces; None for unnamed types,
    which the front ends spell differently (`struct (unnamed at f.c:3:5)` / `struct {...}`)."""
    if "(unnamed" in spelling or "(anonymous" in spelling or "{...}" in spelling:
        return None
    return _SCOPE.sub("", _KIND.sub("", spelling)).replace(" ", "")
