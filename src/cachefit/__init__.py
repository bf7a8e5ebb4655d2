"""cachefit: profile-guided memory layout for C and C++ records.

Data flows one way: frontend -> model -> transformations (flatten, layout) -> rewrite/build.
"""

__version__ = "0.1.0"
