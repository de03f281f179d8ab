"""``python -m tests.benchmarks [core|api] [parts ...]``: on-demand benchmarks.

core: relay, latency, rebuild, notify, broker. api: post, ryw; ladder (on demand: the cost ladder, post included).
analysis: captions, scale (analysis time against the cue count); media (on demand: ffmpeg passes on a 720p video).
articles: the six exports and the detail read of a 60-minute video's article, at concurrency 8.
clips: cut, render, detect (docs/benchmarks.md, Clips).
facecrop: a 30 s 9:16 render with the centre crop and following the face (detection included), fps, ratio, peak RSS.
quality --set DIR: chapters and titles against human chapters (on demand: needs a folder of them).
claims --set DIR: the claims of a talk told in another language beside its English original's (on demand).
premium --set DIR: the premium profile's chapters and titles (a language model's) beside the standard's (on demand).
fit-boundaries --set DIR: the chapter boundary weights fitted on such a folder, measured held out (--folds: the
  weights and the count rule that ship, chosen out of fold). fit-titles --set DIR: the title ranking, the same way.
revival: complete (descriptions of a 60-minute video, concurrency 8), candidates (10,000 candidates searched).
agent: the assistant's chat and stream beside GET /credits.
fairness: another tenant's short clip behind one tenant's two long renders, with and without slot sharing;
  lying: another tenant's short analysis behind two analyses of files whose timestamps lie.
speech: wer (LibriVox), languages (espeak-ng, seven languages), context (real speech in other languages:
windows against the whole file), speed (s/s, peak RSS), talk (10 minutes to article).
speakers: speakers found from the voices of two-voice and one-voice talks, espeak-ng and real speech.
scale: POST /medias with one API process and two on one port; analyses per minute with one worker and two.
vision: see (frames per second of the behavioural analysis and the worker's peak RSS), small (at 640 px).
links: the 404 of a revoked public link beside a forged and a malformed token's (median, p90, their gap).
"""

import sys

from tests.benchmarks import (
    bench_agent,
    bench_analysis,
    bench_api,
    bench_articles,
    bench_claims,
    bench_clips,
    bench_core,
    bench_facecrop,
    bench_fairness,
    bench_premium,
    bench_public_links,
    bench_quality,
    bench_revival,
    bench_scale,
    bench_speakers,
    bench_speech,
    bench_vision,
    fit_boundaries,
    fit_titles,
)

SUITES = {"core": bench_core.run, "api": bench_api.run, "analysis": bench_analysis.run, "articles": bench_articles.run,
          "clips": bench_clips.run, "facecrop": bench_facecrop.run, "revival": bench_revival.run,
          "agent": bench_agent.run, "links": bench_public_links.run,
          "fairness": bench_fairness.run, "speech": bench_speech.run,
          "speakers": bench_speakers.run, "scale": bench_scale.run, "vision": bench_vision.run}
ON_DEMAND = {"quality": bench_quality.run, "claims": bench_claims.run, "fit-boundaries": fit_boundaries.run,
             "fit-titles": fit_titles.run,
             "premium": bench_premium.run}

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] in ON_DEMAND:
        ON_DEMAND[args[0]](args[1:])
    elif args and args[0] in SUITES:
        SUITES[args[0]](args[1:])
    else:
        for run in SUITES.values():
            run(args)
