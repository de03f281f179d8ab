"""What a process loads decides its resident memory: the projector (every read model, no append)
never loads the write side's application and adapters, and no process on the local disk loads the
object store's client. Each check runs a fresh interpreter, since this process has loaded
everything already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]


def loaded_by(statements: str) -> set[str]:
    script = f"{statements}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True).stdout
    return set(orjson.loads(out.splitlines()[-1]))


def test_the_projector_loads_no_application_adapter_or_object_store_client():
    loaded = loaded_by("from services.processes.projector.runner import run_projector\nimport projections")
    heavy = {m for m in loaded if m.split(".")[0] in {"aiobotocore", "botocore", "cryptography"}
             or m.startswith(("services.application", "infra.media", "infra.wiring", "infra.webhook_http"))}
    assert heavy == set()


def test_the_local_storage_does_not_load_the_object_store_client():
    loaded = loaded_by("from infra.storage import storage_for\nfrom infra.settings import Settings\n"
                       "storage_for(Settings())")
    assert not any(m.split(".")[0] in {"aiobotocore", "botocore"} or m == "infra.storage_s3" for m in loaded)
