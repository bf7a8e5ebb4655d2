"""cachefit.pipeline stage."""
