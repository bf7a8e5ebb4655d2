"""Checks of numeric command-line options shared by several commands (one-line UserError,
exit 2)."""

from __future__ import annotations

from cachefit.errors import UserError


def refuse_negative(option: str, value: int | None, hint: str) -> None:
    """`--top -1` and the like: a negative count is refused, not silently misread."""
    if value is not None and value < 0:
        raise UserError(f"{option} {value} is negative", hint)
