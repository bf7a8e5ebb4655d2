"""cachefit.flatten stage."""
