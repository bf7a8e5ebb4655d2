"""cachefit.frontend stage."""
