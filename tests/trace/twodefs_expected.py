"""What the profiles of the two-definition programs hold, and the plans their tests apply.

tests/trace/programs/twodefs_* (C: `struct dict` twice) and cxx_twodefs_*.cc (C++: `Node`
twice, in anonymous namespaces) are one program in two languages: the program's record
(64 bytes) and the library's (32 bytes, other members) declare the same members, and the
entry functions (op_main/op_lib, op_a/op_b) make the same accesses on the same objects. So
one set of expected fields, sequences and plans serves test_trace_two_definitions.py and
test_trace_cxx_two_definitions.py; the keys, entry names and printed outputs, which differ,
stay in each test. Not for the pipeline tests' plans (those are the optimizer's own).
"""

from __future__ import annotations

R, W = "r", "w"
# the program's record on the heap, 3 times: writes used (8, 8), reads rehashidx (16, 4)
SEQ_A = {((0, 8, 8, W), (0, 16, 4, R)): 3}
# the library's on the heap twice and its global once: writes privdata (24, 8),
# reads size (8, 8)
SEQ_B = {((0, 24, 8, W), (0, 8, 8, R)): 3}
FIELDS_A = [("type", 0, 8), ("used", 8, 8), ("rehashidx", 16, 4), ("pause", 20, 4),
            ("name", 24, 40)]
FIELDS_B = [("table", 0, 8), ("size", 8, 8), ("used", 16, 8), ("privdata", 24, 8)]
# the plans the tests write by hand
ORDER_A = ["name", "rehashidx", "pause", "used", "type"]
ORDER_B = ["privdata", "used", "size", "table"]
