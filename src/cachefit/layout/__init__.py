"""cachefit.layout: choose a member order for a record from an access profile.

Public API: `optimize_layout` (the optimizer of `cachefit reorder`), `evaluate_order`
(the cost of any given order), `LayoutConstraints` and its parts, and the result types.
The algorithm and cost model are described in docs/layout.md. This package computes
layouts only; it does not read or rewrite source files.
"""

from cachefit.layout.constraints import LayoutConstraints, SameSideConstraint, UnitConstraint
from cachefit.layout.merging import MergedSequence
from cachefit.layout.optimizer import evaluate_order, optimize_layout
from cachefit.layout.result import LayoutEvaluation, LayoutResult, LineFigures

__all__ = [
    "LayoutConstraints",
    "LayoutEvaluation",
    "LayoutResult",
    "LineFigures",
    "MergedSequence",
    "SameSideConstraint",
    "UnitConstraint",
    "evaluate_order",
    "optimize_layout",
]
