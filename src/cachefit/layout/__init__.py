"""cachefit.layout stage."""
