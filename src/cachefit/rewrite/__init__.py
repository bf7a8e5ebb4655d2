"""cachefit.rewrite stage."""
