"""cachefit.build stage."""
