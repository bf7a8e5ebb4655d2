"""Order-dependency analysis for `cachefit reorder`: what code assumes about member order.

The modules here read code (through libclang) and state what a reordering must keep
(`constraints`) or why it must not happen at all (`Refusal`). They never edit code and never
choose an order.
"""
