#!/usr/bin/env python3
"""What the layout stage chooses for `shared` from one traced run, at several sharing weights:
reads the record from the DWARF of a `cachefit build` project's profile binary
(PROJECT/out/profile/bin/shared, as run.py leaves it in WORKDIR/cachefit) and its profile
(PROJECT/out/profile.json), and prints per weight the method, order, padding, transfers per
operation before and after and what each padding saves. Only a probe of
cachefit.layout.optimizer.optimize_layout on bench/threads' program; builds nothing.

Usage: .venv/bin/python bench/threads/probe_layout.py PROJECT [WEIGHT...]   (default 1)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cachefit.frontend.dwarf_records import read_record
from cachefit.layout.optimizer import optimize_layout
from cachefit.model import profile as profile_model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("project", type=Path, help="the directory holding cachefit.toml and out/")
    ap.add_argument("weights", type=float, nargs="*", default=[1.0])
    args = ap.parse_args()
    out = args.project / "out"
    record = read_record(str(out / "profile" / "bin" / "shared"), "shared")
    prof = profile_model.load(out / "profile.json")
    entry = prof.types["shared"]
    for w in args.weights:
        r = optimize_layout(record, entry, sharing_weight=w)
        print(f"weight {w:g}: {r.method}; order {' '.join(r.order)}; padding {r.padding}; "
              f"transfers/op {r.transfers_before} -> {r.transfers_after}; "
              f"padding saves {r.padding_gains}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
