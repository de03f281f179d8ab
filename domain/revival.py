"""Revival: candidate videos whose descriptions can be completed.

A **candidate** is a video that has a media, a completed analysis and an article. Its id is derived
from the video (``candidate_id``), so it is stable for the video's life. What it shows (score,
eligibility, reasons) is computed by the read model from the log (``projections/revival_candidates``)
with the pure functions of this module; its **status** is a state machine:

- ``eligible``: nobody has decided anything yet (the state a candidate starts in);
- ``reviewing``: a person is looking at it; ``dismissed``: a person set it aside;
- ``selected``: descriptions were completed for it (``CandidateSelected``);
- ``stale``: the video changed (a new analysis, a new description) after it was put in review or
  selected, so that review or those drafts were made on what the video no longer is. It stays
  stale until it is recomputed (completing the descriptions again selects it) or a person moves it.

A person moves a candidate to ``eligible``, ``reviewing`` or ``dismissed`` (``PERSON_MOVES``);
completing the descriptions selects it from any state but ``dismissed``; nothing else changes a
status, and anything else is ``InvalidTransition`` (409). A decision records the **basis** it was
made on (the analysis job and the description revision of the video), and a decision whose basis
is no longer the video's is stale (``effective_status``): the write side and the read model apply
that one rule, so a change of the video that races a decision still ends stale.

The **completion** of the descriptions, per platform, is ``domain.revival_completion``'s
(``complete_descriptions``); this module reads what the original description already has
(``parse_description``) and what the analysis found (``analysis_facts``), which both use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.analysis.chapters import MIN_CHAPTER_MS, validate_chapters
from domain.analysis.text import fold
from domain.base import InvalidTransition, aggregate, deterministic_id
from domain.platforms import CHAPTERS, DESCRIPTION, GEO_SUMMARY

ELIGIBLE, REVIEWING, SELECTED, DISMISSED, STALE = "eligible", "reviewing", "selected", "dismissed", "stale"
STATUSES = (ELIGIBLE, REVIEWING, SELECTED, DISMISSED, STALE)
# Decisions that a change of the video makes outdated: a review, and drafts.
OPEN = frozenset({REVIEWING, SELECTED})
# What a person may move a candidate to, from where.
PERSON_MOVES: dict[str, frozenset[str]] = {
    ELIGIBLE: frozenset({REVIEWING, DISMISSED}),
    REVIEWING: frozenset({ELIGIBLE, DISMISSED}),
    DISMISSED: frozenset({ELIGIBLE, REVIEWING}),
    SELECTED: frozenset({REVIEWING, DISMISSED}),
    STALE: frozenset({ELIGIBLE, REVIEWING, DISMISSED}),
}
# Where completing the descriptions may start from (then: selected).
SELECTABLE = frozenset({ELIGIBLE, REVIEWING, SELECTED, STALE})

Basis = tuple[UUID | None, int]  # (analysis job id, description revision) a decision was made on


def candidate_id(video_id: int) -> UUID:
    """The candidate of a video: the same id for the video's whole life."""
    return deterministic_id("revival-candidate", video_id)


def effective_status(recorded: str, decided_on: Basis, current: Basis) -> str:
    """The status as it stands: an open decision made on another analysis or description is stale."""
    if recorded in OPEN and (str(decided_on[0]), decided_on[1]) != (str(current[0]), current[1]):
        return STALE
    return recorded


def check_person_move(current: str, target: str) -> None:
    if target == current:
        return
    allowed = PERSON_MOVES.get(current, frozenset())
    if target not in allowed:
        why = {SELECTED: "only completing the descriptions selects a candidate",
               STALE: "a candidate becomes stale only when its video changes"}.get(
            target, f"a {current} candidate cannot be moved to {target}")
        raise InvalidTransition(f"{why}; from {current} a person may move it to {', '.join(sorted(allowed))}",
                                status=current, requested=target, allowed=sorted(allowed))


def check_selectable(current: str) -> None:
    if current not in SELECTABLE:
        raise InvalidTransition(f"the candidate is {current}: move it back to eligible or reviewing before "
                                "completing its descriptions", status=current, requested=SELECTED)


@aggregate("RevivalCandidate")
class Candidate(Aggregate):
    """The decisions about one video's candidate. The stream starts with the first decision."""

    class Opened(Aggregate.Created):
        """The first decision about a candidate opens its stream, saying which video, workspace and environment it
        belongs to, so that the candidate's history stands on its own.

        Read by no read model (the candidates read model has the row from the video's events); kept for audit and
        downstream consumers."""

        published_as = "CandidateOpened"
        video_id: int
        workspace_id: UUID
        environment: str
        media_id: int

    class StatusChanged(Aggregate.Event):
        """A person moved the candidate (to reviewing, dismissed, or back to eligible), with the analysis and the
        description revision the decision was made on, so that a later change of the video makes it stale.

        Read by the `revival_candidates` read model (the status)."""

        published_as = "CandidateStatusChanged"
        from_status: str
        to_status: str
        analysis_job_id: UUID | None
        description_revision: int

    class Selected(Aggregate.Event):
        """Descriptions were completed for the candidate (``DescriptionsCompleted``), which is now selected, on the
        analysis and description revision the drafts were made from.

        Read by the `revival_candidates` read model (the status)."""

        published_as = "CandidateSelected"
        completion_id: UUID
        from_status: str
        platforms: list[str]
        analysis_job_id: UUID | None
        description_revision: int

    @staticmethod
    def create_id(video_id: int) -> UUID:
        return candidate_id(video_id)

    @event(Opened)
    def __init__(self, video_id: int, workspace_id: UUID, environment: str, media_id: int):
        self.video_id = video_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.media_id = media_id
        self.status = ELIGIBLE
        self.decided_on: Basis = (None, 0)

    @classmethod
    def open(cls, *, video_id: int, workspace_id: UUID, environment: str, media_id: int) -> Candidate:
        return cls(video_id=video_id, workspace_id=workspace_id, environment=environment, media_id=media_id)

    def status_on(self, current: Basis) -> str:
        return effective_status(self.status, self.decided_on, current)

    def move(self, target: str, current: Basis) -> bool:
        """A person's move to ``target``; False (nothing recorded) when it is the status already."""
        status = self.status_on(current)
        check_person_move(status, target)
        if target == status:
            return False
        self._status_changed(from_status=status, to_status=target, analysis_job_id=current[0],
                             description_revision=current[1])
        return True

    @event(StatusChanged)
    def _status_changed(self, from_status: str, to_status: str, analysis_job_id: UUID | None,
                        description_revision: int) -> None:
        self.status = to_status
        self.decided_on = (analysis_job_id, description_revision)

    def select(self, completion_id: UUID, platforms: Sequence[str], current: Basis) -> bool:
        """Selected by a completion; False (nothing recorded) when it is selected already on this
        very analysis and description: the new drafts are recorded, the status does not change."""
        status = self.status_on(current)
        check_selectable(status)
        if status == SELECTED:
            return False
        self._selected(completion_id=completion_id, from_status=status, platforms=list(platforms),
                       analysis_job_id=current[0], description_revision=current[1])
        return True

    @event(Selected)
    def _selected(self, completion_id: UUID, from_status: str, platforms: list[str], analysis_job_id: UUID | None,
                  description_revision: int) -> None:
        self.status = SELECTED
        self.decided_on = (analysis_job_id, description_revision)


@aggregate("DescriptionCompletion")
class DescriptionCompletion(Aggregate):
    """One completion request's result: the drafts, as they were answered (and replayed)."""

    class Completed(Aggregate.Created):
        """Per-platform completed descriptions of a candidate, as they were answered: the drafts, their warnings, the
        credits charged and what they were made from; nothing is published anywhere.

        Read by no read model (a replay of the request is answered from its idempotency key); downstream consumers
        get the drafts."""

        published_as = "DescriptionsCompleted"
        completion_id: UUID
        workspace_id: UUID
        environment: str
        candidate_id: UUID
        video_id: int
        media_id: int
        article_id: int
        platforms: list[str]
        drafts: list[dict[str, Any]]
        warnings: list[str]
        videosite_experiment_id: UUID | None
        credits: int
        analysis_job_id: UUID | None
        description_revision: int

    @staticmethod
    def create_id(completion_id: UUID) -> UUID:
        return completion_id

    @event(Completed)
    def __init__(self, completion_id: UUID, workspace_id: UUID, environment: str, candidate_id: UUID, video_id: int,
                 media_id: int, article_id: int, platforms: list[str], drafts: list[dict[str, Any]],
                 warnings: list[str], videosite_experiment_id: UUID | None, credits: int, analysis_job_id: UUID | None,
                 description_revision: int):
        self.workspace_id = workspace_id
        self.environment = environment
        self.drafts = drafts


VIDEOSITE_PLATFORMS = ("videosite_long", "videosite_shorts")


@aggregate("VideositeExperiment")
class VideositeExperiment(Aggregate):
    """A supervised experiment on the video site, as a record only: the service never runs it,
    publishes nothing and changes nothing on any site."""

    class Drafted(Aggregate.Created):
        """Which descriptions would be compared on which video (the original against each completed video-site
        draft), status ``draft``: a record for a person to run, never sent anywhere by the service.

        Read by no read model; downstream consumers and audit."""

        published_as = "VideositeExperimentDrafted"
        experiment_id: UUID
        workspace_id: UUID
        environment: str
        candidate_id: UUID
        video_id: int
        completion_id: UUID
        variants: list[dict[str, Any]]
        status: str

    @staticmethod
    def create_id(experiment_id: UUID) -> UUID:
        return experiment_id

    @event(Drafted)
    def __init__(self, experiment_id: UUID, workspace_id: UUID, environment: str, candidate_id: UUID, video_id: int,
                 completion_id: UUID, variants: list[dict[str, Any]], status: str):
        self.workspace_id = workspace_id
        self.status = status

    @classmethod
    def draft(cls, *, completion_id: UUID, workspace_id: UUID, environment: str, candidate: UUID, video_id: int,
              platforms: Sequence[str]) -> VideositeExperiment | None:
        """The record comparing the original description with each requested video-site draft;
        None when no video-site platform was asked for (there is nothing to compare there)."""
        compared = [p for p in platforms if p in VIDEOSITE_PLATFORMS]
        if not compared:
            return None
        variants = [{"name": "control", "source": "original_description", "platform_id": None}]
        variants += [{"name": f"completed_{p}", "source": "draft", "platform_id": p} for p in compared]
        return cls(experiment_id=deterministic_id("videosite-experiment", completion_id), workspace_id=workspace_id,
                   environment=environment, candidate_id=candidate, video_id=video_id, completion_id=completion_id,
                   variants=variants, status="draft")


# ---------------------------------------------------------------- the original description

# A chapter line starts with a timestamp (0:00, 12:34, 1:02:03, optionally in brackets) and a separator.
_TIMESTAMP_LINE = re.compile(r"^\s*[\[(]?(?:\d{1,2}:)?\d{1,2}:[0-5]\d[\])]?(?:[\s\-–—:|.]|$)")
# Headings of a summary block, folded (accent-free, lower case): ours ("In short:", "En bref :") and
# the usual ones in the languages the analysis serves.
_SUMMARY_HEADINGS = frozenset({
    "in short", "en bref", "summary", "in summary", "resume", "en resume", "tl dr", "tldr", "key facts",
    "key takeaways", "takeaways", "points cles", "a retenir", "zusammenfassung", "resumen", "riassunto",
    "samenvatting", "resumo", "faits cles"})
MIN_CHAPTER_LINES = 2  # one timestamp line is a mention; two or more are chapters
THIN_DESCRIPTION_CHARS = 150  # fewer visible characters than a search snippet shows: a thin description
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: str | None) -> str:
    """NFC, line breaks as ``\\n``, tabs as spaces, no other control character, no trailing spaces,
    at most one blank line in a row."""
    text = unicodedata.normalize("NFC", text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = _CONTROLS.sub("", text)
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def is_chapter_line(line: str) -> bool:
    return bool(_TIMESTAMP_LINE.match(line))


def is_summary_heading(line: str) -> bool:
    """A heading line ("## Summary", "**Key takeaways**") or a line led by one and a colon ("In short: ...")."""
    bare = line.strip().lstrip("#*_>- ").strip()
    head = re.split(r"[:：]", bare, maxsplit=1)[0] if re.search(r"[:：]", bare) else bare
    return fold(head.strip("*_ ")) in _SUMMARY_HEADINGS


@dataclass(frozen=True, slots=True)
class ParsedDescription:
    """A description split into its prose, its chapter lines and its summary block."""

    prose: str
    chapter_lines: tuple[str, ...]
    summary_lines: tuple[str, ...]

    @property
    def presence(self) -> dict[str, bool]:
        return {DESCRIPTION: bool(self.prose.strip()), CHAPTERS: len(self.chapter_lines) >= MIN_CHAPTER_LINES,
                GEO_SUMMARY: bool(self.summary_lines)}


def parse_description(text: str | None) -> ParsedDescription:
    """Chapters are lines that start with a timestamp (two or more of them); a summary is a block of
    consecutive lines led by a summary heading (ours, "In short:", or a usual one), up to a blank
    line or a chapter line; the prose is everything else."""
    lines = clean_text(text).split("\n")
    prose: list[str] = []
    chapters: list[str] = []
    summary: list[str] = []
    in_summary = False
    for line in lines:
        if is_chapter_line(line):
            chapters.append(line.strip())
            in_summary = False
        elif in_summary and line.strip():
            summary.append(line.strip())
        elif not summary and is_summary_heading(line):
            summary.append(line.strip())
            in_summary = True
        else:
            in_summary = False
            prose.append(line)
    if len(chapters) < MIN_CHAPTER_LINES:  # a single timestamp line is part of the prose
        prose, chapters = [line for line in lines if line.strip() not in summary], []
    text_prose = re.sub(r"\n{3,}", "\n\n", "\n".join(prose)).strip()
    return ParsedDescription(text_prose, tuple(chapters), tuple(summary))


def visible_length(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


# ---------------------------------------------------------------- what the analysis found

SHORTEST_FOR_CHAPTERS_MS = 3 * MIN_CHAPTER_MS  # three chapters of at least 10 s


@dataclass(frozen=True, slots=True)
class AnalysisFacts:
    """What a Content Graph offers a description: facts to summarise and chapters to list."""

    claims: int
    answered: int
    chapter_problem: str | None  # None: the analysis' chapters satisfy the video site's rules

    @property
    def chapters_possible(self) -> bool:
        return self.chapter_problem is None


def analysis_facts(graph: dict[str, Any]) -> AnalysisFacts:
    duration_ms = int(graph.get("durationMs") or 0)
    chapters = graph.get("chapters") or []
    problem: str | None
    if duration_ms < SHORTEST_FOR_CHAPTERS_MS:
        problem = (f"the video is too short for chapters (three chapters of at least 10 s need 30 s; it lasts "
                   f"{duration_ms / 1000:.0f} s)")
    else:
        problems = validate_chapters(chapters, duration_ms)
        problem = f"the analysis' chapters break the video site's rules: {problems[0]}" if problems else None
    answered = sum(1 for intent in graph.get("searchIntents") or [] if intent.get("answered"))
    return AnalysisFacts(claims=len(graph.get("claims") or []), answered=answered, chapter_problem=problem)


# ---------------------------------------------------------------- score, eligibility, reasons

# The score (0-100) ranks the opportunity; four parts, each computed from one source:
PROSE_MISSING_POINTS, PROSE_THIN_POINTS = 10.0, 5.0  # the description has no text / a thin one
SUMMARY_MISSING_POINTS = 20.0  # the description has no summary for answer engines
CHAPTERS_MISSING_POINTS = 15.0  # no chapters, and the analysis has valid ones to add
CLAIM_POINTS, MAX_CLAIMS = 1.0, 18  # one per claim found, up to 18
ANSWERED_POINTS, MAX_ANSWERED = 3.0, 4  # three per search intent answered in the video, up to 4
LENGTH_POINTS_PER_MINUTE, MAX_LENGTH_POINTS = 1.5, 15.0  # longer videos have more to describe
AGE_POINTS_PER_YEAR, MAX_AGE_POINTS = 2.0, 10.0  # older videos have waited longer for a description


def description_points(presence: dict[str, bool], prose_chars: int) -> float:
    """What is missing from the description, apart from chapters (which depend on the video too)."""
    points = 0.0 if presence[DESCRIPTION] and prose_chars >= THIN_DESCRIPTION_CHARS else (
        PROSE_THIN_POINTS if presence[DESCRIPTION] else PROSE_MISSING_POINTS)
    return points + (0.0 if presence[GEO_SUMMARY] else SUMMARY_MISSING_POINTS)


def substance_points(facts: AnalysisFacts) -> float:
    return CLAIM_POINTS * min(facts.claims, MAX_CLAIMS) + ANSWERED_POINTS * min(facts.answered, MAX_ANSWERED)


def length_points(duration_ms: int) -> float:
    return round(min(MAX_LENGTH_POINTS, LENGTH_POINTS_PER_MINUTE * max(0, duration_ms) / 60_000), 2)


def age_points(age_days: float) -> float:
    """``age_days``: how old the video was when it was uploaded (its ``published_at`` to the upload)."""
    return round(min(MAX_AGE_POINTS, AGE_POINTS_PER_YEAR * max(0.0, age_days) / 365.25), 2)


def chapters_points(has_chapters: bool, chapters_possible: bool) -> float:
    return CHAPTERS_MISSING_POINTS if chapters_possible and not has_chapters else 0.0


def candidate_score(presence: dict[str, bool], prose_chars: int, facts: AnalysisFacts, duration_ms: int,
                    age_days: float) -> float:
    """The whole formula (docs/revival.md): the read model stores each part and adds them up."""
    total = (description_points(presence, prose_chars) + chapters_points(presence[CHAPTERS], facts.chapters_possible)
             + substance_points(facts) + length_points(duration_ms) + age_points(age_days))
    return round(min(100.0, total), 2)


def assess(presence: dict[str, bool], prose_chars: int, facts: AnalysisFacts) -> tuple[bool, list[str]]:
    """Whether completing would add anything (``eligible``) and why, in words a person reads."""
    reasons: list[str] = []
    addable = False
    if not presence[DESCRIPTION]:
        reasons.append("the description is empty: the article's introduction can stand in for it")
        addable = True
    elif prose_chars < THIN_DESCRIPTION_CHARS:
        reasons.append(f"the description is short ({prose_chars} visible characters)")
    if not presence[CHAPTERS]:
        if facts.chapters_possible:
            reasons.append("the description has no chapters")
            addable = True
        else:
            reasons.append(facts.chapter_problem or "no chapters can be made")
    if not presence[GEO_SUMMARY]:
        if facts.claims or facts.answered:
            reasons.append("the description has no summary for answer engines")
            addable = True
        else:
            reasons.append("the description has no summary, and the analysis found no fact to summarise")
    if facts.claims or facts.answered:
        reasons.append(f"the analysis found {facts.claims} claim{'s' * (facts.claims != 1)} and "
                       f"{facts.answered} answered question{'s' * (facts.answered != 1)}")
    if not addable:
        reasons.append("nothing to complete: the description already has what the analysis could add")
    return addable, reasons


def age_days(published_at: datetime, uploaded_at: datetime) -> float:
    """Days from publication to upload (0 when published after the upload, or at it)."""
    return max(0.0, (uploaded_at - published_at).total_seconds() / 86_400)

