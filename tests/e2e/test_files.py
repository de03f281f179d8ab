"""Signed file URLs over real HTTP: a real media is uploaded, the video record's ``source_url`` is
fetched without a key (whole, by ranges, HEAD, conditional), and every token that grants nothing
(tampered, expired, another workspace's key swapped in, a file deleted since, a path traversal,
an unknown token) answers the same 404 envelope.
"""

from __future__ import annotations

import pytest

from tests.support.download_contract import *  # noqa: F403 (the tests and their fixtures)
from tests.support.service import running_service


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory):
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"),
                               processes=("relay", "projector"), apis=1) as svc:
        yield svc
