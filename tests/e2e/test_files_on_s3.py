"""The signed-URL downloads of ``tests/e2e/test_files.py`` (the suite of
``tests/support/download_contract.py``: whole, ranges, HEAD, conditional, the one 404, large files
streamed, clients that leave or read nothing, per-address limits), every test of it, on the S3
backend: the API streams ranged GETs from the test stack's SeaweedFS and answers exactly as from
the local disk."""

from __future__ import annotations

import pytest

from tests.support.download_contract import *  # noqa: F403 (the tests and their fixtures, run again here)
from tests.support.service import running_service
from tests.support.stack import BUILD_TIMEOUT, s3_env, s3_settings

pytestmark = BUILD_TIMEOUT
STORE_FIELDS = ("storage_backend", "s3_endpoint_url", "s3_bucket", "s3_access_key_id", "s3_secret_access_key",
                "media_cache_dir")


@pytest.fixture(scope="module")
async def service(object_store, template_db, tmp_path_factory):
    store = s3_settings(object_store, tmp_path_factory.mktemp("api-cache"))
    async with running_service(object_store, template_db, tmp_path_factory.mktemp("logs"),
                               processes=("relay", "projector"), apis=1, **s3_env(store),
                               VAEO_MEDIA_CACHE_DIR=store.media_cache_dir,
                               VAEO_STORAGE_DIR=str(tmp_path_factory.mktemp("unused-disk"))) as svc:
        svc.settings = svc.settings.model_copy(update={name: getattr(store, name) for name in STORE_FIELDS})
        yield svc
