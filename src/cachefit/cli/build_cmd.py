"""`cachefit build [--step STEP]... [--config FILE] [-o DIR] [-j N] [--no-scan-cache]`: the
whole pipeline in one command.

Parses the arguments, loads the pipeline keys of cachefit.toml
(cachefit.pipeline.pipeline_config), runs cachefit.pipeline.pipeline and prints one progress line
per step (stderr) and the summary table (stdout); on a terminal, a live line under the
step's line shows the units compiled so far, the last line of the step's log and the
elapsed time, and in the layout step the type and stage running
(cachefit.cli.live_progress). Without --step, the steps are those of a full run (the
retrace step only with `[build] retrace = true`; issue 26). The work and every file written are the
pipeline's; this module only prints.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from cachefit.cli.scan_args import add_scan_arguments
from cachefit.pipeline.output_tree import STEPS

# The work's modules are imported when the command runs, not by --help (issue 29).


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "build", help="profile build, workload, reorder, optimized build, report",
        description="Run the project's build through cachefit's compiler wrapper in profile "
                    "mode, run the workload under `cachefit trace`, choose the member order "
                    "of every [trace] type, write the layout plan and rebuild in optimize "
                    "mode; every intermediate file stays in the output directory. Settings: "
                    "[build] in cachefit.toml (docs/cachefit-toml.md).",
        usage="cachefit build [--step STEP]... [--config FILE] [-o DIR] [-j N] "
              "[--no-scan-cache]")
    p.add_argument("--step", action="append", choices=STEPS, metavar="STEP",
                   help=f"run only this step ({', '.join(STEPS)}; repeatable), using the "
                        "files earlier steps left in the output directory; retrace (a "
                        "profile build with the layout plan applied, traced: the plan's "
                        "measured figures) runs only when named, or with [build] retrace = "
                        "true")
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="the project file (default: CACHEFIT_CONFIG, else cachefit.toml here "
                        "or in a parent directory)")
    p.add_argument("-o", "--output", type=Path, metavar="DIR",
                   help="output directory (default: [build] output, else out/cachefit)")
    add_scan_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cachefit.cli.live_progress import BuildProgress, terminal_console
    from cachefit.cli.scan_args import scan_options
    from cachefit.pipeline.build_summary import format_summary
    from cachefit.pipeline.pipeline import run_pipeline
    from cachefit.pipeline.pipeline_config import load_pipeline_config

    config = load_pipeline_config(args.config.resolve() if args.config else None)
    if args.output:
        config = dataclasses.replace(config, output=args.output.resolve())
    scan = scan_options(args)
    config = dataclasses.replace(config, jobs=scan.jobs, scan_cache=scan.cache)
    with BuildProgress(terminal_console()) as shown:
        result = run_pipeline(config, args.step or None, progress=shown.line,
                              watch=shown.watch, stage=shown.stage)
    print(format_summary(result.types, result.steps))
    for note in result.notes:
        print(f"note: {note}")
    for path in result.reports:
        print(f"report: {path}")
    made = ", ".join(f"{p.relative_to(result.tree.root)}{'/' if p.is_dir() else ''}"
                     for p in result.products)
    print(f"cachefit: everything is in {result.tree.root} ({made})", file=sys.stderr)
    return 0
