"""The layer that decides: which member order a record gets, and why it may not move.

The analysis modules read code (through libclang) and state what a reordering must keep
(`constraints`) or why it must not happen at all (`Refusal`); `decide` turns the analysis
and a profile into an order and its predicted figures (through cachefit.layout). Nothing
here edits code (cachefit.rewrite applies a decision), reads a profile file or prints.
"""
