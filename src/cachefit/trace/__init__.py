"""cachefit.trace stage."""
