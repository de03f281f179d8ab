"""Speakers from the audio, measured: ``python -m tests.benchmarks speakers``.

Each talk is recognised as the service does it (voice activity, windows of 30 s, Whisper base
on the CPU, segments), then its segments are attributed (``services.jobs.voices.attribute``). Printed
per talk: the speakers found, against the voices that read it, and the share of recognised
segments attributed to the right voice (the better of the two ways to pair speakers with voices;
a talk found to have one speaker scores the share of its main voice), and the time taken by the
speaker step. The talks:

- espeak-ng ``en+m3`` and ``en+f4`` reading a dialogue line by line (the integration test's talk);
- espeak-ng ``en+m3`` and ``en-us+m1``: two similar male voices (expected: one speaker);
- real speech when Debian's ``pocketsphinx-testdata`` is installed: a LibriVox reader and the
  reader of the card names, in turn; and the LibriVox reader alone;
- espeak-ng ``en+m3`` alone;
- held out (no threshold was chosen on them): espeak-ng ``en+f2`` / ``en+m7`` and ``en-us+f3`` /
  ``en+m2``, and the LibriVox reader in turns with the reader of the decoder's own test clips
  (``goforward``, ``numbers``, ``something``).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from domain.analysis.speech import segments_from_words
from infra import asr
from services.jobs.speech import find_speech
from services.jobs.voices import attribute
from tests.media_factory import run as run_command
from tests.support.speech_jobs import DIALOGUE

DATA = Path("/usr/share/pocketsphinx/test/data")
GAP_S = 1.0


def _as_wav(source: Path, dest: Path) -> None:
    run_command(["ffmpeg", "-nostdin", "-y", "-i", str(source), "-ar", "16000", "-ac", "1", str(dest)])


def _espeak(root: Path, voices: tuple[str, ...], lines: list[str]) -> list[tuple[Path, str]]:
    out = []
    for k, text in enumerate(lines):
        voice = voices[k % len(voices)]
        raw = root / f"espeak-{k}-{voice}.raw.wav"
        run_command(["espeak-ng", "-v", voice, "-s", "150", "-w", str(raw), text])
        out.append((raw, voice))
    return out


def talk(root: Path, name: str, parts: list[tuple[Path, str]]) -> tuple[Path, list[tuple[int, int, str]]]:
    """The parts one after the other with GAP_S of silence: the wav and each part's (start, end, voice)."""
    gap = root / "gap.wav"
    run_command(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", str(GAP_S),
                 str(gap)])
    listing, spans, t = [], [], 0
    for k, (source, voice) in enumerate(parts):
        wav = root / f"{name}-{k}.wav"
        _as_wav(source, wav)
        ms = int(float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                                       str(wav)], capture_output=True, text=True, check=True).stdout) * 1000)
        listing += [f"file '{wav}'", f"file '{gap}'"]
        spans.append((t, t + ms, voice))
        t += ms + int(GAP_S * 1000)
    (root / f"{name}.txt").write_text("\n".join(listing) + "\n")
    out = root / f"{name}.wav"
    run_command(["ffmpeg", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-i", str(root / f"{name}.txt"), str(out)])
    return out, spans


def measure(path: Path, spans: list[tuple[int, int, str]], engine: asr.LocalEngine) -> str:
    limit = spans[-1][1] + 1000
    _, windows = find_speech(path, "wav", limit, 30_000)
    words = []
    for start, end in windows:
        audio = asr.decode_audio(path, "wav", start, end, 120)
        words += [[w.start_ms + start, w.end_ms + start, w.text] for w in engine.transcribe(audio, "en").words]
    segments = segments_from_words(words)
    began = time.perf_counter()
    names = attribute(path, "wav", [(s.start_ms, s.end_ms) for s in segments], limit, 600, 2)
    took = time.perf_counter() - began

    def voice_of(s):
        overlaps = [max(0, min(s.end_ms, b) - max(s.start_ms, a)) for a, b, _ in spans]
        return spans[overlaps.index(max(overlaps))][2]

    truth = [voice_of(s) for s in segments]
    voices = sorted(set(v for _, _, v in spans))
    pairs = Counter(zip(truth, names, strict=True))
    found = sorted({n for n in names if n})
    if len(found) < 2:
        right = max(Counter(truth).values())
    else:
        right = max(sum(pairs[(v, f)] for v, f in zip(voices, order, strict=False))
                    for order in (found, found[::-1]))
    return (f"{len(voices)} voice(s) {voices}: {max(1, len(found))} speaker(s) found; "
            f"{right}/{len(segments)} segments right ({right / len(segments):.0%}); speaker step {took:.2f} s")


def run(which: list[str]) -> None:
    main()


def main() -> None:
    engine = asr.LocalEngine(Path(tempfile.mkdtemp()), 2)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = {
            "espeak en+m3 / en+f4": _espeak(root, ("en+m3", "en+f4"), DIALOGUE),
            "espeak en+m3 / en-us+m1": _espeak(root, ("en+m3", "en-us+m1"), DIALOGUE),
            "espeak en+m3 alone": _espeak(root, ("en+m3",), DIALOGUE),
        }
        librivox = sorted((DATA / "librivox").glob("*.wav"))
        cards = sorted((DATA / "cards").glob("*.wav"))
        if librivox and cards:
            cases["real: LibriVox reader / cards reader"] = [
                p for pair in zip(librivox, cards, strict=False) for p in ((pair[0], "librivox"), (pair[1], "cards"))]
            cases["real: LibriVox reader alone"] = [(p, "librivox") for p in librivox]
        else:
            print("(pocketsphinx-testdata not installed: no real speech)", file=sys.stderr)
        # Held out: voices no threshold was chosen on.
        cases["held out: espeak en+f2 / en+m7"] = _espeak(root, ("en+f2", "en+m7"), DIALOGUE)
        cases["held out: espeak en-us+f3 / en+m2"] = _espeak(root, ("en-us+f3", "en+m2"), DIALOGUE)
        others = [DATA / f"{name}.raw" for name in ("goforward", "numbers", "something")]
        if librivox and all(p.is_file() for p in others):
            converted = []
            for raw in others:  # headerless 16 kHz mono 16-bit
                wav = root / f"{raw.stem}.wav"
                run_command(["ffmpeg", "-nostdin", "-y", "-f", "s16le", "-ar", "16000", "-ac", "1", "-i", str(raw),
                             str(wav)])
                converted.append(wav)
            cases["held out: real: LibriVox reader / the decoder's test reader"] = [
                p for pair in zip(librivox, converted, strict=False)
                for p in ((pair[0], "librivox"), (pair[1], "test"))]
        for k, (name, parts) in enumerate(cases.items()):
            path, spans = talk(root, f"talk{k}", parts)
            print(f"{name}: {measure(path, spans, engine)}", flush=True)


if __name__ == "__main__":
    main()
