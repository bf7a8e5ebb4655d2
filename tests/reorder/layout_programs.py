"""Test programs that print a record's values and the layout the compiler gave it.

A record is a list of `Member`s (named fields, unnamed bit-fields, attributes); `header`
writes its definition and `program` a C or C++ `main` that sets every named member, prints
the values, then the layout: `offsetof` of plain members, the first set bit of bit-fields
(found by setting all of a bit-field's bits in a zeroed object) and sizeof. `predicted`
gives the same lines from the layout package for an order, so a test compares what the
compiler did with what cachefit planned. Nothing here runs cachefit itself.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from cachefit.frontend.clang_records import load_record
from cachefit.layout import evaluate_order
from cachefit.model.record_layout import Record
from cachefit.pipeline.unit_transform import reorder_unit
from cachefit.reorder.order_choice import empty_profile_entry


@dataclass(frozen=True)
class Member:
    """`type name : width attrs;` — `name` None for an unnamed bit-field (padding)."""

    name: str | None
    type: str
    width: int | None = None
    attrs: str = ""

    def declaration(self, cxx: bool) -> str:
        t = "bool" if cxx and self.type == "_Bool" else self.type
        suffix = ""
        if t.endswith("]"):          # char[3] -> char name[3]
            t, suffix = t[:t.index("[")], t[t.index("["):]
        name = self.name or ""
        width = f" : {self.width}" if self.width is not None else ""
        attrs = f" {self.attrs}" if self.attrs else ""
        return f"{t} {name}{suffix}{width}{attrs};".replace("  ", " ")


# The layout probe reads the record's bytes (the first set bit) through a helper:
# the analysis does not follow a pointer into a callee (a documented limit), so the
# probe does not pin the members it looks at.
FIRST_BIT = ("static __attribute__((unused)) int first_bit(const unsigned char *b, int n) {"
             " int i; for (i = 0; i < n; i++) if (b[i / 8] >> (i % 8) & 1) break;"
             " return i; }")


def header(members: list[Member], cxx: bool = False, before: str = "", after: str = "",
           record_attrs: str = "") -> str:
    body = "".join(f"    {m.declaration(cxx)}\n" for m in members)
    attrs = f"{record_attrs} " if record_attrs else ""
    return f"{before}struct {attrs}rec {{\n{body}}};\n{after}"


def program(members: list[Member], cxx: bool = False, include: str = '#include "rec.h"'
            ) -> str:
    named = [m for m in members if m.name]
    lines = ["#include <stdio.h>", "#include <string.h>", "#include <stddef.h>", include,
             FIRST_BIT, "static void layout(void) {"]
    if any(m.width is not None for m in named):
        lines += ["    struct rec r;"]
    for m in named:
        if m.width is None:
            lines.append(f'    printf("{m.name} byte %d\\n", (int)offsetof(struct rec, '
                         f'{m.name}));')
            continue
        lines += ["    memset(&r, 0, sizeof r);",
                  f"    r.{m.name} = {(1 << m.width) - 1}ULL;",
                  f'    printf("{m.name} bit %d\\n", first_bit((const unsigned char *)&r, '
                  "(int)(8 * sizeof r)));"]
    lines += ['    printf("size %d\\n", (int)sizeof(struct rec));', "}",
              "int main(void) {", "    struct rec r;", "    memset(&r, 0, sizeof r);"]
    for k, m in enumerate(named):
        if m.type.endswith("]"):
            lines.append(f"    r.{m.name}[1] = {k + 1};")
        elif m.type == "_Bool":
            lines.append(f"    r.{m.name} = {k % 2};")
        else:
            bits = min(m.width or 7, 7)
            lines.append(f"    r.{m.name} = {(k * 37 + 5) % (1 << bits)};")
    for m in named:
        if m.type.endswith("]"):
            lines.append(f'    printf("{m.name}=%d\\n", r.{m.name}[1]);')
        else:
            lines.append(f'    printf("{m.name}=%llu\\n", (unsigned long long)r.{m.name});')
    lines += ["    layout();", "    return 0;", "}"]
    text = "\n".join(lines) + "\n"
    return text.replace("(unsigned char *)&r", "reinterpret_cast<unsigned char *>(&r)") \
        if cxx else text


def split(output: str) -> tuple[list[str], dict[str, str]]:
    """(value lines, {"a byte": "4", "b bit": "35", "size": "16"}) of a program's output."""
    values = [ln for ln in output.splitlines() if "=" in ln]
    layout = dict(ln.rsplit(" ", 1) for ln in output.splitlines() if "=" not in ln)
    return values, layout


def predicted(record: Record, order: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The layout package's layout of `order` in `split`'s format, and its barriers."""
    ev = evaluate_order(record, empty_profile_entry(record), order, allow_growth=True)
    assert list(ev.order) == order, (ev.order, order)
    assert not ev.violations, ev.violations
    out = {}
    for n in order:
        if n in ev.bit_offsets:
            out[f"{n} bit"] = str(ev.bit_offsets[n])
        else:
            out[f"{n} byte"] = str(ev.offsets[n])
    out["size"] = str(ev.size)
    return out, dict(ev.bitfield_barriers)


def load(path: Path, args: list[str]) -> Record:
    return load_record(str(path), args, "rec")


def storage_order(record: Record, order: list[str]) -> list[str]:
    """`order` adjusted so that fields sharing a storage unit stay together."""
    return list(evaluate_order(record, empty_profile_entry(record), order,
                               allow_growth=True).order)


def reorder_unit_and_run(tmp_path: Path, cc: str, unit: Path, record: Record,
                         order: list[str]) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """Apply `order` to the preprocessed C11 `unit` in place (build-time mode), compile it
    with `cc -Wall -Werror` and run it: (value lines, layout it printed, predicted layout)."""
    expected, _ = predicted(record, order)
    out = reorder_unit(str(unit), ["-std=c11"], "rec", order,
                       expected_size=int(expected["size"]))
    unit.write_text(out[str(unit)])
    exe = tmp_path / f"unit-{cc}"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-o", str(exe), str(unit)],
                   check=True, capture_output=True, text=True)
    values, layout = split(subprocess.run([str(exe)], check=True, capture_output=True,
                                          text=True).stdout)
    return values, layout, expected
