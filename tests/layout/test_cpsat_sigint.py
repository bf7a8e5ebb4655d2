"""Issue 29 (found re-running case 5): CP-SAT's own SIGINT handling broke Ctrl-C.

By default a CP-SAT solve installs a SIGINT handler of its own for its duration, which
stops the search without telling anyone (the interrupt was lost), and afterwards puts
back SIG_DFL instead of Python's handler: every Ctrl-C after the layout optimizer had run
(the optimized build of `cachefit build`, the rewrite and compile check of `cachefit
reorder`) killed cachefit outright, without its cleanup. Every solver is made by
`cpsat_model.new_solver`, which leaves SIGINT to Python.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

SCRIPT = """
import os, signal, sys, time
sys.path.insert(0, {here!r})
from ortools.sat.python import cp_model
from layout_synth import large_case, typed
from cachefit.layout import optimize_layout

solves = []
real = cp_model.CpSolver.solve

def solve(self, *args, **kwargs):
    solves.append(1)
    return real(self, *args, **kwargs)

cp_model.CpSolver.solve = solve
record, entry = large_case(60, 40, 5)
optimize_layout(record, typed(entry), time_limit=1.0, object_align=64)
print("solves", len(solves), flush=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(10)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(0)
sys.exit(3)
"""


def test_ctrl_c_after_a_solve_is_a_keyboard_interrupt() -> None:
    proc = subprocess.run([sys.executable, "-c",
                           SCRIPT.format(here=str(Path(__file__).parent))],
                          capture_output=True, text=True, timeout=120, check=False)
    solves = re.search(r"solves (\d+)", proc.stdout)
    assert solves and int(solves[1]) > 0, (proc.stdout, proc.stderr)    # CP-SAT ran
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert "KeyboardInterrupt" in proc.stdout


def test_every_solver_leaves_sigint_to_python() -> None:
    """No CpSolver is made anywhere but in new_solver."""
    made = [f"{path.relative_to(SRC)}:{n}" for path in SRC.rglob("*.py")
            for n, line in enumerate(path.read_text().splitlines(), 1)
            if "CpSolver(" in line and not line.lstrip().startswith("#")]
    assert made == ["cachefit/layout/cpsat_model.py:" + str(_new_solver_line())], made


def _new_solver_line() -> int:
    text = (SRC / "cachefit" / "layout" / "cpsat_model.py").read_text().splitlines()
    start = next(n for n, line in enumerate(text, 1) if line.startswith("def new_solver("))
    return next(n for n, line in enumerate(text, 1) if n > start and "CpSolver(" in line)
