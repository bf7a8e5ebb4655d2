"""cachefit: profile-guided memory layout for C and C++ records.

Data flows one way, down the layers of docs/architecture.md: cli -> pipeline -> the stages
(report, rewrite, trace, flatten) -> reorder (decides) -> layout (optimizes) -> frontend
(reads sources and debug information) -> model (the formats) -> the base modules. The
import-linter contracts in pyproject.toml keep it so.
"""

__version__ = "0.1.0"
