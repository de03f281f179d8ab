"""Prices: the one policy that says what each operation costs, in credits.

Every price is a pure function of what the service measured or will really process (a video's
measured duration, an article's words, the clips asked for), never of what a client declared.
The command that queues the work charges the price in the same append as the job, and the
append that ends the job failed or cancelled refunds it (``services.application.jobs.append_job``).
Sandbox keys are never charged. The table of prices is in docs/api.md ("Credits and prices").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

PREMIUM_FACTOR = 2  # the provider-written (premium) article costs twice the offline one


def started_minutes(duration_ms: int) -> int:
    """Whole minutes, any started minute counted, at least one."""
    return max(1, math.ceil(duration_ms / 60_000))


def analysis_price(duration_ms: int, quality_profile: str = "standard", speech_ms: int = 0,
                   vision_ms: int = 0) -> int:
    """One analysis: one credit per started minute of the measured duration, doubled for premium,
    plus the speech recognition of ``speech_ms`` of audio when the video has no transcript, plus the
    behavioural analysis of ``vision_ms`` of picture (``analysis_mode=behavioral``)."""
    return (started_minutes(duration_ms) * (PREMIUM_FACTOR if quality_profile == "premium" else 1)
            + speech_price(speech_ms) + vision_price(vision_ms))


# The behavioural analysis (analysis_mode=behavioral) samples and sees the frames of the video up to
# its bound (``vision_max_duration_s``): priced per started minute of picture seen.
VISION_CREDITS_PER_MINUTE = 1


def vision_ms(duration_ms: int, max_duration_ms: int, has_picture: bool) -> int:
    """The picture a behavioural analysis sees: the measured duration, bounded; none without a picture."""
    return max(0, min(duration_ms, max_duration_ms)) if has_picture else 0


def vision_price(picture_ms: int) -> int:
    """Seeing ``picture_ms`` of video: one credit per started minute; none without a picture."""
    return started_minutes(picture_ms) * VISION_CREDITS_PER_MINUTE if picture_ms > 0 else 0


# Speech recognition (a video without captions): the audio is decoded and recognised up to the
# speech bound (``asr_max_duration_s``), so the price follows the minutes decoded, not the video's.
SPEECH_CREDITS_PER_MINUTE = 1


def speech_ms(duration_ms: int, max_duration_ms: int) -> int:
    """The audio a recognition decodes: the measured duration, bounded."""
    return max(0, min(duration_ms, max_duration_ms))


def speech_price(audio_ms: int) -> int:
    """Recognising ``audio_ms`` of audio: one credit per started minute; none without audio."""
    return started_minutes(audio_ms) * SPEECH_CREDITS_PER_MINUTE if audio_ms > 0 else 0


# Clips. A simple clip is a re-encode of the range: priced like an analysis of that range. A template
# render also reframes, burns captions and makes a thumbnail: twice that, per clip. Detection reads
# the whole article's video (transcript and content graph), not its frames: one credit per started
# ten minutes of the video.
RENDER_FACTOR = 2
DETECTION_MINUTES_PER_CREDIT = 10


def clip_price(duration_ms: int) -> int:
    """A simple clip (POST /videos/{id}/clips): one credit per started minute of the range."""
    return started_minutes(duration_ms)


def render_clip_price(duration_ms: int) -> int:
    """One clip rendered with a template: two credits per started minute of the clip."""
    return started_minutes(duration_ms) * RENDER_FACTOR


def detection_price(video_duration_ms: int) -> int:
    """A clip detection: one credit per started ten minutes of the article's video."""
    return max(1, math.ceil(started_minutes(video_duration_ms) / DETECTION_MINUTES_PER_CREDIT))
def description_price(platforms: int) -> int:
    """One completion of a candidate's descriptions: one credit per platform drafted (each draft
    is built, measured and fitted on its own). A replay of the same request is not charged again."""
    return max(1, platforms)
# ------------------------------------------------------------------ articles: translation, regeneration

TRANSLATION_WORDS_PER_CREDIT = 1000  # a provider's cost follows the words it reads and writes
REGENERATION_MINUTES_PER_CREDIT = 10  # rewriting re-reads the transcript, not the media: a tenth of an analysis
# Plans whose subscription includes compute-billed work (regeneration): their workspaces are not
# charged for it. Every other plan pays it from its credits; sandbox keys never pay.
PLANS_WITH_COMPUTE_INCLUDED = frozenset({"enterprise"})


def translation_price(words: int) -> int:
    """One translation: one credit per started thousand words of the structured article (title,
    introduction, sections, key facts, FAQ, conclusion), counted by the service, at least one."""
    return max(1, math.ceil(max(0, words) / TRANSLATION_WORDS_PER_CREDIT))


def regeneration_price(duration_ms: int, engine: str = "offline") -> int:
    """One regeneration: one credit per started ten minutes of the video's measured duration (the
    transcript analysed again), at least one; twice that when the provider writes it (premium)."""
    price = max(1, math.ceil(duration_ms / (REGENERATION_MINUTES_PER_CREDIT * 60_000)))
    return price * (PREMIUM_FACTOR if engine == "provider" else 1)


def compute_billing_enabled(plan: str, environment: str) -> bool:
    """Whether compute-billed operations (regeneration) charge credits: never for sandbox keys,
    not on a plan that includes them (``PLANS_WITH_COMPUTE_INCLUDED``), on every other plan."""
    return environment != "sandbox" and plan not in PLANS_WITH_COMPUTE_INCLUDED


# ------------------------------------------------------------------ sandbox: free, so bounded by size


@dataclass(frozen=True, slots=True)
class SandboxAllowance:
    """What a workspace's sandbox keys may queue in one UTC ``day``, all free: ``jobs`` in number,
    ``clip_ms`` of clips cut or rendered, ``decoded_ms`` of media decoded by analyses; and no clip
    longer than ``clip_max_ms``. A count alone does not bound the work: two renders of 50 clips of
    five minutes are two jobs and hours of a worker's time."""

    day: date
    jobs: int
    clip_ms: int
    decoded_ms: int
    clip_max_ms: int


@dataclass(frozen=True, slots=True)
class MediaWork:
    """What one job will make a worker process: milliseconds of clips it cuts or renders and of
    media it decodes (an analysis reads its whole video). Detection, translation and regeneration
    read text only."""

    clip_ms: int = 0
    decoded_ms: int = 0
