"""cachefit.report: the terminal and HTML reports of a profile (`cachefit report`).

`write_reports(profile_path, out_dir, plan_path=None, types=None, ...)` writes report.txt
and report.html (used by `cachefit build`); `render_reports` returns both texts. They are
imported lazily, so `cachefit show` (which only needs `layout_text`) does not load the
layout optimizer. The modules compute nothing about layouts themselves: figures come from
`cachefit.layout`, layouts from the compiler (DWARF) or, labelled predicted, from the
placement model.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ReportOptions", "render_reports", "write_reports"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cachefit.report import report_files
        return getattr(report_files, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
