"""``python -m tests.benchmarks [core [relay|rebuild|latency|notify|broker ...]]``: on-demand benchmarks."""

import sys

from tests.benchmarks import bench_core

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "core":
        args = args[1:]
    bench_core.run(args)
