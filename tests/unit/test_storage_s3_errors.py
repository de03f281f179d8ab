"""How the S3 backend names what the store answered (``infra.storage_s3._classify``): a missing or
replaced object is ``FileNotFoundError``, an outage, a 5xx, throttling or refused credentials are
``StorageUnavailable`` (the API's 503), anything else a ``StorageError``; the store's own message,
its address and the request never reach the error."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError

from infra.storage import StorageError, StorageUnavailable
from infra.storage_s3 import _classify

ENDPOINT = "http://10.1.2.3:8333"


def client_error(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"at {ENDPOINT} secret-ish detail"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "GetObject")


@pytest.mark.parametrize(("error", "kind"), [
    (client_error("NoSuchKey", 404), FileNotFoundError),
    (client_error("404", 404), FileNotFoundError),
    (client_error("PreconditionFailed", 412), FileNotFoundError),
    (client_error("InternalError", 500), StorageUnavailable),
    (client_error("ServiceUnavailable", 503), StorageUnavailable),
    (client_error("SlowDown", 503), StorageUnavailable),
    (client_error("Throttling", 400), StorageUnavailable),
    (client_error("AccessDenied", 403), StorageUnavailable),
    (client_error("SignatureDoesNotMatch", 403), StorageUnavailable),
    (client_error("InvalidArgument", 400), StorageError),
    (EndpointConnectionError(endpoint_url=ENDPOINT), StorageUnavailable),
    (ConnectTimeoutError(endpoint_url=ENDPOINT), StorageUnavailable),
    (ConnectionResetError("reset by 10.1.2.3"), StorageUnavailable),
    (TimeoutError(), StorageUnavailable),
])
def test_each_answer_of_the_store_is_named_without_its_details(error, kind):
    named = _classify(error, "videos/w/1/source.mp4")
    assert type(named) is kind
    assert "10.1.2.3" not in str(named) and "secret-ish" not in str(named)
    if kind is not FileNotFoundError:
        assert isinstance(named, StorageError)
