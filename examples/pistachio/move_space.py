#!/usr/bin/env python3
"""A hand-made member move for checking the variant pipeline: puts tcb_t's `space` right after
`pdir_cache` (both private), so that the IPC fast path reads one cache line less of the
sending thread's TCB. Usage (see README.md):

  make variant VARIANT=spacemoved REORDER_CMD='python3 move_space.py "$$TCB_H"'
"""

import sys

DECL = "    space_t *\t\tspace;\n"
OLD = "private:\n    /* pager etc */\n" + DECL
ANCHOR = "    word_t\t\tpdir_cache;\n"


def main(path: str) -> int:
    with open(path) as fh:
        text = fh.read()
    if OLD not in text or ANCHOR not in text:
        print(f"move_space: {path} does not have the expected declarations", file=sys.stderr)
        return 1
    text = text.replace(OLD, "").replace(ANCHOR, ANCHOR + DECL)
    with open(path, "w") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
