"""Subcommand parsers that let FILEs follow options (`show tcb -p build tcb.c`), as most
compilers and clang-tidy do: argparse's intermixed parsing for one subparser. Defines no
options itself."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


class _IntermixedParser(argparse.ArgumentParser):
    _inside = False

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


def add_intermixed_parser(sub: argparse._SubParsersAction, name: str,
                          **kwargs: Any) -> argparse.ArgumentParser:
    """`sub.add_parser(name, **kwargs)`, whose positionals may come after its options."""
    parser_class = sub._parser_class
    sub._parser_class = type(f"{name.capitalize()}Parser", (_IntermixedParser, parser_class),
                             {})
    try:
        return sub.add_parser(name, **kwargs)
    finally:
        sub._parser_class = parser_class
