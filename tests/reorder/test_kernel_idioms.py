"""Two idioms of the Pistachio kernel (issue 8) that are not order dependencies.

Raw storage (a union of byte arrays, as Pistachio's `whole_tcb_t`) converted into the record is
memory becoming an object, not a read through another layout: no constraint. The other
direction, and storage that is not bytes, still pin the covered members.

The asm-offsets idiom (`asm("\\n#define OFS_X %0" :: "i"(offsetof(T, x)))`, compiled with -S
into a header of one symbol per member) is accepted; an asm statement that uses a member's
offset otherwise, or publishes an offset with arithmetic around it, is still refused.
"""

from __future__ import annotations

from pathlib import Path

from reorder_helpers import write

from cachefit.reorder.analysis import analyse, units_for

REC = """\
typedef unsigned char u8_t;
struct tcb { long a; char b; long c; int d; };
typedef union whole_tcb { u8_t pad[2048]; } whole_tcb_t;
union words { long w[256]; };
"""


def _constraints(tmp_path: Path, use: str) -> list[tuple[str, tuple[str, ...]]]:
    write(tmp_path, {"rec.h": REC, "use.c": '#include "rec.h"\n' + use})
    a = analyse("tcb", units_for([str(tmp_path / "rec.h"), str(tmp_path / "use.c")], None,
                                 ["-std=gnu11"]))
    assert not a.refusals, a.refusals
    return [(c.kind, c.fields) for c in a.constraints]


def test_storage_union_into_the_record_needs_nothing(tmp_path: Path) -> None:
    assert _constraints(tmp_path, "whole_tcb_t idle;\n"
                        "struct tcb *idle_tcb = (struct tcb *) &idle;\n") == []


def test_record_read_as_storage_or_as_words_is_pinned(tmp_path: Path) -> None:
    got = _constraints(tmp_path,
                       "u8_t first(struct tcb *t) { return ((whole_tcb_t *) t)->pad[0]; }\n"
                       "union words w;\n"
                       "struct tcb *t2 = (struct tcb *) &w;\n")
    assert got == [("pin", ("a", "b", "c", "d")), ("pin", ("a", "b", "c", "d"))]


# as the build-time mode sees Pistachio's generator after preprocessing: the O(sym, value)
# macro expanded, MKSTR(sym) stringised (the template is read from the tokens, so the idiom is
# recognised in preprocessed units; unexpanded macros leave it refused)
ASM = """\
#include <stddef.h>
void make_offsets(void) {
%s
}
"""


def _o(sym: str, value: str) -> str:
    return f'    __asm__ __volatile__ ("\\n#define " "{sym}" " %0 " : : "i" ({value}));'


def _asm(tmp_path: Path, body: str) -> tuple[list[str], list[tuple[str, tuple[str, ...]]]]:
    write(tmp_path, {"rec.h": REC, "gen.c": '#include "rec.h"\n' + ASM.replace("%s", body)})
    a = analyse("tcb", units_for([str(tmp_path / "rec.h"), str(tmp_path / "gen.c")], None,
                                 ["-std=gnu11"]))
    return [r.what for r in a.refusals], [(c.kind, c.fields) for c in a.constraints]


def test_asm_offsets_generator_is_accepted(tmp_path: Path) -> None:
    refusals, constraints = _asm(tmp_path, _o("OFS_TCB_A", "offsetof(struct tcb, a)") + "\n" +
                                 _o("OFS_TCB_D", "offsetof(struct tcb, d)"))
    assert refusals == [] and constraints == []


def test_asm_offsets_with_arithmetic_or_other_asm_is_refused(tmp_path: Path) -> None:
    refusals, _ = _asm(tmp_path, _o("OFS_TCB_A4", "offsetof(struct tcb, a) + 4"))
    assert len(refusals) == 1 and "tcb.a" in refusals[0]
    refusals, _ = _asm(tmp_path, '    __asm__ volatile("movl %0, %%eax" :: '
                                 '"i"(offsetof(struct tcb, c)));')
    assert len(refusals) == 1 and "tcb.c" in refusals[0]
