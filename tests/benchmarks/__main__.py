"""``python -m tests.benchmarks [core|api] [parts ...]``: on-demand benchmarks.

core: relay, latency, rebuild, notify, broker. api: post, ryw; ladder (on demand: the cost ladder, post included).
analysis: captions, scale (analysis time against the cue count); media (on demand: ffmpeg passes on a 720p video).
agent: the assistant's chat and stream beside GET /credits.
"""

import sys

from tests.benchmarks import bench_agent, bench_analysis, bench_api, bench_core

SUITES = {"core": bench_core.run, "api": bench_api.run, "analysis": bench_analysis.run, "agent": bench_agent.run}

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] in SUITES:
        SUITES[args[0]](args[1:])
    else:
        for run in SUITES.values():
            run(args)
