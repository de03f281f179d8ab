"""Prices: the one policy that says what each operation costs, in credits.

Every price is a pure function of what the service measured or will really process (a video's
measured duration, an article's words, the clips asked for), never of what a client declared.
The command that queues the work charges the price in the same append as the job, and the
append that ends the job failed or cancelled refunds it (``services.commands.append_job``).
Sandbox keys are never charged. The table of prices is in docs/api.md ("Credits and prices").
"""

from __future__ import annotations

import math

PREMIUM_FACTOR = 2  # the provider-written (premium) article costs twice the offline one


def started_minutes(duration_ms: int) -> int:
    """Whole minutes, any started minute counted, at least one."""
    return max(1, math.ceil(duration_ms / 60_000))


def analysis_price(duration_ms: int, quality_profile: str = "standard") -> int:
    """One analysis: one credit per started minute of the measured duration, doubled for premium."""
    return started_minutes(duration_ms) * (PREMIUM_FACTOR if quality_profile == "premium" else 1)


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
