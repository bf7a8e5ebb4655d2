"""The report of one flattening (`--json`): what was removed, kept, copied, dropped, renamed,
turned into init functions and devirtualised. It reads the decisions in `FlatState`; it
changes nothing.
"""

from __future__ import annotations

from cachefit.flatten.init_functions import init_name
from cachefit.flatten.model import Member
from cachefit.flatten.places import class_removed
from cachefit.flatten.state import FlatState


def plan_report(st: FlatState, inits: list[Member]) -> dict:
    """The `--json` report of the plan in `st` (`inits`: the init functions made)."""
    h = st.h
    removed = [c.key for c in h.classes.values() if not c.is_target and
               class_removed(st, c)]
    kept = [c.key for c in h.classes.values() if not c.is_target and
            not class_removed(st, c)]
    virtuals = [m.qualified for m in [*st.target.members, *st.copied]
                if m.kind in ("method", "dtor") and m.virtual]
    virtuals += [f"{h.members[k].qualified} (as {n})" for k, n in st.renames.items()
                 if h.members[k].virtual]
    return {
        "class": st.target.key,
        "classes_removed": removed,
        "classes_kept": kept,
        "members_copied": [{"from": m.cls.key, "name": m.name or m.kind, "kind": m.kind}
                           for m in st.copied],
        "members_dropped": [{"from": m.cls.key, "name": m.name, "kind": m.kind}
                            for m in st.dropped],
        "renamed_copies": [{"from": h.members[k].qualified, "as": n}
                           for k, n in st.renames.items()],
        "init_functions": [{"from": f"{m.cls.key}::{'~' if m.kind == 'dtor' else ''}"
                            f"{m.cls.name}", "as": init_name(st, m)}
                           for m in inits],
        "virtual_functions_devirtualised": virtuals,
        "vtable_pointers_removed": st.layout.vptrs if st.layout else None,
    }
