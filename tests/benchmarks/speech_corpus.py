"""Recorded speech in several languages, with what is said, from Debian packages (for the speech
benchmark's ``context`` part: windowed recognition against the whole file).

Each set is a kind of recording in one language:

==========  ====================================================  =================================
 set         package(s)                                            what is said
==========  ====================================================  =================================
 fr, es      ``tuxpaint-stamps-default`` 2022.06.04-1: the stamps'  the stamp's description, the
             descriptions recorded by volunteers                   ``<lang>.utf8=`` line of its .txt
             (``*_desc_fr.ogg``, ``*_desc_es.ogg``)
 nl          ``fillets-ng-data-nl`` 1.0.1-1.1: the game's dialogue  ``dialogStr`` after the line's
             acted in Dutch (``sound/<level>/nl/<id>.ogg``)         ``dialogId`` in ``fillets-ng-data``'s
                                                                   ``script/<level>/dialogs_nl.lua``
 it, fr-ca   ``asterisk-core-sounds-{it,fr}-wav`` 1.6.1-1:          ``core-sounds-<lang>.txt`` of
             telephone prompts read by professional voices          ``asterisk-core-sounds-<lang>``
==========  ====================================================  =================================

(Asterisk's Spanish prompts are not used: their text is written without accents.) The packages
are fetched with ``apt-get download`` into ``CACHE`` and unpacked there (nothing is installed).
A clip is used only when its text can be scored as it stands: no digits (a figure's spelling is
not a recognition error), no symbols, no bracketed sound ("[ascending tones]"), no "?" standing
for a letter the file's encoding lost. The clips of a set are shuffled with a fixed seed and laid
end to end (16 kHz mono, 0.5 s of silence between two) into files of about ``seconds`` each; the
reference of a file is its clips' texts in order.
"""

from __future__ import annotations

import gzip
import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

CACHE = Path("/tmp/vaeo-bench-speech")
GAP_S = 0.5
TUXPAINT = "tuxpaint-stamps-default"
FILLETS = ("fillets-ng-data", "fillets-ng-data-nl")


@dataclass(frozen=True)
class Clip:
    path: Path
    text: str


@dataclass(frozen=True)
class Recording:
    set: str
    language: str
    path: Path  # 16 kHz mono WAV
    reference: str
    clips: int
    ms: int


def unpacked(package: str) -> Path:
    """The package's files, downloaded and unpacked once into ``CACHE``."""
    target = CACHE / package
    if (target / ".done").is_file():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    for old in CACHE.glob(f"{package}_*.deb"):
        old.unlink()
    got = subprocess.run(["apt-get", "download", package], cwd=CACHE, capture_output=True, text=True)
    if got.returncode != 0:  # the package lists may be missing: read them once, then try again
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, check=True)
        subprocess.run(["apt-get", "download", package], cwd=CACHE, capture_output=True, check=True)
    [deb] = CACHE.glob(f"{package}_*.deb")
    subprocess.run(["dpkg", "-x", str(deb), str(target)], check=True)
    deb.unlink()
    (target / ".done").touch()
    return target


_UNSCORABLE = re.compile(r"[0-9$%&@#/\\\[\]<>=+*_|~^]|\?[^\s]|\?\s+[a-zà-ÿ]")


def scorable(text: str) -> bool:
    return bool(text.strip()) and not _UNSCORABLE.search(text)


def tuxpaint(language: str) -> list[Clip]:
    root = unpacked(TUXPAINT) / "usr/share/tuxpaint/stamps"
    clips = []
    for sound in sorted(root.rglob(f"*_desc_{language}.ogg")):
        description = sound.with_name(sound.name.removesuffix(f"_desc_{language}.ogg") + ".txt")
        if not description.is_file():
            continue
        for line in description.read_text(errors="replace").splitlines():
            if line.startswith(f"{language}.utf8="):
                clips.append(Clip(sound, line.split("=", 1)[1].strip()))
    return clips


_DIALOG = re.compile(r'dialogId\("([^"]+)"[^\n]*\)\s*dialogStr\("((?:[^"\\]|\\.)*)"\)')


def fillets_dutch() -> list[Clip]:
    scripts = unpacked(FILLETS[0]) / "usr/share/games/fillets-ng/script"
    sounds = unpacked(FILLETS[1]) / "usr/share/games/fillets-ng/sound"
    clips = []
    for dialogs in sorted(scripts.glob("*/dialogs_nl.lua")):
        level = dialogs.parent.name
        for line_id, text in _DIALOG.findall(dialogs.read_text(errors="replace")):
            sound = sounds / level / "nl" / f"{line_id}.ogg"
            if sound.is_file():
                clips.append(Clip(sound, text.replace('\\"', '"')))
    return clips


def asterisk(language: str) -> list[Clip]:
    texts = unpacked(f"asterisk-core-sounds-{language}") / "usr/share/doc" / f"asterisk-core-sounds-{language}"
    sounds = unpacked(f"asterisk-core-sounds-{language}-wav") / "usr/share/asterisk/sounds"
    listing = gzip.decompress((texts / f"core-sounds-{language}.txt.gz").read_bytes()).decode("utf-8-sig", "replace")
    [voice] = [d for d in sounds.iterdir() if d.is_dir()]  # fr_CA_f_June, it_IT_m_Carlo
    by_name = {p.relative_to(voice).with_suffix("").as_posix(): p for p in voice.rglob("*.wav")
               if p.parent.name not in ("letters", "phonetic", "digits", "silence")}  # sentences only
    clips = []
    for line in listing.splitlines():
        name, sep, text = line.partition(":")
        if sep and not name.startswith(";") and name.strip() in by_name:
            clips.append(Clip(by_name[name.strip()], text.strip()))
    return clips


SETS = {  # name: (language, the clips, what they are)
    "fr": ("fr", lambda: tuxpaint("fr"), "Tux Paint's stamp descriptions, volunteers"),
    "es": ("es", lambda: tuxpaint("es"), "Tux Paint's stamp descriptions, volunteers"),
    "nl": ("nl", fillets_dutch, "Fish Fillets NG's dialogue, acted"),
    "it": ("it", lambda: asterisk("it"), "Asterisk's telephone prompts, a professional voice"),
    "fr-ca": ("fr", lambda: asterisk("fr"), "Asterisk's telephone prompts (Canadian French), a professional voice"),
}


def _ms(path: Path) -> int:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return int(float(out) * 1000)


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", *args], check=True, timeout=300)


def recordings(name: str, root: Path, seconds: float = 90, files: int = 2, seed: int = 42) -> list[Recording]:
    """``files`` recordings of about ``seconds`` each from the set ``name`` (see the module's text)."""
    language, source, _ = SETS[name]
    clips = [c for c in source() if scorable(c.text)]
    random.Random(f"{name}-{seed}").shuffle(clips)
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    gap = folder / "gap.wav"
    _ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", str(GAP_S), "-c:a", "pcm_s16le", str(gap))
    out: list[Recording] = []
    k = 0
    while len(out) < files and k < len(clips):
        parts, texts, total = [], [], 0
        while total < seconds * 1000 and k < len(clips):
            wav = folder / f"clip{k:04d}.wav"
            _ffmpeg("-i", str(clips[k].path), "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", str(wav))
            parts.append(wav)
            texts.append(clips[k].text)
            total += _ms(wav) + int(GAP_S * 1000)
            k += 1
        listing = folder / f"file{len(out)}.txt"
        listing.write_text("".join(f"file '{p}'\nfile '{gap}'\n" for p in parts))
        path = folder / f"{name}-{len(out)}.wav"
        _ffmpeg("-f", "concat", "-safe", "0", "-i", str(listing), "-c:a", "pcm_s16le", str(path))
        out.append(Recording(name, language, path, " ".join(texts), len(parts), _ms(path)))
    return out
