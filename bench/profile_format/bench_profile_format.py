"""Size and load time of a big synthetic profile: version 1 JSON against version 2 (issue 26).

Builds one profile of N sequences (default 100,000) over a few types, kinds of operation
and summaries, shaped like traces of real programs (a few hot fields, sequences of 5 to
60 accesses, two object roles, a tenth of them summaries with hits), writes it as
version 1 JSON (plain and gzipped; summaries spelled as sequences without hits, which
version 1 cannot say) and as version 2 (what `cachefit.model.profile.save`
writes, and its readable form), and times `profile_format.load` on each (best of
--repeat runs, one process). Prints a Markdown table; RESULTS.md holds a run.

    .venv/bin/python bench/profile_format/bench_profile_format.py [--sequences N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
from pathlib import Path

from cachefit.model import profile as pf
from cachefit.model.profile import Access, AccessSequence, FieldSpan, Profile, TypeProfile


def synthetic(n: int, seed: int = 26) -> Profile:
    rng = random.Random(seed)
    kinds = ["deflate", "longest_match", "fill_window", "compress_block"]
    types = {}
    per_type = n // 4
    for t in range(4):
        nfields = rng.randint(40, 120)
        fields, off = [], 0
        for i in range(nfields):
            size = rng.choice([1, 2, 4, 8, 8, 8, 16])
            off = (off + min(size, 8) - 1) // min(size, 8) * min(size, 8)
            fields.append(FieldSpan(f"f{i}", off, size))
            off += size
        hot = rng.sample(fields, min(24, nfields))
        seqs = []
        seen = set()
        while len(seqs) < per_type:
            length = rng.randint(5, 60)
            accs = tuple(
                Access(rng.randint(0, 1), f.offset, f.size, rng.choice("rrrw"))  # type: ignore[arg-type]
                for f in (rng.choice(hot) for _ in range(length)))
            entry = rng.choice(kinds)
            summary = rng.random() < 0.1
            if summary:
                accs = tuple(dict.fromkeys(accs))
            key = (entry, accs, summary)
            if key in seen:
                continue
            seen.add(key)
            count = max(1, int(rng.paretovariate(1.2)))
            hits = tuple(count * rng.randint(1, 5000) for _ in accs) if summary else None
            seqs.append(AccessSequence(count, accs, entry, hits))
        types[f"type{t}"] = TypeProfile(f"type{t}", off, fields, seqs)
    prof = Profile(types, invocations=sum(t.counted for t in types.values()),
                   metadata={"backend": "compile-time", "entry": kinds})
    prof.entry_invocations = {k: 0 for k in kinds}
    for t in types.values():
        for s in t.sequences:
            if s.entry is not None:
                prof.entry_invocations[s.entry] += s.count
    return prof


def v1_json(prof: Profile) -> str:
    """The profile as version 1 wrote it (one line per sequence, no kinds, no hits)."""
    types = {}
    for name, t in sorted(prof.types.items()):
        types[name] = {"size": t.size, "fields": [f.to_json() for f in t.fields],
                       "sequences": [{"count": s.count,
                                      "accesses": [a.to_json() for a in s.accesses]}
                                     for s in t.sequences],
                       "dropped": {"runaway": 0, "outside_objects": 0, "table_full": 0}}
    return json.dumps({"format": "cachefit-profile", "version": 1, "cache_line": 64,
                       "invocations": prof.invocations, "types": types})


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sequences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    prof = synthetic(args.sequences)
    nseq = sum(len(t.sequences) for t in prof.types.values())
    nacc = sum(len(s.accesses) for t in prof.types.values() for s in t.sequences)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        files = {}
        (d / "v1.json").write_text(v1_json(prof))
        files["version 1 JSON"] = d / "v1.json"
        (d / "v1.json.gz").write_bytes(gzip.compress((d / "v1.json").read_bytes(), mtime=0))
        files["version 1 JSON, gzip"] = d / "v1.json.gz"
        save_s = best(lambda: pf.save(prof, d / "v2.json"), 1)
        files["version 2 (packed, as saved)"] = d / "v2.json"
        same = Profile({n: TypeProfile(n, t.size, t.fields, [
            AccessSequence(s.count, s.accesses, s.entry) for s in t.sequences])
            for n, t in prof.types.items()}, prof.invocations, metadata=prof.metadata,
            entry_invocations=prof.entry_invocations)
        pf.save(same, d / "v2nohits.json")
        files["version 2, summaries without hits (as much as version 1 says)"] = \
            d / "v2nohits.json"
        (d / "v2r.json").write_text(pf.dumps(prof, readable=True))
        files["version 2 readable (show --json)"] = d / "v2r.json"
        print(f"{nseq} sequences, {nacc} accesses, 4 types, 4 kinds; "
              f"version 2 save {save_s:.2f} s\n")
        print(f"| file | size | load (best of {args.repeat}) |")
        print("| --- | ---: | ---: |")
        for label, path in files.items():
            secs = best(lambda p=path: pf.load(p), args.repeat)
            size = path.stat().st_size
            print(f"| {label} | {size / 1e6:.2f} MB | {secs:.2f} s |")


if __name__ == "__main__":
    main()
