"""Articles to export, as the validity tests of the exports take them: one written by the offline
engine from a short talk in each of the seven languages (domain/languages), and a hostile one whose
titles, captions, headings, speakers, questions and text are full of ``<``, ``&``, quotes,
``</script>`` and ``-->``. Each comes as several sources: with the video behind public links, with
the addresses a person published (a player page only, and URLs holding ``&`` and quotes), and
without a video."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from domain.analysis import analyse, write_article
from domain.export_source import ExportSource, VideoInfo
from tests.support.caption_lines import _timed

TALKS: dict[str, list[tuple[str, str]]] = {
    "en": [("Alice", "Welcome. Today we talk about heat pumps and insulation."),
           ("Alice", "How does a heat pump work?"),
           ("Bob", "A heat pump moves heat from the outside air into the house with a compressor."),
           ("Bob", "It gives about three kilowatts of heat for one kilowatt of electricity."),
           ("Alice", "Let's move on to insulation. Why does insulation matter?"),
           ("Bob", "Insulation keeps the heat inside, so the heat pump works less in winter."),
           ("Alice", "Thank you Bob.")],
    "fr": [("Alice", "Bienvenue. Aujourd'hui nous parlons des pompes à chaleur et de l'isolation."),
           ("Alice", "Comment fonctionne une pompe à chaleur ?"),
           ("Bob", "Une pompe à chaleur déplace la chaleur de l'air extérieur vers la maison avec un compresseur."),
           ("Bob", "Elle donne environ trois kilowatts de chaleur pour un kilowatt d'électricité."),
           ("Alice", "Passons maintenant à l'isolation. Pourquoi l'isolation est-elle importante ?"),
           ("Bob", "L'isolation garde la chaleur dedans, donc la pompe travaille moins en hiver."),
           ("Alice", "Merci Bob.")],
    "de": [("Alice", "Willkommen. Heute sprechen wir über Wärmepumpen und die Dämmung."),
           ("Alice", "Wie funktioniert eine Wärmepumpe?"),
           ("Bob", "Eine Wärmepumpe bringt die Wärme der Außenluft mit einem Verdichter ins Haus."),
           ("Bob", "Sie liefert etwa drei Kilowatt Wärme für ein Kilowatt Strom."),
           ("Alice", "Kommen wir nun zur Dämmung. Warum ist die Dämmung wichtig?"),
           ("Bob", "Die Dämmung hält die Wärme im Haus, deshalb arbeitet die Pumpe im Winter weniger."),
           ("Alice", "Danke Bob.")],
    "es": [("Alice", "Bienvenidos. Hoy hablamos de las bombas de calor y del aislamiento."),
           ("Alice", "¿Cómo funciona una bomba de calor?"),
           ("Bob", "Una bomba de calor lleva el calor del aire exterior a la casa con un compresor."),
           ("Bob", "Da unos tres kilovatios de calor por un kilovatio de electricidad."),
           ("Alice", "Pasemos ahora al aislamiento. ¿Por qué importa el aislamiento?"),
           ("Bob", "El aislamiento guarda el calor dentro, así que la bomba trabaja menos en invierno."),
           ("Alice", "Gracias Bob.")],
    "it": [("Alice", "Benvenuti. Oggi parliamo delle pompe di calore e dell'isolamento."),
           ("Alice", "Come funziona una pompa di calore?"),
           ("Bob", "Una pompa di calore porta il calore dell'aria esterna nella casa con un compressore."),
           ("Bob", "Fornisce circa tre kilowatt di calore per un kilowatt di elettricità."),
           ("Alice", "Passiamo ora all'isolamento. Perché l'isolamento è importante?"),
           ("Bob", "L'isolamento tiene il calore dentro, quindi la pompa lavora meno in inverno."),
           ("Alice", "Grazie Bob.")],
    "pt": [("Alice", "Bem-vindos. Hoje falamos das bombas de calor e do isolamento."),
           ("Alice", "Como funciona uma bomba de calor?"),
           ("Bob", "Uma bomba de calor leva o calor do ar exterior para a casa com um compressor."),
           ("Bob", "Ela dá cerca de três quilowatts de calor por um quilowatt de eletricidade."),
           ("Alice", "Vamos agora ao isolamento. Porque é que o isolamento é importante?"),
           ("Bob", "O isolamento mantém o calor dentro, por isso a bomba trabalha menos no inverno."),
           ("Alice", "Obrigada Bob.")],
    "nl": [("Alice", "Welkom. Vandaag praten we over warmtepompen en isolatie."),
           ("Alice", "Hoe werkt een warmtepomp?"),
           ("Bob", "Een warmtepomp brengt de warmte van de buitenlucht met een compressor naar het huis."),
           ("Bob", "Hij geeft ongeveer drie kilowatt warmte voor een kilowatt elektriciteit."),
           ("Alice", "Laten we nu naar de isolatie gaan. Waarom is isolatie belangrijk?"),
           ("Bob", "Isolatie houdt de warmte binnen, dus de pomp werkt minder in de winter."),
           ("Alice", "Bedankt Bob.")],
}
LANGUAGES = tuple(TALKS)

HOSTILE = ('</script><script>alert(1)</script> --> <!-- <img src=x onerror=alert(2)> & &amp; &#x27; "q" \'s\' '
           '<style>p{}</style> ]]> \u2028 \x07 <![CDATA[ x ]]> </article></body>')
# Stored with the microseconds PostgreSQL keeps: HTML's datetime takes at most three digits of them.
INSTANT = datetime(2026, 11, 27, 18, 12, 37, 539967, tzinfo=UTC)
PUBLIC_VIDEO = "https://vaeo.example.com/v1/public/AbCdEf0123456789_-AbCdEf0123456789_-AbCdEf01"
PUBLIC_THUMBNAIL = "https://vaeo.example.com/v1/public/ZyXw0123456789_-ZyXw0123456789_-ZyXw0123456789"


def _hostile_content(content: dict) -> dict:
    content = {**content, "title": HOSTILE, "introduction": HOSTILE + " " + content["introduction"],
               "conclusion": HOSTILE}
    content["sections"] = [{**s, "heading": f"{HOSTILE} {s['heading']}",
                            "paragraphs": [*s["paragraphs"], {"text": HOSTILE, "sentences": [HOSTILE],
                                                              "speaker": f"Mallory {HOSTILE}", "role": "quote"}]}
                           for s in content["sections"]]
    content["key_facts"] = [*content["key_facts"], {"text": HOSTILE, "startMs": 1000, "claimId": "c-x"}]
    content["faq"] = [*content["faq"], {"question": f"{HOSTILE}?", "answer": HOSTILE, "startMs": 1000}]
    return content


def article(language: str, *, hostile: bool = False) -> ExportSource:
    """The talk of ``language`` as an article with its video behind public links."""
    graph = analyse(_timed(TALKS[language]), language=language)
    content = write_article(graph, "conversational", language).to_dict()
    name, title, keywords = f"Talk {language}", content["title"], content["keywords_primary"]
    if hostile:
        content = _hostile_content(content)
        name, title, keywords = f"{HOSTILE} video", f'{HOSTILE} & "title" <b>', [HOSTILE, *keywords]
    video = VideoInfo(video_id=7, name=name, description=HOSTILE if hostile else None, duration_ms=61_500,
                      uploaded_at=INSTANT, content_url=PUBLIC_VIDEO, content_type="video/mp4", width=1280,
                      height=720, size_bytes=1_000_000, thumbnail_url=PUBLIC_THUMBNAIL, thumbnail_width=1280,
                      thumbnail_height=720)
    return ExportSource(article_id=42, title=title, original_title=content["title"], language=language,
                        writing_style="conversational", content=content, keywords=keywords, created_at=INSTANT,
                        updated_at=INSTANT, url=f"https://blog.example.com/{language}/heat-pumps?a=1&b='2'#top",
                        scores={"aeo_score": 80, "geo_score": 70, "composite_score": 73.0}, video=video)


def variants(src: ExportSource) -> dict[str, ExportSource]:
    """The same article as a page links it in each case the service renders: its video behind
    public links, a player page a person published (no file), and no video."""
    embedded = dataclasses.replace(src.video, content_url=None,
                                   embed_url="https://player.example.com/embed/7?autoplay=0&lang='x'#start",
                                   thumbnail_url="https://cdn.example.com/t/7.jpg?v=1&s='2'")
    return {"public": src, "embed": dataclasses.replace(src, video=embedded),
            "novideo": dataclasses.replace(src, video=None)}


def samples() -> dict[str, ExportSource]:
    """``<language>-<variant>`` and ``hostile-<variant>`` -> the source."""
    out = {}
    for language in LANGUAGES:
        out |= {f"{language}-{k}": v for k, v in variants(article(language)).items()}
    out |= {f"hostile-{k}": v for k, v in variants(article("en", hostile=True)).items()}
    return out
