"""The local stack's SeaweedFS, without starting it: what it needs (Go) and how it is started
(loopback only, the stack's ports, our credentials file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra import stack
from infra.settings import Settings


def test_without_go_the_stack_names_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(stack, "GO_CANDIDATES", ("/nonexistent/go",))
    with pytest.raises(stack.StackError) as caught:
        stack.go_tool()
    message = str(caught.value)
    assert "go.dev/dl" in message and "Go 1.26" in message and "Debian" in message


def test_weed_server_listens_on_loopback_on_the_stacks_ports(tmp_path: Path):
    settings = Settings(stack_dir=tmp_path, stack_instance="test", stack_s3_port=28333)
    argv = stack.seaweed_argv(settings, Path("/cache/weed"), tmp_path / "s3.json")
    assert argv[:2] == ["/cache/weed", "server"]
    assert "-ip=127.0.0.1" in argv and "-ip.bind=127.0.0.1" in argv
    ports = sorted(int(a.split("=")[1]) for a in argv if a.split("=")[0].endswith((".port", ".grpc")))
    assert ports == [28333, 28334, 28335, 28336, 28344, 28345, 28346, 28347]  # below the ephemeral range
    assert {"-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={tmp_path / 's3.json'}",
            "-master.telemetry=false"} <= set(argv)
    assert f"-dir={tmp_path / 'test' / 'seaweedfs' / 'data'}" in argv


def test_the_generated_credentials_stay_private_and_stable(tmp_path: Path):
    settings = Settings(stack_dir=tmp_path, stack_instance="dev")
    first = stack.seaweedfs_credentials(settings)
    assert first == stack.seaweedfs_credentials(settings) and len(first[1]) >= 40
    assert (tmp_path / "dev" / "seaweedfs" / "credentials.json").stat().st_mode & 0o077 == 0
    other = stack.seaweedfs_credentials(Settings(stack_dir=tmp_path, stack_instance="test"))
    assert other != first
