"""bench/trace: the interleaved schedule, the per-round ratio statistics, the build key.

These test the benchmark's own arithmetic and bookkeeping with synthetic timings and
tiny commands; the measurements themselves are run by bench/trace/run_bench.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "trace"
sys.path.insert(0, str(BENCH))

from bench_builds import _digest, _files  # noqa: E402
from interleaved_schedule import (  # noqa: E402
    Job,
    is_null_device,
    null_device,
    round_orders,
    run_once,
    run_rounds,
)
from round_stats import RatioSpec, Sample, Term, ratio_summary, spread  # noqa: E402


def cpu_rounds(*rounds: dict[str, float]) -> list[dict[str, Sample]]:
    """Rounds whose wall time is the CPU time plus 10%."""
    return [{k: Sample(wall=v * 1.1, cpu=v) for k, v in r.items()} for r in rounds]


def test_spread_uses_inclusive_quartiles() -> None:
    s = spread([5.0, 1.0, 4.0, 2.0, 3.0])
    assert (s.median, s.q1, s.q3, s.low, s.high, s.n) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    one = spread([7.0])
    assert (one.median, one.q1, one.q3, one.n) == (7.0, 7.0, 7.0, 1)
    with pytest.raises(ValueError):
        spread([])


def test_per_round_ratio_cancels_load_shared_by_a_round() -> None:
    # The machine's load multiplies both runs of a round by the same factor, but the
    # slow rounds are not the same for the two variants' medians: the per-round ratio
    # is exactly 10 every time while the ratio of medians is not.
    loads = [1.0, 1.0, 3.0, 1.0, 2.5]
    rounds = cpu_rounds(*({"allow": k, "dhat": 10 * k} for k in loads))
    rounds[1]["dhat"] = Sample(wall=44.0, cpu=40.0)   # a burst during one DHAT run only
    spec = RatioSpec("r", Term("dhat"), Term("allow"), 10.0)
    out = ratio_summary(spec, rounds)
    per_round = out["per_round_cpu"]
    assert isinstance(per_round, dict)
    assert per_round["median"] == 10.0 and per_round["min"] == 10.0
    assert per_round["max"] == 40.0 and per_round["n"] == 5
    assert out["of_medians_cpu"] == 25.0   # median 25 (10, 40, 30, 10, 25) over median 1
    assert out["rounds_meeting_target"] == "5/5" and out["verdict"] == "met"
    wall = out["per_round_wall"]
    assert isinstance(wall, dict) and wall["median"] == 10.0


def test_long_run_ratio_subtracts_each_sides_start_up_in_the_same_round() -> None:
    rounds = cpu_rounds(*({"allow": 0.001 + x, "allow0": 0.001, "dhat": 0.3 + 9 * x,
                           "dhat0": 0.3} for x in (0.1, 0.2, 0.15)))
    whole = ratio_summary(RatioSpec("w", Term("dhat"), Term("allow"), 10.0), rounds)
    long = ratio_summary(RatioSpec("l", Term("dhat", "dhat0"), Term("allow", "allow0"), 10.0),
                         rounds)
    assert long["ratio"] == "(dhat - dhat0) / (allow - allow0)"
    assert long["per_round_cpu"]["median"] == 9.0  # type: ignore[index]
    assert long["verdict"] == "not met" and long["rounds_meeting_target"] == "0/3"
    # with the start-up counted, DHAT looks better than 9x (more so on short runs)
    assert whole["per_round_cpu"]["median"] > 10.0  # type: ignore[index]
    assert whole["per_round_cpu"]["max"] > whole["per_round_cpu"]["min"]  # type: ignore[index]


def test_verdicts_in_both_directions_and_marginal_cases() -> None:
    at_most = RatioSpec("x", Term("traced"), Term("plain"), 3.0, at_least=False)
    fast = cpu_rounds(*({"plain": 1.0, "traced": t} for t in (1.5, 1.7, 2.0, 2.9)))
    assert ratio_summary(at_most, fast)["verdict"] == "met"
    # median under 3 but the upper quartile above it
    edgy = cpu_rounds(*({"plain": 1.0, "traced": t} for t in (2.5, 2.8, 2.9, 3.5, 4.0)))
    out = ratio_summary(at_most, edgy)
    assert out["verdict"] == "met (marginal)" and out["rounds_meeting_target"] == "3/5"
    slow = cpu_rounds(*({"plain": 1.0, "traced": t} for t in (3.1, 3.2, 2.0)))
    assert ratio_summary(at_most, slow)["verdict"] == "not met"
    no_target = ratio_summary(RatioSpec("y", Term("traced"), Term("plain")), fast)
    assert "verdict" not in no_target and "target" not in no_target


def test_rounds_with_a_non_positive_denominator_are_skipped_and_counted() -> None:
    rounds = cpu_rounds({"a": 1.0, "b": 0.5, "b0": 0.2}, {"a": 1.0, "b": 0.2, "b0": 0.3},
                        {"a": 2.0, "b": 0.4, "b0": 0.2})
    out = ratio_summary(RatioSpec("r", Term("a"), Term("b", "b0")), rounds)
    assert out["rounds_skipped"] == 1
    assert out["per_round_cpu"]["n"] == 2  # type: ignore[index]
    assert out["per_round_cpu"]["min"] == round(1.0 / 0.3, 2)  # type: ignore[index]


def test_round_orders_are_seeded_permutations_that_vary() -> None:
    names = ["plain", "allowlist", "allowlist-calls", "whole", "dhat", "dhat_startup"]
    orders = round_orders(names, 15, seed=5)
    assert len(orders) == 15
    assert all(sorted(o) == sorted(names) for o in orders)
    assert len({tuple(o) for o in orders}) > 1
    assert len({o[0] for o in orders}) > 1   # not always the same one first
    assert round_orders(names, 15, seed=5) == orders
    assert round_orders(names, 15, seed=6) != orders


def test_run_rounds_runs_each_job_once_per_round_after_a_warm_up() -> None:
    calls: list[str] = []

    def fake(job: Job) -> Sample:
        calls.append(job.name)
        return Sample(wall=len(calls) * 1.0, cpu=float(len(job.name)))

    jobs = [Job(n, ["true"]) for n in ("a", "bb", "ccc")]
    rounds = run_rounds(jobs, 4, seed=1, runner=fake)
    assert len(calls) == 3 + 4 * 3
    assert calls[:3] == ["a", "bb", "ccc"]          # warm-up, discarded
    assert len(rounds) == 4 and all(sorted(r) == ["a", "bb", "ccc"] for r in rounds)
    assert [list(r) for r in rounds] == round_orders(["a", "bb", "ccc"], 4, seed=1)
    assert all(r["ccc"].cpu == 3.0 for r in rounds)
    with pytest.raises(ValueError):
        run_rounds([Job("a", ["true"]), Job("a", ["true"])], 1, seed=1, runner=fake)


def test_run_once_measures_the_childs_cpu_and_stops_on_failure(tmp_path: Path) -> None:
    busy = Job("busy", [sys.executable, "-c", "import time\nt=time.process_time()\n"
                        "while time.process_time() - t < 0.2: pass"])
    s = run_once(busy)
    assert s.cpu >= 0.2 and s.wall >= s.cpu * 0.9
    idle = run_once(Job("idle", [sys.executable, "-c", "import time; time.sleep(0.3)"]))
    assert idle.wall >= 0.3 and idle.cpu < 0.25
    data = tmp_path / "in.txt"
    data.write_text("x" * 5)
    run_once(Job("stdin", [sys.executable, "-c",
                           "import sys; assert sys.stdin.read() == 'xxxxx'"], data))
    with pytest.raises(SystemExit):
        run_once(Job("fails", [sys.executable, "-c", "raise SystemExit(3)"]))


def test_build_key_follows_sources_not_build_artefacts(tmp_path: Path) -> None:
    rt = tmp_path / "runtime"
    (rt / "src").mkdir(parents=True)
    (rt / "build").mkdir()
    (rt / "src" / "cf_core.c").write_text("int x;\n")
    (rt / "Makefile").write_text("all:\n")
    parts = ("Makefile", "src", "build")
    before = _digest(rt, _files(rt, parts))
    (rt / "build" / "libcachefit_rt.a").write_bytes(b"!<arch>\n")
    (rt / "src" / "cf_core.o").write_bytes(b"\x7fELF")
    assert _digest(rt, _files(rt, parts)) == before
    (rt / "src" / "cf_core.c").write_text("int y;\n")
    assert _digest(rt, _files(rt, parts)) != before


def test_results_format_doc_example_matches_the_code() -> None:
    import json
    import re

    import run_bench
    from round_stats import variant_summary

    doc = (BENCH.parents[1] / "docs" / "trace-bench-results.md").read_text()
    assert f", version {run_bench.VERSION}" in doc.splitlines()[0]
    example = json.loads(re.search(r"```json\n(.*?)```", doc, re.S).group(1))  # type: ignore[union-attr]
    assert (example["format"], example["version"]) == (run_bench.FORMAT, run_bench.VERSION)
    work = example["results"][0]
    rounds = cpu_rounds(*({"plain": 1.0, "allowlist": a, "dhat": 12 * a} for a in (1.5, 2.0)))
    spec = next(s for s in run_bench.RATIOS if s.name == "dhat_over_allowlist")
    assert set(ratio_summary(spec, rounds)) == set(work["ratios"][spec.name])
    assert set(variant_summary([r["dhat"] for r in rounds])) == set(work["variants"]["dhat"])
    assert set(work["variants"]["dhat"]["cpu_s"]) == {"median", "q1", "q3", "min", "max", "n"}
    for spec in run_bench.RATIOS:
        assert f"`{spec.name}`" in doc


def test_results_table_reports_each_targets_verdict_with_its_spread() -> None:
    import results_table
    import run_bench
    from round_stats import variant_summary

    names = ("plain", "allowlist", "allowlist-calls", "whole", "dhat", "plain_startup",
             "allowlist_startup", "dhat_startup")
    rounds = []
    for k in (1.0, 1.2, 0.9, 1.1):
        t = {"plain": 0.1, "allowlist": 0.2, "allowlist-calls": 0.25, "whole": 0.3,
             "dhat": 2.3, "plain_startup": 0.001, "allowlist_startup": 0.001,
             "dhat_startup": 0.3}
        rounds.append({n: Sample(wall=t[n] * k, cpu=t[n] * k) for n in names})
    work = {"workload": "zlib (Debian zlib minigzip, deflate_state/longest_match, 4 MiB)",
            "variants": {n: variant_summary([r[n] for r in rounds]) for n in names},
            "ratios": {s.name: ratio_summary(s, rounds) for s in run_bench.RATIOS}}
    lines = results_table.verdicts([work])
    assert len(lines) == 3
    assert lines[0].startswith("* allowlist ≤ 3x plain, zlib minigzip, 4 MiB: **met**")
    assert "**met** — per-round median 11.50" in lines[1]           # 2.3 / 0.2
    assert "**met** — per-round median 10.05" in lines[2]           # 2.0 / 0.199
    table = "\n".join(results_table.dhat_table([work]))  # DHAT median: 2.3 x 1.05
    assert "| zlib minigzip, 4 MiB | 2.415 s | **11.50 [11.50–11.50]** |" in table


def test_output_goes_to_a_null_device_and_a_regular_file_is_refused(tmp_path: Path) -> None:
    null = null_device(tmp_path)
    assert is_null_device(null)
    run_once(Job("writes", [sys.executable, "-c", "print('x' * 100000)"], null=null))
    assert is_null_device(null)
    fake = tmp_path / "not-null"
    fake.write_text("")
    assert not is_null_device(fake) and not is_null_device(tmp_path / "missing")
    with pytest.raises(SystemExit):
        run_once(Job("writes", [sys.executable, "-c", "print('x')"], null=fake))
    assert fake.read_text() == ""      # refused before running: nothing was written
