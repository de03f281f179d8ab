"""Fixtures shared by the integration tests (the servers themselves come from tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def fast(settings):
    """Settings for worker tests: short leases, quick retries and polling."""
    return settings.model_copy(update={"worker_lease_s": 1.5, "job_retry_backoff_s": 0.1,
                                       "worker_poll_interval_s": 0.05})
