"""Apply a chosen member order to the source and verify it with the compiler
(`apply_order`); the order itself is decided in cachefit.reorder."""
