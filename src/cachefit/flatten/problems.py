"""Why a class cannot be flattened: one error per precondition, and unsupported constructs.

Every refusal names the precondition of transparent flattening (paper 001, §3) that failed,
the place of the offending code (as the user wrote it: line markers of a preprocessed file
are honoured) and what to change. `code` is a stable identifier for tests and `--json`.
"""

from __future__ import annotations

from cachefit.errors import Location, UnsafeTransformation

PRECONDITIONS = {
    1: "the hierarchy is valid C++",
    2: "only the most derived class is used outside the hierarchy",
    3: "data member names are unique across the hierarchy",
    4: "no name lookup in the hierarchy needs a base-class qualifier",
}


class FlattenError(UnsafeTransformation):
    """Flattening was refused; `code` says why."""

    code = "flatten"

    def __init__(self, what: str, todo: str = "", location: Location | None = None,
                 details: list[str] | None = None, code: str | None = None) -> None:
        super().__init__(what, todo, location, details)
        if code is not None:
            self.code = code


class PreconditionFailed(FlattenError):
    """A precondition of transparent flattening does not hold."""

    def __init__(self, number: int, code: str, what: str, todo: str,
                 location: Location | None = None, details: list[str] | None = None) -> None:
        self.number = number
        super().__init__(f"precondition {number} ({PRECONDITIONS[number]}) failed: {what}",
                         todo, location, details, code)


class Unsupported(FlattenError):
    """The hierarchy uses a construct the flattener does not handle."""

    def __init__(self, what: str, todo: str, location: Location | None = None,
                 details: list[str] | None = None, code: str = "unsupported") -> None:
        super().__init__(f"cannot flatten: {what}", todo, location, details, code)
