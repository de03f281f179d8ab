"""Speakers of a recognised talk from the voices of its segments: how many there are, and who says what.

Pure: each segment comes with its length and a voice embedding (``infra.voices``: a d-vector, 256
numbers whose cosine distance is small between two stretches of one voice and large between two
voices), or None when it has no audio worth hearing. The policy:

1. Segments of at least ``MIN_EMBED_MS`` are clustered (scikit-learn's agglomerative clustering,
   average linkage on cosine distance, merging while two groups are closer than
   ``DISTANCE_THRESHOLD``): the number of speakers is what the voices give, never a number asked
   for. At most ``MAX_CLUSTERED`` segments (the longest) are clustered, bounding its memory
   (quadratic in the count); the others are attributed like the short ones below.
2. A speaker is a group holding at least ``MIN_CLUSTER_MS`` and ``MIN_SHARE`` of the clustered
   speech; a smaller group (a cough, a laugh, a stretch of music, a briefly heard voice) joins the
   nearest speaker.
3. One speaker, and no names at all, when it cannot tell: under ``MIN_SEGMENTS`` segments or
   ``MIN_SPEECH_MS`` of clustered speech, fewer than two groups large enough, or groups large
   enough holding less than ``MIN_COVERAGE`` of the speech (the embeddings scatter: noise, or a
   voice the model does not separate). One speaker is said as no speaker tag, which the
   diarisation reads as one unnamed speaker: no turns are invented.
4. A shorter segment (at least ``MIN_ASSIGN_MS``: a "Good." or "Yes," answering the other speaker)
   goes to the nearest speaker when its voice is within ``DISTANCE_THRESHOLD`` of it, or nearer it
   than any other speaker by ``MIN_MARGIN`` (a short word's embedding is blurred, but still
   leans clearly towards its voice); otherwise, and for a segment with nothing to hear, the
   speaker before it (after it, at the start).

Names are ``Speaker 1``, ``Speaker 2``... in order of first appearance, like a caption's speaker tags.

The threshold was measured with the bundled encoder (docs/analysis.md, "Speakers from the
audio"): between sentences of one voice the distance is 0.07 (espeak-ng) to 0.27 on average (real
readers, at most 0.46), between two voices 0.57 (espeak-ng male and female) and 0.60 (two real
readers); 0.45 separates both. Two similar voices (two espeak-ng male voices: 0.28) are one speaker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DISTANCE_THRESHOLD = 0.45
MIN_EMBED_MS = 1000
MIN_ASSIGN_MS = 200
MIN_MARGIN = 0.15
MIN_SEGMENTS = 4
MIN_SPEECH_MS = 10_000
MIN_CLUSTER_MS = 4000
MIN_SHARE = 0.1
MIN_COVERAGE = 0.8
MAX_CLUSTERED = 2000


def _unit(vector: Any) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64).ravel()
    norm = np.linalg.norm(v)
    unit: np.ndarray = v / norm if norm > 0 else v
    return unit


def speakers_of(durations_ms: Sequence[int], embeddings: Sequence[Any]) -> list[str | None]:
    """Each segment's speaker (``Speaker N``), or None for every segment when there is one speaker
    or it cannot tell (see the module's text)."""
    n = len(durations_ms)
    vectors: list[Any] = [None if e is None else _unit(e) for e in embeddings]
    usable = [k for k in range(n) if vectors[k] is not None and np.isfinite(vectors[k]).all()
              and np.linalg.norm(vectors[k]) > 0]
    clustered = sorted((k for k in usable if durations_ms[k] >= MIN_EMBED_MS), key=lambda k: -durations_ms[k])
    clustered = sorted(clustered[:MAX_CLUSTERED])
    speech_ms = sum(durations_ms[k] for k in clustered)
    if len(clustered) < MIN_SEGMENTS or speech_ms < MIN_SPEECH_MS:
        return [None] * n
    from sklearn.cluster import AgglomerativeClustering

    labels = AgglomerativeClustering(n_clusters=None, distance_threshold=DISTANCE_THRESHOLD, metric="cosine",
                                     linkage="average").fit_predict(np.stack([vectors[k] for k in clustered]))
    held: dict[int, int] = {}
    for k, label in zip(clustered, labels, strict=True):
        held[int(label)] = held.get(int(label), 0) + durations_ms[k]
    kept = [label for label, ms in held.items() if ms >= max(MIN_CLUSTER_MS, MIN_SHARE * speech_ms)]
    if len(kept) < 2 or sum(held[label] for label in kept) < MIN_COVERAGE * speech_ms:
        return [None] * n
    centroids = np.stack([_unit(np.mean([vectors[k] for k, lab in zip(clustered, labels, strict=True)
                                         if lab == label], axis=0)) for label in kept])
    own = {k: kept.index(int(lab)) for k, lab in zip(clustered, labels, strict=True) if int(lab) in kept}
    chosen: list[int | None] = [None] * n
    for k in usable:
        if k in own:
            chosen[k] = own[k]
            continue
        distances = 1 - centroids @ vectors[k]
        nearest = int(np.argmin(distances))
        margin = float(np.partition(distances, 1)[1] - distances[nearest])
        if k in clustered or (durations_ms[k] >= MIN_ASSIGN_MS
                              and (distances[nearest] < DISTANCE_THRESHOLD or margin >= MIN_MARGIN)):
            chosen[k] = nearest
    for k in range(n):  # nothing to hear: the speaker before (after, at the start)
        if chosen[k] is None:
            chosen[k] = chosen[k - 1] if k > 0 else next((c for c in chosen if c is not None), 0)
    order: dict[int | None, str] = {}  # every speaker is known by now: None is not met
    for c in chosen:
        order.setdefault(c, f"Speaker {len(order) + 1}")
    return [order[c] for c in chosen]
