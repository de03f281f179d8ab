"""compose.yaml runs one service per process of ours, all from the one image."""

from pathlib import Path

from services.cli import PROCESSES

COMPOSE = (Path(__file__).resolve().parents[2] / "compose.yaml").read_text()


def test_every_process_of_vaeo_up_has_a_compose_service_built_from_the_one_image():
    for name in PROCESSES:
        assert f'command: ["{name}"]' in COMPOSE, name
    assert COMPOSE.count("dockerfile: infra/Dockerfile") == 1  # one build, shared by the anchor
    assert "image: apache/kafka:4" in COMPOSE and "KAFKA_PROCESS_ROLES: broker,controller" in COMPOSE
    assert "image: postgres:" in COMPOSE
