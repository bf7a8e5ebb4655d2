"""Command-line interface: argument parsing and error printing, nothing else."""
