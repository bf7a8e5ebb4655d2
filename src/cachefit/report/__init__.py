"""cachefit.report stage."""
