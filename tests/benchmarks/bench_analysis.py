"""Analysis benchmark: ``python -m tests.benchmarks.bench_analysis [--media] [--minutes N]``.

1. A 60-minute caption track (the 20-minute interview fixture three times end to end, ~630 cues):
   parse, analyse (standard and behavioral), and write the article in every style. Goal: under
   1/20 of real time (180 s for an hour), on 2 cores.
2. ``--media``: a generated 10-minute 720p H.264 video with a cut every 20 s, a tone, silences and
   noise; ffprobe plus ``infra.media.elements.media_facts`` (scene and audio passes side by side).
3. ``--scale`` (or ``python -m tests.benchmarks analysis scale``): analysis time against the
   number of caption cues (``BENCH_CUES``, default 1,000, 5,000, 20,000 and 47,000: 5 MiB of
   captions, the upload limit), for three transcripts: the interview fixture repeated end to end
   (its vocabulary stays small), generated speech of a growing vocabulary at the densest the
   upload accepts (4 cues a second), and the same crowded into 3 s. Prints parse, analyse (in
   the CPU-limited child process, as the worker runs it: process start and the graph's return
   included) and article times, and microseconds per cue: flat per-cue figures are linear
   growth. Then one hour-long cue holding
   5,000 to 80,000 words (up to about half a megabyte of text in one sentence-poor cue).

Prints wall times, the ratio to real time and the peak RSS of this process (ru_maxrss) and of the
ffmpeg children.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from domain.analysis import WRITING_STYLES, Segment, analyse, write_article
from infra.captions import parse_captions, to_webvtt

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"


def _rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def hour_of_captions(minutes: int) -> str:
    base = parse_captions(FIXTURE.read_text(encoding="utf-8"))
    span = base[-1].end_ms + 2000
    segments: list[Segment] = []
    offset = 0
    while offset < minutes * 60_000:
        segments += [Segment(s.start_ms + offset, s.end_ms + offset, s.text, s.speaker) for s in base]
        offset += span
    return to_webvtt([s for s in segments if s.end_ms <= minutes * 60_000])


def bench_captions(minutes: int) -> None:
    text = hour_of_captions(minutes)
    t0 = time.perf_counter()
    segments = parse_captions(text)
    t1 = time.perf_counter()
    graph = analyse(segments, language="fr")
    t2 = time.perf_counter()
    analyse(segments, language="fr", mode="behavioral")
    t3 = time.perf_counter()
    for style in WRITING_STYLES:
        write_article(graph, style)
    t4 = time.perf_counter()
    real = graph.duration_ms / 1000
    total = (t2 - t0) + (t4 - t3) / len(WRITING_STYLES)
    print(f"captions: {len(segments)} cues, {len(graph.sentences)} sentences, {real / 60:.1f} min of video")
    print(f"  parse            {t1 - t0:8.3f} s")
    print(f"  analyse          {t2 - t1:8.3f} s   ({len(graph.claims)} claims, {len(graph.entities)} entities, "
          f"{len(graph.chapters)} chapters, {len(graph.moments)} moments)")
    print(f"  analyse (behav.) {t3 - t2:8.3f} s")
    print(f"  article x{len(WRITING_STYLES)}       {t4 - t3:8.3f} s")
    print(f"  parse+analyse+1 article: {total:.3f} s = 1/{real / total:,.0f} of real time (goal 1/20)")
    print(f"  peak RSS of this process: {_rss_mb():.0f} MB")


def make_video(path: Path, minutes: int) -> None:
    seconds = minutes * 60
    # testsrc2 moves but never cuts; a brightness jump every 20 s makes a hard cut to find
    video = (f"testsrc2=s=1280x720:r=25:d={seconds},"
             "eq=brightness='if(lt(mod(t,40),20),-0.4,0.4)':eval=frame")
    audio = (f"sine=frequency=330:sample_rate=48000:duration={seconds},"
             "volume='if(lt(mod(t,30),5),0,1)':eval=frame")
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i", video, "-f", "lavfi",
                    "-i", audio, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac",
                    "-shortest", str(path)], check=True, timeout=1800)


def bench_media(minutes: int) -> None:
    from domain.videos import MAX_DURATION_MS
    from infra.media.elements import analyse_audio, detect_scenes, media_facts
    from infra.media.probe import measure_duration, probe
    from infra.provision import ensure

    ensure("ffmpeg")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench720p.mp4"
        t0 = time.perf_counter()
        make_video(path, minutes)
        t1 = time.perf_counter()
        info = probe(path)
        t_probe = time.perf_counter()
        measured = measure_duration(path, info.demuxer, MAX_DURATION_MS)
        size_mb = path.stat().st_size / 1e6
        t2 = time.perf_counter()
        facts = media_facts(path, info)
        t3 = time.perf_counter()
        detect_scenes(path)
        t4 = time.perf_counter()
        analyse_audio(path, info.duration_ms)
        t5 = time.perf_counter()
    real = info.duration_ms / 1000
    print(f"media: {info.width}x{info.height} @ {info.frame_rate} fps, {real / 60:.1f} min "
          f"(generated in {t1 - t0:.1f} s)")
    print(f"  ffprobe          {t_probe - t1:8.3f} s")
    print(f"  measure (upload) {t2 - t_probe:8.3f} s: every packet read, {size_mb:.0f} MB, {measured / 1000:.1f} s "
          f"measured")
    print(f"  scenes + audio   {t3 - t2:8.3f} s = 1/{real / (t3 - t2):,.1f} of real time (goal 1/20)")
    print(f"  alone: scenes {t4 - t3:.1f} s, audio {t5 - t4:.1f} s")
    print(f"  found {len(facts.scene_changes)} scene changes (expected {int(real // 20) - 1}), "
          f"{len(facts.silences)} silences, {len(facts.audio_segments)} audio segments, "
          f"loudness {facts.loudness.integrated_lufs if facts.loudness else None} LUFS")
    print(f"  peak RSS of the ffmpeg children: {_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB")


def repeated_fixture(cues: int) -> list[Segment]:
    """The interview fixture end to end, as many times as it takes: real timing, a small vocabulary."""
    base = parse_captions(FIXTURE.read_text(encoding="utf-8"))
    span = base[-1].end_ms + 2000
    return [Segment(s.start_ms + k // len(base) * span, s.end_ms + k // len(base) * span, s.text, s.speaker)
            for k, s in ((k, base[k % len(base)]) for k in range(cues))]


def generated_speech(cues: int, seed: int = 19, squeeze_into_ms: int | None = None) -> list[Segment]:
    """Sentences of made-up words from three speakers, 4 cues a second (the densest captions an
    upload accepts), or all within ``squeeze_into_ms``. The vocabulary grows with the transcript
    (about two new words a cue, as new names, figures and terms keep coming in real talk): what a
    pass that keeps every word it has seen pays for."""
    rng = random.Random(seed)
    syllables = [c + v for c in "bcdfglmnprstv" for v in "aeiou"]
    vocabulary: list[str] = []
    speakers = ["Claire Martin", "Paul Lefèvre", "Anne Roux"]
    segments, speaker = [], speakers[0]
    for k in range(cues):
        while len(vocabulary) < 500 + 2 * k:
            vocabulary.append("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        words = [rng.choice(vocabulary) for _ in range(rng.randint(5, 12))]
        if rng.random() < 0.4:
            words.insert(rng.randrange(len(words)), f"{rng.choice(vocabulary).capitalize()} "
                                                    f"{rng.choice(vocabulary).capitalize()}")
        if rng.random() < 0.2:
            words.insert(rng.randrange(len(words)), f"{rng.randint(2, 99)} %")
        text = " ".join(words)
        if rng.random() < 0.1:
            speaker = rng.choice(speakers)
        start, end = ((k * squeeze_into_ms // cues, (k + 1) * squeeze_into_ms // cues) if squeeze_into_ms
                      else (k * 250, k * 250 + 240))
        segments.append(Segment(start, end, text[0].upper() + text[1:] + rng.choice([".", "?", ",", ""]), speaker))
    return segments


def crowded_speech(cues: int) -> list[Segment]:
    """Every cue within 3 s, as in a transcript made to load the analysis (an upload refuses it;
    an embedded subtitle track can still carry it, hence the CPU-time limit)."""
    return generated_speech(cues, squeeze_into_ms=3000)


def bench_scale(counts: list[int]) -> None:
    from services.lib.cpu_limit import run_with_cpu_limit

    print("analysis time against the number of caption cues (s; µs per cue in brackets)")
    print(f"  {'transcript':18} {'cues':>7} {'sentences':>9} {'captions':>9} {'parse':>15} "
          f"{'analyse (child)':>17} {'article':>15}")
    for name, make in (("interview x N", repeated_fixture), ("generated, dense", generated_speech),
                       ("crowded in 3 s", crowded_speech)):
        for cues in counts:
            segments = make(cues)
            text = to_webvtt(segments)
            t0 = time.perf_counter()
            parsed = parse_captions(text)
            t1 = time.perf_counter()
            graph = asyncio.run(run_with_cpu_limit(analyse, parsed, language="fr", cpu_seconds=3600))
            t2 = time.perf_counter()
            write_article(graph, "auto")
            t3 = time.perf_counter()

            def cell(seconds: float, cues: int = cues) -> str:
                return f"{seconds:7.2f} [{seconds / cues * 1e6:5.0f}]"

            print(f"  {name:18} {cues:7,} {len(graph.sentences):9,} {len(text) / 1024 ** 2:7.2f}MB "
                  f"{cell(t1 - t0):>15} {cell(t2 - t1):>17} {cell(t3 - t2):>15}", flush=True)


def one_long_cue(words: int, seed: int = 3) -> list[Segment]:
    """A single cue of an hour holding every word: fillers, initials, abbreviations, figures, dates
    and names, with few sentence ends. What a pass that looks at everything before each point in a
    sentence pays for."""
    rng = random.Random(seed)
    pieces = ["euh", "Paris", "M.", "a.", "12 %", "en 2024", "J. K.", "Lyon", "énergie", "Le Projet Iter", "mai", "3"]
    text = " ".join(["euh"] * (words // 4) + [rng.choice(pieces) for _ in range(words)])
    return [Segment(0, 3_600_000, text, "Anne")]


def bench_long_cue(counts: list[int]) -> None:
    print("one long cue: analysis time against its length")
    for words in counts:
        segments = one_long_cue(words)
        t0 = time.perf_counter()
        graph = analyse(segments, language="fr")
        seconds = time.perf_counter() - t0
        chars = len(segments[0].text)
        print(f"  {chars:9,} characters {len(graph.sentences):6,} sentences  analyse {seconds:7.2f} s "
              f"[{seconds / chars * 1e6:5.1f} µs per character]", flush=True)


def run(which: list[str]) -> None:
    """``python -m tests.benchmarks analysis [captions] [scale] [media]`` (default: captions, scale)."""
    parts = which or ["captions", "scale"]
    if "captions" in parts:
        bench_captions(60)
    if "scale" in parts:
        bench_scale([int(n) for n in os.environ.get("BENCH_CUES", "1000,5000,20000,47000").split(",")])
        bench_long_cue([5_000, 20_000, 80_000])
    if "media" in parts:
        bench_media(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=60, help="length of the caption track")
    parser.add_argument("--media", action="store_true", help="also time the media analysis of a 720p video")
    parser.add_argument("--media-minutes", type=int, default=10)
    parser.add_argument("--scale", action="store_true", help="also time the analysis against the cue count")
    args = parser.parse_args()
    bench_captions(args.minutes)
    if args.media:
        bench_media(args.media_minutes)
    if args.scale:
        bench_scale([int(n) for n in os.environ.get("BENCH_CUES", "1000,5000,20000,47000").split(",")])
        bench_long_cue([5_000, 20_000, 80_000])


if __name__ == "__main__":
    main()
