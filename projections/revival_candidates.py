"""The revival candidates read model: GET /production/revival/candidates.

One row per video (from its upload on); the row is a **candidate** once the video has a media, a
completed analysis and an article (``is_candidate``). Each event fills what it knows, computed by
``domain.revival``'s pure functions from that event alone:

- ``VideoUploaded``: title, description (and what it already has: prose, chapters, summary),
  thumbnail, publication date, duration; the description, length and age parts of the score;
- ``VideoGraphRecorded``: claims, answered intents, whether the analysis' chapters satisfy the video
  site's rules (and why not); the substance part of the score;
- ``VideoAnalyzed``: the analysis job and the article; an open decision (reviewing, selected) on
  the previous analysis becomes ``stale``;
- ``VideoDescriptionChanged``: the new description and its revision, likewise;
- ``CandidateStatusChanged`` and ``CandidateSelected``: the status a decision set, unless the
  decision was made on an analysis or description the video no longer has (then ``stale``: the
  rule of ``domain.revival.effective_status``, in SQL).

``score`` is the sum of the stored parts (a generated column), the chapters part being the only one
that needs two sources: missing from the description, and possible for the video. Every change is
guarded by the log position of the last event applied to the row (one workspace's events are in
one partition, in order), so a replay changes nothing; a rebuild equals the live model.
``search_text`` is the title and description folded (lower case, accents removed) for ``query``,
with a trigram index (migration 013 installs ``pg_trgm``), kept without a pending list so that a
search's time does not depend on when the table was last vacuumed.
"""

from __future__ import annotations

from datetime import datetime

from domain import revival
from domain.analysis.text import fold
from domain.platforms import CHAPTERS, DESCRIPTION, GEO_SUMMARY
from projections.base import Projection, Statement

_OPEN = ", ".join(f"'{s}'" for s in sorted(revival.OPEN))

projection = Projection(
    name="revival_candidates",
    ddl=[
        f"""CREATE TABLE IF NOT EXISTS revival_candidates (
            video_id             integer PRIMARY KEY,
            video_stream_id      uuid NOT NULL UNIQUE,
            candidate_id         uuid NOT NULL UNIQUE,
            workspace_id         uuid NOT NULL,
            environment          text NOT NULL,
            media_id             integer,
            title                text NOT NULL,
            description          text NOT NULL,
            title_folded         text NOT NULL,
            description_folded   text NOT NULL,
            search_text          text GENERATED ALWAYS AS (title_folded || E'\n' || description_folded) STORED,
            thumbnail_key        text,
            published_at         timestamptz NOT NULL,
            duration_ms          integer NOT NULL,
            has_prose            boolean NOT NULL,
            prose_chars          integer NOT NULL,
            has_chapters         boolean NOT NULL,
            has_summary          boolean NOT NULL,
            description_revision integer NOT NULL DEFAULT 0,
            claims               integer NOT NULL DEFAULT 0,
            answered             integer NOT NULL DEFAULT 0,
            chapters_possible    boolean NOT NULL DEFAULT false,
            chapter_problem      text,
            analyzed             boolean NOT NULL DEFAULT false,
            analysis_job_id      uuid,
            article_id           integer,
            description_points   double precision NOT NULL,
            substance_points     double precision NOT NULL DEFAULT 0,
            length_points        double precision NOT NULL,
            age_points           double precision NOT NULL,
            score                double precision GENERATED ALWAYS AS (LEAST(100, description_points
                                     + substance_points + length_points + age_points
                                     + CASE WHEN chapters_possible AND NOT has_chapters
                                            THEN {revival.CHAPTERS_MISSING_POINTS} ELSE 0 END)) STORED,
            is_candidate         boolean GENERATED ALWAYS AS (media_id IS NOT NULL AND analyzed
                                     AND article_id IS NOT NULL) STORED,
            status               text NOT NULL DEFAULT 'eligible',
            decided_job_id       uuid,
            decided_revision     integer,
            updated_at           timestamptz NOT NULL,
            position             bigint NOT NULL
        )""",
        """CREATE INDEX IF NOT EXISTS revival_candidates_by_score
             ON revival_candidates (workspace_id, environment, score DESC, video_id) WHERE is_candidate""",
        # fastupdate off: a search never scans a pending list of recent rows (which can hold thousands
        # after a rebuild, until a vacuum), at the price of updating the index with each row.
        """CREATE INDEX IF NOT EXISTS revival_candidates_search
             ON revival_candidates USING gin (search_text gin_trgm_ops) WITH (fastupdate = off)""",
    ],
    tables=["revival_candidates"],
)


def folded(text: str | None) -> str:
    """What ``query`` is matched against: the title and the description folded (``fold``: lower
    case, accents and punctuation removed), as the query is; a line break between the two, which no
    folded query holds, so that no match spans them."""
    return fold(text or "")


def _description_columns(description: str | None) -> tuple:
    parsed = revival.parse_description(description)
    presence = parsed.presence
    prose_chars = revival.visible_length(parsed.prose)
    return (presence[DESCRIPTION], prose_chars, presence[CHAPTERS], presence[GEO_SUMMARY],
            revival.description_points(presence, prose_chars))


@projection.handles("VideoUploaded")
def _uploaded(ev) -> list[Statement]:
    d = ev.data
    published = datetime.fromisoformat(d["published_at"]) if d.get("published_at") else ev.recorded_at
    age = revival.age_days(published, ev.recorded_at)
    return [("""INSERT INTO revival_candidates (video_id, video_stream_id, candidate_id, workspace_id, environment,
                    media_id, title, description, title_folded, description_folded, thumbnail_key, published_at,
                    duration_ms, has_prose, prose_chars, has_chapters, has_summary, description_points,
                    length_points, age_points, updated_at, position)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                        $21, $22)
                ON CONFLICT (video_id) DO NOTHING""",
             (d["video_id"], ev.stream_id, revival.candidate_id(d["video_id"]), ev.workspace_id, d["environment"],
              d.get("media_id"), d["name"], d.get("description") or "", folded(d["name"]), folded(d.get("description")),
              d.get("thumbnail_key"), published, d["duration_ms"], *_description_columns(d.get("description")),
              revival.length_points(d["duration_ms"]), revival.age_points(age), ev.recorded_at, ev.position))]


@projection.handles("VideoGraphRecorded")
def _graph(ev) -> list[Statement]:
    facts = revival.analysis_facts(ev.data["graph"])
    return [("""UPDATE revival_candidates SET claims = $2, answered = $3, chapters_possible = $4, chapter_problem = $5,
                    substance_points = $6, updated_at = $7, position = $8
                 WHERE video_stream_id = $1 AND position < $8""",
             (ev.stream_id, facts.claims, facts.answered, facts.chapters_possible, facts.chapter_problem,
              revival.substance_points(facts), ev.recorded_at, ev.position))]


@projection.handles("VideoAnalyzed")
def _analyzed(ev) -> list[Statement]:
    return [(f"""UPDATE revival_candidates SET analyzed = true, analysis_job_id = $2,
                     article_id = COALESCE($3, article_id),
                     status = CASE WHEN status IN ({_OPEN}) THEN 'stale' ELSE status END,
                     updated_at = $4, position = $5
                  WHERE video_stream_id = $1 AND position < $5""",
             (ev.stream_id, ev.data["job_id"], ev.data.get("article_id"), ev.recorded_at, ev.position))]


@projection.handles("VideoDescriptionChanged")
def _description_changed(ev) -> list[Statement]:
    d = ev.data
    return [(f"""UPDATE revival_candidates SET description = $2, description_folded = $3, has_prose = $4,
                     prose_chars = $5, has_chapters = $6, has_summary = $7, description_points = $8,
                     description_revision = $9,
                     status = CASE WHEN status IN ({_OPEN}) THEN 'stale' ELSE status END,
                     updated_at = $10, position = $11
                  WHERE video_stream_id = $1 AND position < $11""",
             (ev.stream_id, d.get("description") or "", folded(d.get("description")),
              *_description_columns(d.get("description")), d["revision"], ev.recorded_at, ev.position))]


def _decided(ev, to_status: str) -> list[Statement]:
    d = ev.data
    return [(f"""UPDATE revival_candidates
                    SET status = CASE WHEN $2 IN ({_OPEN}) AND (analysis_job_id IS DISTINCT FROM $3::uuid
                                                               OR description_revision <> $4)
                                      THEN 'stale' ELSE $2 END,
                        decided_job_id = $3::uuid, decided_revision = $4, updated_at = $5, position = $6
                  WHERE candidate_id = $1 AND position < $6""",
             (ev.stream_id, to_status, d.get("analysis_job_id"), d["description_revision"], ev.recorded_at,
              ev.position))]


@projection.handles("CandidateStatusChanged")
def _status_changed(ev) -> list[Statement]:
    return _decided(ev, ev.data["to_status"])


@projection.handles("CandidateSelected")
def _selected(ev) -> list[Statement]:
    return _decided(ev, revival.SELECTED)
