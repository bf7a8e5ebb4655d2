"""Summaries of interleaved timing rounds: per-variant spreads and per-round ratios.

A round runs every variant once (bench/trace/interleaved_schedule.py), so a ratio taken
inside one round compares runs made seconds apart under the same machine load. This
module turns the rounds into figures: for each variant the median and spread of its
times, and for each ratio both the ratio of the medians and the median, quartiles and
range of the per-round ratios, plus how many rounds meet a target.
It only computes: it runs nothing and writes nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    """One run: wall seconds and CPU seconds (user + system of the child, from wait4)."""

    wall: float
    cpu: float


@dataclass(frozen=True)
class Spread:
    """Median, quartiles (inclusive method) and range of some values."""

    median: float
    q1: float
    q3: float
    low: float
    high: float
    n: int

    def as_dict(self, digits: int) -> dict[str, float | int]:
        return {"median": round(self.median, digits), "q1": round(self.q1, digits),
                "q3": round(self.q3, digits), "min": round(self.low, digits),
                "max": round(self.high, digits), "n": self.n}


def spread(values: Sequence[float]) -> Spread:
    """The spread of `values` (at least one)."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1:
        v = values[0]
        return Spread(v, v, v, v, v, 1)
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Spread(q2, q1, q3, min(values), max(values), len(values))


@dataclass(frozen=True)
class Term:
    """A variant's time, or with `minus` a variant's time less another's in the same
    round (e.g. DHAT less DHAT's start-up run)."""

    variant: str
    minus: str | None = None

    def __str__(self) -> str:
        return self.variant if self.minus is None else f"({self.variant} - {self.minus})"

    def of(self, samples: dict[str, Sample]) -> Sample:
        """The term's (wall, cpu) in one round or of the medians; KeyError if missing."""
        s = samples[self.variant]
        if self.minus is None:
            return s
        m = samples[self.minus]
        return Sample(s.wall - m.wall, s.cpu - m.cpu)


@dataclass(frozen=True)
class RatioSpec:
    """numerator / denominator. `target` and `at_least` give the issue's target:
    ratio >= target if at_least, else ratio <= target; None for no target."""

    name: str
    numerator: Term
    denominator: Term
    target: float | None = None
    at_least: bool = True


def _meets(value: float, spec: RatioSpec) -> bool:
    assert spec.target is not None
    return value >= spec.target if spec.at_least else value <= spec.target


def _verdict(per_round: Spread, spec: RatioSpec) -> str:
    """'met' when the median per-round ratio meets the target and so does the whole
    interquartile range; 'met (marginal)' when the median does but a quartile does not;
    'not met' otherwise."""
    if not _meets(per_round.median, spec):
        return "not met"
    edge = per_round.q1 if spec.at_least else per_round.q3
    return "met" if _meets(edge, spec) else "met (marginal)"


def ratio_summary(spec: RatioSpec, rounds: Sequence[dict[str, Sample]],
                  digits: int = 2) -> dict[str, object]:
    """The ratio of medians (CPU and wall) and the spread of the per-round ratios.
    A round whose denominator is not positive (a difference swamped by noise) is left
    out of the per-round figures and counted in `rounds_skipped`."""
    names = {k for r in rounds for k in r}
    medians = {k: Sample(statistics.median(r[k].wall for r in rounds if k in r),
                         statistics.median(r[k].cpu for r in rounds if k in r)) for k in names}
    num, den = spec.numerator.of(medians), spec.denominator.of(medians)
    cpu_ratios: list[float] = []
    wall_ratios: list[float] = []
    skipped = 0
    for r in rounds:
        try:
            n, d = spec.numerator.of(r), spec.denominator.of(r)
        except KeyError:
            skipped += 1
            continue
        if d.cpu <= 0 or d.wall <= 0:
            skipped += 1
            continue
        cpu_ratios.append(n.cpu / d.cpu)
        wall_ratios.append(n.wall / d.wall)
    out: dict[str, object] = {
        "ratio": f"{spec.numerator} / {spec.denominator}",
        "of_medians_cpu": round(num.cpu / den.cpu, digits) if den.cpu > 0 else None,
        "of_medians_wall": round(num.wall / den.wall, digits) if den.wall > 0 else None,
        "rounds_skipped": skipped,
    }
    if cpu_ratios:
        cpu = spread(cpu_ratios)
        out["per_round_cpu"] = cpu.as_dict(digits)
        out["per_round_wall"] = spread(wall_ratios).as_dict(digits)
        if spec.target is not None:
            met = sum(_meets(v, spec) for v in cpu_ratios)
            out["target"] = (">= " if spec.at_least else "<= ") + f"{spec.target:g}"
            out["rounds_meeting_target"] = f"{met}/{len(cpu_ratios)}"
            out["verdict"] = _verdict(cpu, spec)
    return out


def variant_summary(samples: Sequence[Sample], digits: int = 4) -> dict[str, object]:
    """CPU and wall spread of one variant's runs."""
    return {"cpu_s": spread([s.cpu for s in samples]).as_dict(digits),
            "wall_s": spread([s.wall for s in samples]).as_dict(digits)}
