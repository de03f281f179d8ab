"""Analysis benchmark: ``python -m tests.benchmarks.bench_analysis [--media] [--minutes N]``.

1. A 60-minute caption track (the 20-minute interview fixture three times end to end, ~630 cues):
   parse, analyse (standard and behavioral), and write the article in every style. Goal: under
   1/20 of real time (180 s for an hour), on 2 cores.
2. ``--media``: a generated 10-minute 720p H.264 video with a cut every 20 s, a tone, silences and
   noise; ffprobe plus ``infra.media.media_facts`` (scene and audio passes side by side).

Prints wall times, the ratio to real time and the peak RSS of this process (ru_maxrss) and of the
ffmpeg children.
"""

from __future__ import annotations

import argparse
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
    from infra.media import analyse_audio, detect_scenes, measure_duration, media_facts, probe
    from infra.tools import ensure_media_tools

    ensure_media_tools()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=60, help="length of the caption track")
    parser.add_argument("--media", action="store_true", help="also time the media analysis of a 720p video")
    parser.add_argument("--media-minutes", type=int, default=10)
    args = parser.parse_args()
    bench_captions(args.minutes)
    if args.media:
        bench_media(args.media_minutes)


if __name__ == "__main__":
    main()
