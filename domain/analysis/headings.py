"""What the offline article calls itself and its sections, beyond the chapter titles: the talk's subject as
its title, and a question as a section's heading where the section answers a search intent of the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from domain.analysis.graph import ContentGraph
from domain.analysis.language import Language
from domain.analysis.phrases import heading, publishable
from domain.analysis.text import (
    as_question,
    capitalise,
    colon,
    fold,
    labels,
    norm_token,
    strip_leading_fillers,
    words,
)
from domain.analysis.titles import video_subject_title

SUBJECT_TOPICS = 5  # the strongest topics among which the talk's subject is looked for
ARTICLE_TITLE_WORDS = 12  # the video's own subject as its article's title ("How to bake a simple sourdough bread")


def names_subject(name: str) -> bool:
    """A topic label that names a subject on its own: a phrase, or a name (topic labels keep capitals
    only on names: "heat equation", "JavaScript"; "vector", "dots" do not)."""
    return " " in name.strip() or name[:1].isupper()


def talk_title(graph: ContentGraph, language: str) -> str | None:
    """The article's title: the subject the video names for itself in its first sentences ("Welcome to
    this video about heat pumps"); else the talk's subject, its strongest topic that names a subject
    (a phrase or a name, no person: "Michael Jordan" is an example a lecture gives), with the two next
    topics as what the talk says of it ("Differential equations: heat equation and partial derivatives";
    "Bike shedding: CSS and prettier"); None when no topic names one (the caller then joins the
    first topics)."""
    subject = video_subject_title(graph.sentences, language, ARTICLE_TITLE_WORDS)
    if subject is not None:
        return subject
    people = {fold(e.name) for e in graph.entities if e.type == "person"}
    topics = [t for t in graph.topics if fold(t.name) not in people]
    main = next((t for t in topics[:SUBJECT_TOPICS] if names_subject(t.name)), None)
    if main is None:
        return None
    said = set(fold(main.name).split())
    aspects = [t.name for t in topics if t is not main and not said & set(fold(t.name).split())][:2]
    if len(aspects) < 2:
        return capitalise(main.name)
    return f"{capitalise(main.name)}{colon(language)}{aspects[0]} {labels(language)['and']} {aspects[1]}"


def question_headings(graph: ContentGraph, spans: Sequence[tuple[str, int, int]], taken: set[str],
                      language: str, queries: bool = True) -> dict[int, str]:
    """The sections (by position in ``spans``: title, start, end) whose heading is a question the
    section answers, from the graph's search intents, each used once and none already a FAQ entry
    (``taken``: folded questions):

    - a question asked in the video, answered (a claim follows it; ``SearchIntent.answered``), in the
      section it is asked in, when it makes a heading (``phrases.publishable``);
    - a topic query ("what is X", "how does X work"), in the section where X is most said, when a
      claim of that section names X (the section answers it); not with ``queries`` False (a tutorial's
      step is named by what it does, not by "What is flour?").

    A section whose chapter title is already a question keeps it."""
    found: dict[int, str] = {}
    code = graph.language or language
    folded = [(s.start_ms, fold(s.text)) for s in graph.sentences]

    def section_of(ms: int) -> int | None:
        return next((k for k, (_, a, b) in enumerate(spans) if a <= ms // 1000 * 1000 < b), None)

    for intent in graph.intents:
        if fold(intent.query) in taken:
            continue
        if intent.source == "question":
            k = section_of(intent.start_ms or 0) if intent.answered else None
            question = heading(strip_leading_fillers(intent.query, code))
            if k is None or not publishable(question, code):
                continue
        elif not queries:
            continue
        else:
            topic = next((t for t in graph.topics if t.key and t.key in fold(intent.query)), None)
            k = _home_section(graph, folded, topic.key, section_of) if topic else None
            if k is None:
                continue
            question = as_question(intent.query, language)
        if k not in found and not spans[k][0].rstrip().endswith("?"):
            found[k] = question
            taken.add(fold(question))
    return found


def answers(question: str, texts: Sequence[str], kit: Language) -> bool:
    """``texts`` (a section's body) say a content word of the question the section is headed by: else the
    question is no heading for it (the FAQ or the introduction took the sentences that answer it)."""
    asked = {kit.stem(t) for t in (norm_token(w) for w in words(question)) if t not in kit.stop_words}
    return bool(asked & {kit.stem(norm_token(w)) for text in texts for w in words(text)})


def _home_section(graph: ContentGraph, folded: list[tuple[int, str]], key: str,
                  section_of: Callable[[int], int | None]) -> int | None:
    """The section where ``key`` is most said (``folded``: each sentence's start and folded text), when
    one of its claims names it (else None)."""
    said: dict[int, int] = {}
    for start_ms, text in folded:
        if key in text:
            k = section_of(start_ms)
            if k is not None:
                said[k] = said.get(k, 0) + 1
    if not said:
        return None
    home = max(said, key=lambda k: (said[k], -k))
    answers = any(section_of(c.start_ms) == home and key in fold(c.text) for c in graph.claims)
    return home if answers else None
