#!/usr/bin/env python3
"""Boot L4Ka::Pistachio's pingpong in qemu-system-i386, plain or traced with the cachefit plugin.

  pingpong.py boot  --kernel K --kickstart KS --sigma0 S0 --pingpong PP --choices 1,2 --log L
  pingpong.py trace --kernel K ... --choices 1 --config cachefit.toml --out P.profile.json

`boot` answers pingpong's menu with each choice in turn (after each benchmark it answers
"What now?" with q) and stops after the last benchmark; the serial log goes to --log.
`trace` runs cachefit.trace.qemu_backend.trace_qemu with the kernel and pingpong paths filled
into the [trace.qemu] table of --config.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib

from cachefit.errors import CachefitError
from cachefit.trace import qemu_backend

MENU = "Please select ipc type"
DONE = r"What now\?"


def qemu_command(args: argparse.Namespace) -> list[str]:
    return [args.qemu, "-m", "256", "-cpu", "max", "-display", "none", "-serial", "stdio",
            "-monitor", "none", "-no-reboot", "-kernel", args.kickstart,
            "-initrd", f"{args.kernel},{args.sigma0},{args.pingpong}"]


def boot(args: argparse.Namespace) -> int:
    choices = args.choices.split(",")
    inputs = []
    for i, c in enumerate(choices):
        if i:
            inputs.append((re.compile(DONE), b"q"))
        inputs.append((re.compile(MENU), c.encode()))
    res = qemu_backend.run_guest(qemu_command(args), inputs, re.compile(DONE), args.timeout,
                                 log_path=args.log, echo=args.echo)
    benchmarks = re.findall(r"Benchmarking (\S+) IPC", res.output)
    lines = re.findall(r"IPC \(\s*\d+ MRs\):[^\n]*", res.output)
    print(f"pingpong: {res.stopped} after {res.seconds:.1f} s; benchmarks {benchmarks}; "
          f"{len(lines)} result lines; serial log {args.log}")
    for line in lines[:2]:
        print("  " + line.strip())
    if res.stopped != "stop_after" or len(benchmarks) != len(choices):
        print("pingpong: the benchmark did not complete", file=sys.stderr)
        return 1
    return 0


def trace(args: argparse.Namespace) -> int:
    with open(args.config, "rb") as fh:
        config = tomllib.load(fh)
    q = config.setdefault("trace", {}).setdefault("qemu", {})
    q["kernel"] = args.kernel
    q["phase_elf"] = args.pingpong
    q["input"] = [{"after": MENU, "send": args.choices.split(",")[0]}]
    q["log"] = args.log
    try:
        profile = qemu_backend.trace_qemu(qemu_command(args), config, args.out)
    except CachefitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    print(qemu_backend.summary(profile))
    print(f"profile: {args.out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["boot", "trace"])
    ap.add_argument("--qemu", default="qemu-system-i386")
    for name in ("kernel", "kickstart", "sigma0", "pingpong"):
        ap.add_argument(f"--{name}", required=True)
    ap.add_argument("--choices", default="1", help="pingpong menu choices, e.g. 1,2")
    ap.add_argument("--log", required=True, help="serial log")
    ap.add_argument("--config", help="cachefit.toml (trace)")
    ap.add_argument("--out", help="profile to write (trace)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--echo", action="store_true", help="copy the serial output to stdout")
    args = ap.parse_args()
    if args.action == "trace" and not (args.config and args.out):
        ap.error("trace needs --config and --out")
    return boot(args) if args.action == "boot" else trace(args)


if __name__ == "__main__":
    sys.exit(main())
