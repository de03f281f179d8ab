"""Speech recognition: ``python -m tests.benchmarks speech [wer] [languages] [context] [speed] [talk]``.

- ``wer``: word error rate on real speech, the five LibriVox sentences (a reading of *Sense and
  Sensibility*) of Debian's ``pocketsphinx-testdata`` package (installed when absent), with each
  model (base, the service's, told the language is English; and the English-only tiny.en, a test
  extra, for comparison). Goal <= 5 %.
- ``languages``: a paragraph of ordinary prose per language (written for this benchmark), read by
  espeak-ng, recognised with the model the service uses for that language (language given), and
  with the language detected (the guess, its probability, and the error rate when the guess is
  used). Goal: English <= 10 %; the other voices are reported as they are.
- ``context``: real recorded speech in other languages (``speech_corpus``: French and Spanish
  volunteers, Dutch acted dialogue, Italian and Canadian French telephone prompts, from Debian
  packages), files of about 90 s cut into the service's 30 s windows. Word error rate of the
  windows as the service recognised them before (each window alone, words joined with spaces),
  the same words joined as Whisper spaced them, the windows each told the text before them (the
  service now), and the same model on the whole file (Whisper's own long-form transcription).
  Goal: the windows cost no accuracy against the whole file.
- ``speed``: seconds of processing per second of audio of each model, and the peak resident memory
  (VmHWM) of the recogniser process: the service's (base) on English then French, and one running
  tiny.en for comparison. Goals: the default model <= 0.35 s/s for English, <= 0.6 s/s for the
  others; the worker's peak <= 1 GB.
- ``talk``: a 10-minute captionless English talk (espeak-ng sentences with pauses) from upload to
  article through the real processes (time, windows, the job's steps), then the same talk with
  captions made from the same sentences' timings; their chapters compared. Goal: as many chapters
  give or take one, each start near its captioned counterpart.

Recognition goes through the worker's own path (``services.jobs.speech``): ``find_speech`` plans the
windows from the Silero VAD, ``LocalRecogniser`` runs each in its child process. To measure tiny.en
beside it, the child is started with the model choice forced (``_forced``); nothing else differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import orjson

from domain.analysis.speech import prompt_for, words_text
from infra import asr, stack
from services.jobs import speech
from tests.benchmarks import speech_corpus
from tests.benchmarks.bench_core import TEMPLATE, core_speed_ms, fresh, machine
from tests.media_factory import make_spoken_talk
from tests.media_factory import run as run_command
from tests.support.stack import _base_settings, drop_isolated

LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
WINDOW_MS = 30_000  # the service's default window (VAEO_ASR_WINDOW_S)

# Written for this benchmark: ordinary prose, no figures (so that no spelling of a number counts
# as an error), about seventy to ninety words each.
PARAGRAPHS = {
    "en": "Every morning the baker opens his shop before the sun rises over the hills. He lights the old "
          "oven, mixes flour with water and salt, and waits for the dough to grow. The first customers are "
          "usually workers on their way to the station. They buy warm bread and talk about the weather, the "
          "price of coffee and the news from the town council. By the middle of the day the shelves are "
          "empty, and the baker finally sits down to read his newspaper in the quiet kitchen.",
    "fr": "Chaque matin, la boulangère ouvre sa boutique avant que le soleil ne se lève sur les collines. "
          "Elle allume le vieux four, mélange la farine avec l'eau et le sel, puis attend que la pâte "
          "gonfle. Les premiers clients sont souvent des ouvriers qui se rendent à la gare. Ils achètent du "
          "pain chaud et parlent du temps qu'il fait, du prix du café et des nouvelles de la mairie. Vers "
          "midi, les étagères sont vides et la boulangère peut enfin lire son journal dans la cuisine.",
    "de": "Jeden Morgen öffnet der Bäcker seinen Laden, bevor die Sonne über den Hügeln aufgeht. Er heizt "
          "den alten Ofen an, mischt Mehl mit Wasser und Salz und wartet, bis der Teig aufgeht. Die ersten "
          "Kunden sind meistens Arbeiter auf dem Weg zum Bahnhof. Sie kaufen warmes Brot und sprechen über "
          "das Wetter, den Preis des Kaffees und die Neuigkeiten aus dem Rathaus. Gegen Mittag sind die "
          "Regale leer, und der Bäcker liest endlich in der stillen Küche seine Zeitung.",
    "es": "Cada mañana el panadero abre su tienda antes de que el sol salga sobre las colinas. Enciende el "
          "viejo horno, mezcla la harina con agua y sal, y espera a que la masa crezca. Los primeros "
          "clientes suelen ser trabajadores que van a la estación. Compran pan caliente y hablan del "
          "tiempo, del precio del café y de las noticias del ayuntamiento. A mediodía las estanterías están "
          "vacías, y el panadero por fin se sienta a leer el periódico en la cocina tranquila.",
    "it": "Ogni mattina il fornaio apre il suo negozio prima che il sole sorga sulle colline. Accende il "
          "vecchio forno, mescola la farina con acqua e sale, e aspetta che l'impasto cresca. I primi "
          "clienti sono di solito operai diretti alla stazione. Comprano pane caldo e parlano del tempo, "
          "del prezzo del caffè e delle notizie del comune. A mezzogiorno gli scaffali sono vuoti, e il "
          "fornaio finalmente si siede a leggere il giornale nella cucina silenziosa.",
    "pt": "Todas as manhãs o padeiro abre a sua loja antes de o sol nascer sobre as colinas. Acende o velho "
          "forno, mistura a farinha com água e sal, e espera que a massa cresça. Os primeiros clientes são "
          "normalmente trabalhadores a caminho da estação. Compram pão quente e falam do tempo, do preço do "
          "café e das notícias da câmara municipal. Ao meio-dia as prateleiras estão vazias, e o padeiro "
          "finalmente senta-se a ler o jornal na cozinha sossegada.",
    "nl": "Elke ochtend opent de bakker zijn winkel voordat de zon boven de heuvels opkomt. Hij steekt de "
          "oude oven aan, mengt meel met water en zout, en wacht tot het deeg rijst. De eerste klanten zijn "
          "meestal arbeiders op weg naar het station. Ze kopen warm brood en praten over het weer, de prijs "
          "van koffie en het nieuws van het gemeentehuis. Tegen de middag zijn de schappen leeg, en de "
          "bakker leest eindelijk zijn krant in de stille keuken.",
}

# The 10-minute talk: six parts on different subjects (chapters to find), written for this benchmark.
TALK_PARTS = [
    ["Welcome to this talk about how a small town can change the way it uses energy.",
     "Over the next few minutes we will look at heating, transport, food, water, waste and money.",
     "Each of these subjects touches the daily life of every family in the town.",
     "Let us begin with the way our homes are heated during the long winter months.",
     "Most houses in the town still burn oil or gas in an old boiler in the basement.",
     "These boilers are often more than twenty years old and waste much of their fuel.",
     "A heat pump takes warmth from the outside air and moves it into the house.",
     "Even on a cold day, the air outside holds enough heat for a modern pump to use.",
     "Insulating the roof and the walls first makes the new pump smaller and cheaper.",
     "Double glazed windows keep the warmth inside and the noise of the street outside.",
     "A family that insulates its attic can cut its heating bill by a quarter.",
     "The town hall now offers free visits from an adviser who checks each house.",
     "The adviser measures the walls, the windows and the boiler, and writes a short report.",
     "Many families were surprised by how much heat escaped through their front door.",
     "Heating is the largest part of the energy a household uses, so it comes first.",
     "A thermostat that lowers the temperature at night saves fuel while everyone sleeps.",
     "Radiators behind curtains warm the window instead of the room.",
     "Old houses with thick stone walls need a different kind of insulation than new ones.",
     "The adviser can explain which work to do first and which can wait."],
    ["Now let us turn to transport, the second largest use of energy in the town.",
     "Most people drive to work alone, even when the distance is short.",
     "A bicycle lane along the river would link the station with the industrial park.",
     "Electric bicycles make the hill above the old quarter easy to climb.",
     "The bus company plans to replace its diesel buses with electric ones over ten years.",
     "Buses that run every fifteen minutes attract far more riders than hourly ones.",
     "Parents could walk their children to school together in small groups.",
     "Car sharing lets a family keep one car instead of two.",
     "Charging points in the main square would help people who have no garage.",
     "Delivery vans could use a shared depot at the edge of town for the last mile.",
     "Every journey that moves from the car to the bus saves fuel and money.",
     "The streets also become quieter and safer for everyone who walks.",
     "Transport changes slowly, because habits and roads take years to change.",
     "A safe place to lock a bicycle at the station matters as much as the lane itself.",
     "Trains to the city leave every half hour, but few people know the timetable.",
     "Working from home one day a week removes a whole journey from the road.",
     "Lorries that cross the town centre could be sent along the ring road instead."],
    ["The third subject is food, and the farms that surround the town.",
     "Much of what we eat travels hundreds of kilometres before it reaches the shop.",
     "The weekly market already sells vegetables, cheese and bread from nearby farms.",
     "A school canteen that buys local food supports the farmers around it.",
     "Seasonal fruit needs no heated greenhouse and no long journey by lorry.",
     "Farmers who plant hedges protect their soil from the wind and the rain.",
     "The hedges also give shelter to birds and insects that help the crops.",
     "Composting kitchen scraps returns their goodness to the fields.",
     "Community gardens teach children where carrots and potatoes come from.",
     "Cooking together in the old village hall has become a popular evening.",
     "Eating a little less meat is one of the simplest changes a family can make.",
     "Food is a pleasure, and the best changes are the ones people enjoy.",
     "A cold room for storing apples kept families fed through the winter in the past.",
     "Young farmers find it hard to buy land near the town, because prices are high.",
     "The cooperative dairy collects milk from twelve farms in the valley.",
     "Bread made with flour from the mill by the river tastes of the place it comes from."],
    ["Our fourth subject is water, which we often forget until it runs short.",
     "Last summer the reservoir above the town fell to its lowest level in decades.",
     "Rain barrels beside each house can water the garden during a dry month.",
     "A leaking tap wastes thousands of litres in a single year.",
     "The water company found that old pipes under the main street lost a fifth of the supply.",
     "Replacing those pipes is expensive, but the savings pay for the work over time.",
     "Showers use far less water than baths, especially with a modern head.",
     "Parks can be planted with grasses and shrubs that need little watering.",
     "Wetlands along the river clean the water and slow down the floods.",
     "Children at the primary school measure the rain on their own roof each day.",
     "Water is cheap on the bill, but it is precious for the valley.",
     "Farmers now water their fields at night, when less of it evaporates.",
     "A green roof holds the rain and releases it slowly into the drains.",
     "Fish have returned to the river since the new treatment plant opened.",
     "Dripping pipes in the swimming pool were repaired during the spring closure."],
    ["The fifth subject is waste, and what the town throws away each week.",
     "The bins collected on Monday morning hold a surprising amount of food and paper.",
     "Sorting glass, paper and plastic at home makes recycling much easier.",
     "A repair cafe opens every second Saturday in the library.",
     "Volunteers fix lamps, toasters, bicycles and torn clothes for free.",
     "Each object repaired is one less object bought new and thrown away.",
     "Shops that sell without packaging let customers bring their own jars.",
     "The town could collect garden waste and turn it into compost for the parks.",
     "Building sites produce mountains of rubble that could be crushed and used again.",
     "Waste is not only a cost, it is a resource that we have not yet learned to use.",
     "Old furniture from the clearance sales finds new owners through the community shop.",
     "Paper and cardboard make up almost half of what the town collects.",
     "Market traders now give unsold fruit to the food bank at the end of the day.",
     "Fewer bins on the pavement make the streets cleaner and easier to walk along."],
    ["Finally, let us talk about money, because every change must be paid for.",
     "A town energy cooperative lets residents buy shares in solar panels on public roofs.",
     "The school, the sports hall and the fire station all have large flat roofs.",
     "The electricity they produce is sold, and the profit returns to the members.",
     "Banks now offer cheaper loans for insulation and heat pumps.",
     "The region pays part of the cost of an adviser's visit and of the work itself.",
     "Spending on local craftsmen keeps the money circulating in the town.",
     "A plumber trained to fit heat pumps will find work for many years.",
     "Each euro saved on fuel is a euro that stays in the valley.",
     "Investors from outside the town are welcome, but the members decide where the profit goes.",
     "The accounts of the cooperative are published every year for anyone to read.",
     "A small fund helps families who cannot afford the first payment for their work.",
     "Thank you for listening, and I hope you will join the next meeting at the town hall."],
]


# ---- word error rate


_SPELLED = {"mr": "mister", "mrs": "missus", "dr": "doctor"}


def words_of(text: str) -> list[str]:
    """Lower case, punctuation removed (apostrophes inside words kept, curly ones made straight,
    hyphens split words), titles spelled out as the reference transcripts spell them."""
    text = unicodedata.normalize("NFC", text).lower().replace("\u2019", "'")
    out = []
    for word in re.split(r"[^\w']+", text):
        word = word.strip("'")
        if word:
            out.append(_SPELLED.get(word, word))
    return out


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Word-level Levenshtein distance: substitutions + deletions + insertions."""
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i]
        for j, h in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1]


def wer(pairs: list[tuple[str, str]]) -> float:
    """Errors over reference words, pooled over (reference, hypothesis) pairs."""
    errors = sum(edit_distance(words_of(r), words_of(h)) for r, h in pairs)
    return errors / max(1, sum(len(words_of(r)) for r, _ in pairs))


# ---- recognition through the worker's path


def _forced(model: str, *args) -> None:
    """The recogniser process of ``services.jobs.speech`` with the model choice forced to ``model``."""
    asr.model_for = lambda language: model
    speech._serve(*args)


@contextlib.contextmanager
def recogniser(settings, model: str | None = None):
    """A ``LocalRecogniser`` (its process started on first use, killed on exit); ``model`` forces
    the model its process runs whatever the language (the child alone sees the change)."""
    rec = speech.LocalRecogniser(settings)
    original = speech._serve
    if model is not None:
        speech._serve = functools.partial(_forced, model)
    try:
        yield rec
    finally:
        speech._serve = original
        rec.close()


def peak_rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _demuxer(path: Path) -> str:
    return "wav" if path.suffix == ".wav" else "mov"


async def recognise_file(rec, path: Path, language: str, audio_ms: int, chained: bool = True) -> dict:
    """The file's text as the worker would get it: VAD windows, then each window recognised, told
    the text of the windows before it (``chained``, as the service does) or not (as it did before).
    ``text`` is joined as the recogniser spaced the words; ``spaced`` as it was before (a space
    between every two words)."""
    demuxer = _demuxer(path)
    t0 = time.perf_counter()
    _, windows = speech.find_speech(path, demuxer, audio_ms, WINDOW_MS)
    vad_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    done, prompts, dropped = [], [], 0
    for window in windows:
        found = await rec.recognise(path, demuxer, window, language, prompt=prompt_for(done) if chained else "")
        done.append([w.to_list() for w in found.words])
        prompts.append(found.prompt)
        dropped += found.dropped
    words = [w for window_words in done for w in window_words]
    return {"text": words_text(words), "spaced": " ".join(w[2] for w in words), "vad_s": vad_s,
            "recognise_s": time.perf_counter() - t1, "windows": windows, "audio_s": audio_ms / 1000,
            "dropped": dropped, "prompts": prompts}


def whole_file(engine: asr.LocalEngine, path: Path, language: str, audio_ms: int) -> dict:
    """The same model on the whole file at once, as Whisper transcribes a long file itself (its
    30 s windows, each conditioned on the text before it; beam 5, the language given, no VAD)."""
    audio = asr.decode_audio(path, _demuxer(path), 0, audio_ms, 600)
    t0 = time.perf_counter()
    segments, _ = engine._model(asr.model_for(language)).transcribe(audio, language=language, beam_size=5)
    text = "".join(s.text for s in segments)
    return {"text": text, "recognise_s": time.perf_counter() - t0}


def duration_ms(path: Path) -> int:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                          str(path)], capture_output=True, text=True, check=True).stdout
    return int(float(out) * 1000)


async def warm(rec, path: Path, language: str) -> None:
    """Load the model in the recogniser's process (its load time is not recognition time)."""
    await rec.recognise(path, _demuxer(path), (0, 2000), language)


def ensure_librivox() -> list[tuple[Path, str]]:
    if not (LIBRIVOX / "transcription").is_file():
        subprocess.run(["apt-get", "install", "-y", "-q", "pocketsphinx-testdata"], check=True, capture_output=True)
    out = []
    for line in (LIBRIVOX / "transcription").read_text().splitlines():
        m = re.match(r"\s*<s>(.*)</s>\s*\((\S+)\)", line)
        if m:
            out.append((LIBRIVOX / f"{m.group(2)}.wav", m.group(1).strip()))
    return out


def espeak(root: Path, language: str, text: str) -> Path:
    wav = root / f"{language}.wav"
    run_command(["espeak-ng", "-v", language, "-s", "150", "-w", str(wav), text])
    return wav


# ---- the parts


async def part_wer(settings) -> dict:
    clips = ensure_librivox()
    audio_s = sum(duration_ms(p) for p, _ in clips) / 1000
    out = {}
    for model in ("tiny.en", "base"):
        with recogniser(settings, model) as rec:
            await warm(rec, clips[0][0], "en")
            pairs, spent = [], 0.0
            for path, reference in clips:
                got = await recognise_file(rec, path, "en", duration_ms(path))
                pairs.append((reference, got["text"]))
                spent += got["vad_s"] + got["recognise_s"]
            out[model] = {"wer": wer(pairs), "seconds_per_second": spent / audio_s,
                          "errors": [(r, h) for r, h in pairs if words_of(r) != words_of(h)]}
        print(f"wer librivox ({len(clips)} sentences, {audio_s:.1f} s, {sum(len(words_of(r)) for _, r in clips)} "
              f"words) {model}: {out[model]['wer']:.1%} (goal <= 5 %), {out[model]['seconds_per_second']:.2f} s/s")
        for ref, hyp in out[model]["errors"]:
            print(f"    ref: {ref}\n    got: {hyp}")
    return out


async def part_languages(settings, root: Path) -> dict:
    """Per language: the service's path (its model, the language given), with the language
    detected, and English also with the English-only tiny.en for comparison."""
    audio = {language: espeak(root, language, text) for language, text in PARAGRAPHS.items()}
    out: dict = {language: {"model": asr.model_for(language), "words": len(words_of(text))}
                 for language, text in PARAGRAPHS.items()}
    with recogniser(settings) as rec:
        for language, text in PARAGRAPHS.items():
            wav, row = audio[language], out[language]
            ms = duration_ms(wav)
            given = await recognise_file(rec, wav, language, ms)
            detected, probability = await rec.detect(wav, "wav", given["windows"][0])
            row.update(audio_s=ms / 1000, wer=wer([(text, given["text"])]), dropped=given["dropped"],
                       detected=detected, probability=probability, text=given["text"])
            if detected and detected != language:
                row["wer_detected"] = wer([(text, (await recognise_file(rec, wav, detected, ms))["text"])])
            else:
                row["wer_detected"] = row["wer"]
    with recogniser(settings, "tiny.en") as rec:
        got = await recognise_file(rec, audio["en"], "en", duration_ms(audio["en"]))
        out["en"]["wer_tiny"] = wer([(PARAGRAPHS["en"], got["text"])])
    for language, row in out.items():
        goal = " (goal <= 10 %)" if language == "en" else ""
        other = f"; tiny.en {row['wer_tiny']:.1%}" if "wer_tiny" in row else ""
        print(f"languages {language} ({row['model']}, {row['words']} words, {row['audio_s']:.0f} s): "
              f"WER {row['wer']:.1%}{goal}, {row['dropped']} segments dropped as not speech; detected "
              f"{row['detected']} at {row['probability']:.2f}, WER then {row['wer_detected']:.1%}{other}")
        print(f"    got: {row['text']}")
    return out


async def part_speed(settings, root: Path) -> dict:
    """Seconds of processing per second of audio (VAD + recognition, models loaded beforehand) and
    the recogniser process's peak resident memory."""
    english = espeak(root, "en", PARAGRAPHS["en"])
    french = espeak(root, "fr", PARAGRAPHS["fr"])
    librivox = ensure_librivox()[0][0]
    out: dict = {}

    async def timed(rec, path: Path, language: str) -> float:
        got = await recognise_file(rec, path, language, duration_ms(path))
        return (got["vad_s"] + got["recognise_s"]) / got["audio_s"]

    with recogniser(settings) as rec:  # the worker's: base for every language
        await warm(rec, english, "en")
        out["base en espeak"] = await timed(rec, english, "en")
        out["base en librivox"] = await timed(rec, librivox, "en")
        await warm(rec, french, "fr")
        out["base fr espeak"] = await timed(rec, french, "fr")
        out["rss_base_mb"] = peak_rss_mb(rec._process.pid)
    with recogniser(settings, "tiny.en") as rec:  # for comparison
        await warm(rec, english, "en")
        out["tiny.en en espeak"] = await timed(rec, english, "en")
        out["tiny.en en librivox"] = await timed(rec, librivox, "en")
        out["rss_tiny_mb"] = peak_rss_mb(rec._process.pid)
    for key, value in out.items():
        if key.startswith("rss"):
            print(f"speed peak RSS of the recogniser process, {key[4:-3]}: {value:.0f} MB (goal: worker <= 1 GB)")
        else:
            goal = "<= 0.35" if key.startswith("base en") else "<= 0.6" if key.startswith("base fr") else "-"
            print(f"speed {key}: {value:.2f} s per s of audio (goal {goal})")
    return out


def _captions(talk: dict, pause_ms: int, path: Path) -> Path:
    from domain.analysis import Segment
    from infra.captions import to_webvtt

    starts = talk["starts_ms"]
    ends = [s - pause_ms for s in starts[1:]] + [talk["duration_ms"] - pause_ms]
    path.write_text(to_webvtt([Segment(a, b, text, None) for a, b, text in zip(starts, ends, talk["lines"],
                                                                               strict=True)]))
    return path


def _tree_rss_mb(pid: int) -> dict[str, float]:
    """VmHWM of the worker ``pid`` and of each of its descendants (the recogniser, multiprocessing's
    resource tracker), named by what they run."""
    out: dict[str, float] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            name = ("worker" if p == pid else "resource tracker" if "resource_tracker" in command
                    else "recogniser" if "spawn_main" in command else command[:40])
            out[f"{name} ({p})"] = peak_rss_mb(p)
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
    return out


async def _follow(client, job_id: str, timeout: float = 3600) -> tuple[dict, list[tuple[float, int, str]]]:
    """The job polled to its end: (the last job, each new step with its time from the request and progress)."""
    t0, deadline, steps = time.perf_counter(), time.monotonic() + timeout, []
    while True:
        job = (await client.get(f"/jobs/{job_id}")).data
        if not steps or steps[-1][2] != job["step"]:
            steps.append((time.perf_counter() - t0, job["progress"], job["step"]))
        if job["status"] in ("completed", "failed", "cancelled") or time.monotonic() > deadline:
            return job, steps
        await asyncio.sleep(0.1)


async def part_context(settings, root: Path, seconds: float = 90, files: int = 1) -> dict:
    """Real speech in other languages (``speech_corpus``), ~``seconds`` files cut into windows of
    30 s: the service's windows as they were (no prompt, words joined with spaces), the same words
    joined as the recogniser spaced them, each window told the text before it (the service now),
    and the same model on the whole file."""
    out: dict = {}
    engine = asr.LocalEngine(settings.asr_models_path, settings.asr_cpu_threads)
    with recogniser(settings) as rec:
        for name, (language, _, what) in speech_corpus.SETS.items():
            made = speech_corpus.recordings(name, root / "corpus", seconds, files)
            await warm(rec, made[0].path, language)
            pairs: dict[str, list] = {"before": [], "joined": [], "after": [], "whole": []}
            spent = {"before": 0.0, "after": 0.0, "whole": 0.0}
            windows = []
            for recording in made:
                plain = await recognise_file(rec, recording.path, language, recording.ms, chained=False)
                chained = await recognise_file(rec, recording.path, language, recording.ms)
                whole = whole_file(engine, recording.path, language, recording.ms)
                pairs["before"].append((recording.reference, plain["spaced"]))
                pairs["joined"].append((recording.reference, plain["text"]))
                pairs["after"].append((recording.reference, chained["text"]))
                pairs["whole"].append((recording.reference, whole["text"]))
                spent["before"] += plain["recognise_s"]
                spent["after"] += chained["recognise_s"]
                spent["whole"] += whole["recognise_s"]
                windows.append(len(chained["windows"]))
            audio_s = sum(r.ms for r in made) / 1000
            row = {key: wer(value) for key, value in pairs.items()}
            row.update(language=language, what=what, files=len(made), audio_s=audio_s, windows=windows,
                       words=sum(len(words_of(r.reference)) for r in made), clips=sum(r.clips for r in made),
                       seconds_per_second={k: v / audio_s for k, v in spent.items()},
                       texts={k: v[0][1] for k, v in pairs.items()}, reference=made[0].reference)
            out[name] = row
            print(f"context {name} ({what}; {row['files']} files, {row['clips']} clips, {audio_s:.0f} s, "
                  f"{row['words']} words, windows {windows}): WER windows before {row['before']:.1%}, joined "
                  f"{row['joined']:.1%}, with the text before each window {row['after']:.1%}; whole file "
                  f"{row['whole']:.1%}; s/s " + ", ".join(f"{k} {v:.2f}" for k, v in row["seconds_per_second"].items()))
            for key in ("before", "after", "whole"):
                print(f"    {key}: {row['texts'][key][:300]}")
            print(f"    ref: {row['reference'][:300]}")
    return out


async def part_talk(root: Path) -> dict:
    from tests.support.api_videos import upload
    from tests.support.service import running_service

    pause_s = 1.5
    lines = [line for part in TALK_PARTS for line in part]
    talk = make_spoken_talk(root, lines, "talk.mp4", pause_s=pause_s)
    captions = _captions(talk, int(pause_s * 1000), root / "talk.vtt")
    print(f"talk: {len(lines)} sentences, {talk['duration_ms'] / 60000:.1f} minutes; parts start at "
          + ", ".join(f"{talk['starts_ms'][sum(len(p) for p in TALK_PARTS[:k])] / 1000:.0f} s"
                      for k in range(len(TALK_PARTS))))
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    scratch = await fresh(base)
    await drop_isolated(base, scratch)
    out: dict = {}
    with tempfile.TemporaryDirectory() as logs:
        async with running_service(base, TEMPLATE, Path(logs), processes=("relay", "projector", "worker"),
                                   apis=1) as svc:
            ws = await svc.workspace(credits=10_000)
            for label, with_captions in (("speech", False), ("captions", True)):
                t0 = time.perf_counter()
                status, body = await upload(ws.client, talk["video"], captions=captions if with_captions else None)
                assert status == 201, body
                uploaded = time.perf_counter() - t0
                vid = body["data"]["id"]
                r = await ws.client.post(f"/videos/{vid}/analyze", {"language": "en"})
                assert r.status == 202, r.body
                job, steps = await _follow(ws.client, r.data["job_id"])
                assert job["status"] == "completed" and job["article_id"], job
                article = await ws.client.get(f"/articles/{job['article_id']}")
                assert article.status == 200, article.body
                total = time.perf_counter() - t0
                graph = (await ws.client.get(f"/videos/{vid}/graph")).data
                out[label] = {"upload_s": uploaded, "total_s": total, "steps": steps,
                              "source": job["result"]["transcript_source"],
                              "chapters": [(c["startMs"], c["title"]) for c in graph["chapters"]]}
                if label == "speech":
                    segments = (await ws.client.get(f"/videos/{vid}/transcript?format=json")).data["segments"]
                    out[label]["wer"] = wer([(" ".join(lines), " ".join(seg["text"] for seg in segments))])
                    print(f"talk speech: WER of the recognised transcript {out[label]['wer']:.1%}")
                print(f"talk {label}: upload {uploaded:.1f} s, upload to article {total:.0f} s "
                      f"({total / (talk['duration_ms'] / 1000):.2f} s per s of talk); source {out[label]['source']}")
                windows = [t for t, _, step in steps if step.startswith("recognising speech: window ")]
                shown = [f"{t:.1f} s {progress} % {step}" for t, progress, step in steps
                         if not step.startswith("recognising speech: window ")]
                if windows:
                    shown.append(f"windows seen from {windows[0]:.1f} s to {windows[-1]:.1f} s "
                                 f"({len(windows)} of {out[label]['source']['windows']} polled)")
                print("    steps: " + " | ".join(shown))
            out["worker_rss_mb"] = _tree_rss_mb(svc.procs["worker"].pid)
    rss = out["worker_rss_mb"]
    print("talk: peak RSS of the worker and its children: " + ", ".join(f"{k} {v:.0f} MB" for k, v in rss.items())
          + f"; together at most {sum(rss.values()):.0f} MB (goal <= 1 GB)")
    spoken, captioned = out["speech"]["chapters"], out["captions"]["chapters"]
    print(f"talk chapters: speech {len(spoken)}, captions {len(captioned)} (goal: within one)")
    for start, title in captioned:
        near = min(spoken, key=lambda c: abs(c[0] - start)) if spoken else (0, "")
        print(f"    captions {start / 1000:6.1f} s {title!r:45} speech {near[0] / 1000:6.1f} s {near[1]!r} "
              f"({(near[0] - start) / 1000:+.1f} s)")
    return out


async def main(which: list[str]) -> dict:
    parts = [p for p in ("wer", "languages", "context", "speed", "talk") if not which or p in which]
    settings = _base_settings()
    results: dict = {"machine": machine(), "core_speed_ms_before": core_speed_ms()}
    print(f"machine: {results['machine']}; core loop {results['core_speed_ms_before']} ms")
    with tempfile.TemporaryDirectory() as tmp_name:
        root = Path(tmp_name)
        if "wer" in parts:
            results["wer"] = await part_wer(settings)
        if "languages" in parts:
            results["languages"] = await part_languages(settings, root)
        if "context" in parts:
            results["context"] = await part_context(settings, root)
        if "speed" in parts:
            results["speed"] = await part_speed(settings, root)
        if "talk" in parts:
            results["talk"] = await part_talk(root)
    results["core_speed_ms_after"] = core_speed_ms()
    print(f"core loop after: {results['core_speed_ms_after']} ms")
    return results


def run(which: list[str]) -> None:
    if not shutil.which("espeak-ng"):
        from tests.media_factory import ensure_tools

        ensure_tools()
    results = asyncio.run(main(which))
    print(orjson.dumps(results, default=str).decode(), file=sys.stderr)
