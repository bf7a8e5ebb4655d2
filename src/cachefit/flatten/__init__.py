"""cachefit.flatten: turn a class hierarchy into one flat class with the same interface.

See `cachefit.flatten.api` (`flatten_unit`, `flatten_tree`) and docs/flatten.md.
"""

from cachefit.flatten.api import FlattenResult, flatten_tree, flatten_unit
from cachefit.flatten.problems import FlattenError, PreconditionFailed, Unsupported

__all__ = ["FlattenResult", "flatten_unit", "flatten_tree", "FlattenError",
           "PreconditionFailed", "Unsupported"]
