"""Test media made with ffmpeg and espeak-ng, shared by the media and video tests.

The interview: red until 4.0 s then blue (a hard cut); the audio: a 440 Hz tone until 3.0 s,
silence until 5.0 s, then two voices (two espeak-ng voices) reading the lines of a two-speaker
WebVTT file whose cue times are the real lengths of the synthesised lines.
"""

from __future__ import annotations

import math
import os
import subprocess
import wave
from pathlib import Path

from domain.analysis import Segment
from infra.captions import to_webvtt
from infra.provision import ensure

CUT_S = 4.0
TONE_END_S = 3.0
SPEECH_START_S = 5.0
WIDTH, HEIGHT, FPS = 320, 240, 25

LINES = [
    ("Alice", "fr", "Bonjour, aujourd'hui nous parlons de la fusion nucléaire."),
    ("Bob", "fr+m3", "La fusion nucléaire est une réaction qui libère une énergie considérable."),
    ("Alice", "fr", "Pourquoi le projet ITER est-il si important ?"),
    ("Bob", "fr+m3", "ITER est construit à Cadarache, en France, depuis 2010."),
    ("Bob", "fr+m3", "Le projet réunit trente-cinq pays et coûte plus de 20 milliards d'euros."),
    ("Alice", "fr", "Et quand produira-t-il son premier plasma ?"),
    ("Bob", "fr+m3", "Le premier plasma est prévu en 2035, selon l'organisation ITER."),
    ("Alice", "fr", "Merci Bob, c'était passionnant."),
]


def ensure_tools() -> None:
    """ffmpeg and espeak-ng, installed on a machine that lacks them (a benchmark run outside the
    test run, whose controller provisions everything first)."""
    ensure("ffmpeg", "espeak-ng")


def run(args: list[str], timeout: float = 120) -> None:
    """Run a media tool, installing ffmpeg and espeak-ng first on a machine that lacks them."""
    ensure_tools()
    subprocess.run(args, check=True, capture_output=True, timeout=timeout)


def _wav_ms(path: Path) -> int:
    with wave.open(str(path)) as w:
        return w.getnframes() * 1000 // w.getframerate()


def make_interview(root: Path, name: str = "interview.mp4") -> dict:
    """The interview video and its WebVTT: {video, vtt, cues, duration_ms, not_media}."""
    ensure_tools()
    cues, parts = [], []
    t = int(SPEECH_START_S * 1000)
    for k, (speaker, voice, text) in enumerate(LINES):
        wav = root / f"line{k}.wav"
        run(["espeak-ng", "-v", voice, "-s", "165", "-w", str(wav), text])
        length = _wav_ms(wav)
        cues.append((t, t + length, text, speaker))
        parts.append(wav)
        t += length + 300
    duration_s = (t + 2000) / 1000
    gap = root / "gap.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "anullsrc=r=22050:cl=mono", "-t", "0.3", str(gap)])
    (root / "lines.txt").write_text("".join(f"file '{p}'\nfile '{gap}'\n" for p in parts))
    speech = root / "speech.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-i", str(root / "lines.txt"), "-ar", "22050",
         "-ac", "1", str(speech)])
    vtt = root / "captions.vtt"
    vtt.write_text(to_webvtt([Segment(a, b, text, speaker) for a, b, text, speaker in cues]))
    video = root / name
    run(["ffmpeg", "-nostdin", "-y",
         "-f", "lavfi", "-i", f"color=c=red:s={WIDTH}x{HEIGHT}:r={FPS}:d={CUT_S}",
         "-f", "lavfi", "-i", f"color=c=blue:s={WIDTH}x{HEIGHT}:r={FPS}:d={duration_s - CUT_S}",
         "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=22050:duration={TONE_END_S}",
         "-f", "lavfi", "-i", "anullsrc=r=22050:cl=mono",
         "-i", str(speech),
         "-filter_complex",
         "[0:v][1:v]concat=n=2:v=1:a=0[v];"
         f"[3:a]atrim=duration={SPEECH_START_S - TONE_END_S}[z];"
         "[2:a][z][4:a]concat=n=3:v=0:a=1,apad[a]",
         "-map", "[v]", "-map", "[a]", "-t", str(duration_s), "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", str(video)])
    not_media = root / "notes.mp4"
    not_media.write_text("this is not a video\n" * 50)
    return {"video": video, "vtt": vtt, "cues": cues, "duration_ms": int(duration_s * 1000), "not_media": not_media}


FIXTURE_PODCAST = Path(__file__).resolve().parent / "fixtures" / "renovation_podcast_fr.vtt"


def podcast_cues(seconds: float, max_chars: int | None = None) -> list[Segment]:
    """The French renovation podcast's captions (a 20-minute, two-speaker interview with figures,
    questions and answers) fitted to ``seconds``: its first cues up to ``max_chars`` characters,
    their times scaled to end there; or, for a longer media, the whole podcast repeated."""
    from infra.captions import read_captions

    cues = read_captions(FIXTURE_PODCAST)
    if max_chars is not None:
        kept, total = [], 0
        for cue in cues:
            if total + len(cue.text) > max_chars:
                break
            kept.append(cue)
            total += len(cue.text)
        scale = seconds * 1000 * 0.95 / kept[-1].end_ms
        return [Segment(int(c.start_ms * scale), int(c.end_ms * scale), c.text, c.speaker) for c in kept]
    out, offset, length = [], 0, cues[-1].end_ms + 1000
    while offset + length <= seconds * 1000:
        out += [Segment(c.start_ms + offset, c.end_ms + offset, c.text, c.speaker) for c in cues]
        offset += length
    return out


def make_captioned_video(root: Path, seconds: float, cues: list[Segment], name: str = "captioned.mp4") -> dict:
    """A small test-pattern video with a tone, ``seconds`` long, and WebVTT captions of ``cues``:
    {video, vtt, duration_ms}. The transcript is the captions; the picture and sound only need to
    be real media (160x120 at 5 frames a second encodes an hour in seconds)."""
    video = root / name
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=s=160x120:r=5:d={seconds}",
         "-f", "lavfi", "-i", f"sine=frequency=220:sample_rate=8000:duration={seconds}",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "16k",
         "-shortest", str(video)], timeout=600)
    vtt = root / (Path(name).stem + ".vtt")
    vtt.write_text(to_webvtt(cues))
    return {"video": video, "vtt": vtt, "duration_ms": int(seconds * 1000)}


TALK_LINES = [
    "Solar panels convert sunlight into electricity.",
    "In 2023, the world installed more than four hundred gigawatts of solar capacity.",
    "Why does this matter?",
    "Because solar power is now the cheapest source of electricity in history.",
    "Batteries store the energy of the afternoon for the evening.",
    "Lithium battery prices fell by ninety percent between 2010 and 2020.",
    "Thank you for listening.",
]


# A three-part English lecture (solar power, batteries, heat pumps), one sentence a cue: a talk long
# enough for chapters, with figures, questions and named things for the premium writer to work on.
LECTURE_LINES = [
    "Welcome to this lecture about clean energy for the home.",
    "Today we look at solar panels, home batteries and heat pumps.",
    "Let's start with solar panels.",
    "A solar panel turns sunlight into electricity with silicon cells.",
    "A typical panel on a roof produces about four hundred watts in full sun.",
    "In 2023 the world installed more than four hundred gigawatts of solar capacity.",
    "Why does this matter for a household?",
    "Because solar electricity is now cheaper than the electricity bought from the grid.",
    "A roof facing south gives the most energy in Europe.",
    "Shade from a chimney or a tree can cut the output of a whole string of panels.",
    "Micro inverters let each panel work on its own when part of the roof is shaded.",
    "Most panels come with a warranty of twenty five years.",
    "Now let's talk about home batteries.",
    "A home battery stores the energy of the afternoon for the evening.",
    "The price of lithium batteries fell by ninety percent between 2010 and 2020.",
    "A battery of ten kilowatt hours covers the evening needs of a family.",
    "Lithium iron phosphate cells last longer and do not catch fire easily.",
    "How long does a home battery last?",
    "Most home batteries keep eighty percent of their capacity after ten years.",
    "A battery also keeps the lights on during a power cut.",
    "Without solar panels a battery can still charge when electricity is cheap at night.",
    "Finally, let's talk about heat pumps.",
    "A heat pump moves heat from the outside air into the house.",
    "It gives three to four units of heat for every unit of electricity it uses.",
    "That is why a heat pump costs less to run than a gas boiler.",
    "What temperature does a heat pump need?",
    "Modern heat pumps keep working when the air outside is at minus fifteen degrees.",
    "A well insulated house lets the heat pump run at a lower temperature.",
    "Underfloor heating and large radiators suit heat pumps best.",
    "To conclude, solar panels, batteries and heat pumps work best together.",
    "The panels make the electricity, the battery keeps it and the heat pump uses it.",
    "Thank you for watching this lecture about clean energy.",
]


def lecture_cues(lines: list[str] | None = None, cue_ms: int = 6000, start_ms: int = 1000) -> list[Segment]:
    """One caption cue per line, ``cue_ms`` apart, spoken by one lecturer."""
    return [Segment(start_ms + k * cue_ms, start_ms + k * cue_ms + cue_ms - 400, text, None)
            for k, text in enumerate(lines or LECTURE_LINES)]


def make_spoken_talk(root: Path, lines: list[str] | None = None, name: str = "talk.mp4", *, voice: str = "en",
              pause_s: float = 1.2, lead_s: float = 1.0, audio_args: tuple[str, ...] = (),
              voices: tuple[str, ...] = ()) -> dict:
    """A talk WITHOUT captions: a test-pattern picture and espeak-ng reading ``lines`` (English by
    default), ``pause_s`` of silence between lines and ``lead_s`` before the first:
    {video, lines, starts_ms, ends_ms, voices, duration_ms}. ``audio_args`` re-encode the sound (rate,
    channels); ``voices``, when given, read the lines in turn (line k: ``voices[k % len(voices)]``)."""
    ensure_tools()
    lines = lines or TALK_LINES
    parts, starts, ends, t = [], [], [], int(lead_s * 1000)
    read_by = [voices[k % len(voices)] if voices else voice for k in range(len(lines))]
    gap = root / f"{Path(name).stem}-gap.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "anullsrc=r=22050:cl=mono", "-t", str(pause_s), str(gap)])
    lead = root / f"{Path(name).stem}-lead.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "anullsrc=r=22050:cl=mono", "-t", str(lead_s), str(lead)])
    for k, text in enumerate(lines):
        wav = root / f"{Path(name).stem}-line{k}.wav"
        run(["espeak-ng", "-v", read_by[k], "-s", "150", "-w", str(wav), text])
        starts.append(t)
        ends.append(t + _wav_ms(wav))
        parts.append(wav)
        t += _wav_ms(wav) + int(pause_s * 1000)
    listing = root / f"{Path(name).stem}-lines.txt"
    listing.write_text(f"file '{lead}'\n" + "".join(f"file '{p}'\nfile '{gap}'\n" for p in parts))
    speech = root / f"{Path(name).stem}-speech.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-i", str(listing), "-ar", "22050", "-ac", "1",
         str(speech)])
    seconds = t / 1000
    video = root / name
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=s=320x240:r=10:d={seconds}", "-i", str(speech),
         "-map", "0:v", "-map", "1:a", "-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", *audio_args, str(video)], timeout=300)
    return {"video": video, "lines": lines, "starts_ms": starts, "ends_ms": ends, "voices": read_by,
            "duration_ms": t}


def make_sound(root: Path, name: str, source: str, seconds: float, *, audio_args: tuple[str, ...] = (),
               video: bool = True) -> Path:
    """A file whose sound is the lavfi ``source`` (anullsrc, anoisesrc, sine...), no speech in it."""
    ensure_tools()
    out = root / name
    picture = ["-f", "lavfi", "-i", f"color=c=gray:s=160x120:r=5:d={seconds}"] if video else []
    codecs = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"] if video else []
    run(["ffmpeg", "-nostdin", "-y", *picture, "-f", "lavfi", "-i", source, "-t", str(seconds), *codecs,
         "-c:a", "aac", *audio_args, str(out)], timeout=600)
    return out


# ---- hostile media: what a file says of itself is not what it holds


def make_lying_audio(root: Path, real_s: float, squeeze: int, name: str = "lying.mkv") -> Path:
    """A Matroska file whose packet timestamps lie: ``real_s`` seconds of 8 kHz silence (FLAC in
    its longest frames, 8 s each: six hours are about 50 KB, decoded in no time), each packet
    stamped at ``1/squeeze`` of its real time, so that the container and every timestamp say
    ``real_s / squeeze`` seconds (still increasing at Matroska's millisecond for a squeeze up to
    8,000: the upload's measure accepts it). ffmpeg's ``setts`` bitstream filter rewrites the
    stamps of the packets as they are copied, nothing is decoded."""
    flac = root / f"{Path(name).stem}-real.flac"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", str(real_s),
         "-c:a", "flac", "-frame_size", "65535", str(flac)], timeout=300)
    out = root / name
    run(["ffmpeg", "-nostdin", "-y", "-i", str(flac), "-c", "copy", "-bsf:a",
         f"setts=ts=TS/{squeeze}:duration=DURATION/{squeeze}", str(out)])
    flac.unlink()
    return out


def make_lying_video(root: Path, real_s: float, squeeze: int, name: str = "lying-video.mp4") -> Path:
    """An MP4 video whose packet timestamps lie like ``make_lying_audio``'s: 25 fps, 16x16, black
    and white alternating every two frames (so that every other frame is a hard cut: the scene pass
    reports about one change per two frames it decodes). MP4, whose time base is finer than
    Matroska's millisecond: its timestamps still increase, so the upload's measure accepts it."""
    real = root / f"{Path(name).stem}-real.mkv"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i",
         f"color=c=black:s=16x16:r=25:d={real_s},geq=lum='255*mod(floor(N/2)\\,2)':cb=128:cr=128",
         "-c:v", "libx264", "-bf", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(real)], timeout=300)
    out = root / name
    run(["ffmpeg", "-nostdin", "-y", "-i", str(real), "-c", "copy", "-bsf:v",
         f"setts=ts=TS/{squeeze}:duration=DURATION/{squeeze}", str(out)])
    real.unlink()
    return out


def write_wav(path: Path, rate: int, channels: int, frames: int) -> Path:
    """A 16-bit PCM WAV of ``frames`` frames of a tone at ``rate`` Hz (any rate, 1 Hz included) in
    ``channels`` channels, written byte by byte: its header names no channel layout (plain
    WAVE_FORMAT_PCM), whatever the count, which no encoder of ffmpeg's would write."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(int(3000 * math.sin(k * 0.3 + c)).to_bytes(2, "little", signed=True)
                               for k in range(frames) for c in range(channels)))
    return path


def make_fast_video(root: Path, fps: int, seconds: float, name: str = "fast.mp4") -> Path:
    """A small video at ``fps`` frames a second (1000 fps: a high-speed camera's), with a tone."""
    out = root / name
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=s=96x64:r={fps}:d={seconds}",
         "-f", "lavfi", "-i", f"sine=frequency=330:sample_rate=48000:duration={seconds}",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(out)],
        timeout=300)
    return out


def ffmpeg_processes(marker: str = "") -> list[int]:
    """The running ffmpeg processes that hold a file whose path contains ``marker`` open (their
    argument lists name their files as inherited descriptors, ``/proc/self/fd/N``, so the paths
    are read from their descriptors); every ffmpeg process with ``marker`` empty."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "ffmpeg":
                continue
            targets = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue  # ended meanwhile
        if not marker or any(marker in target for target in targets):
            found.append(int(entry.name))
    return found
