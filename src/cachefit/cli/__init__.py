"""Command-line interface: argument parsing and error printing, nothing else.

The console scripts (`cachefit`, `cachefit-cc`, `cachefit-c++`) import this package first.
For them, until `cachefit.cli.main.main` runs (it installs cachefit.interrupts and turns
every interrupt into exit code 130), Ctrl-C exits 130 at once instead of printing a
`KeyboardInterrupt` traceback from the middle of an import. Only the built-in `_signal`
module is used here: importing `signal` (and its `enum`) would itself take milliseconds.
"""

import os
import sys

CONSOLE_SCRIPTS = ("cachefit", "cachefit-cc", "cachefit-c++")


def interrupted_while_starting(signum: int, frame: object) -> None:
    """The SIGINT handler of the console scripts while they import their modules: exit
    130 at once. Nothing is written yet, and an exception (SystemExit) raised where the
    import machinery runs a weakref callback would be printed and dropped there."""
    os._exit(130)


if sys.argv and os.path.basename(sys.argv[0]) in CONSOLE_SCRIPTS:
    import _signal

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, interrupted_while_starting)
