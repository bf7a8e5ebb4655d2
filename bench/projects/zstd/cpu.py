"""CPU time and wall time of fixed work with zstd's CLI on two builds, interleaved (issue 30).

    python3 cpu.py PLAIN_ZSTD CACHEFIT_ZSTD INPUT [ROUNDS] [REPEATS]

Each round runs, for each binary (the order alternating between rounds), REPEATS times
`zstd -q -c -1 -T2 -B1M INPUT > /dev/null` (1 MB jobs: about 15 handed to the two workers
per run) and takes the children's user + system CPU seconds (getrusage) and the wall time.
Prints every round, then the medians and the ratios CACHEFIT/PLAIN (< 1: the cachefit build
uses less). CPU time of fixed work is less disturbed than throughput by other processes on
the machine's shared cores; it still includes the cache misses that lines changing hands cost.
"""
import resource
import statistics
import subprocess
import sys
import time


def measure(binary: str, path: str, repeats: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of `repeats` compressions of `path` by `binary`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for _ in range(repeats):
        subprocess.run([binary, "-q", "-c", "-1", "-T2", "-B1M", path],
                       stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    plain, opt, path = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 11
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    got: dict[str, list[tuple[float, float]]] = {"plain": [], "cachefit": []}
    print("round build cpu_s wall_s")
    for r in range(rounds):
        order = [("plain", plain), ("cachefit", opt)]
        for name, binary in order if r % 2 == 0 else order[::-1]:
            cpu, wall = measure(binary, path, repeats)
            got[name].append((cpu, wall))
            print(f"{r + 1} {name} {cpu:.3f} {wall:.3f}", flush=True)
    med = {n: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
           for n, v in got.items()}
    for n, (c, w) in med.items():
        print(f"median {n}: cpu {c:.3f} s, wall {w:.3f} s")
    print(f"ratio cachefit/plain: cpu {med['cachefit'][0] / med['plain'][0]:.3f}, "
          f"wall {med['cachefit'][1] / med['plain'][1]:.3f}")


if __name__ == "__main__":
    main()
