"""compose.yaml, the deployment on several machines, checked as data (there is no Docker engine
here to run it): every service of ours runs a real ``vaeo`` command from the one image, every
VAEO_ variable is a real setting, no secret is written in the file, and two of each process kind
run, the API processes on one published port."""

import re
from pathlib import Path

import yaml

from infra.settings import Settings
from services.cli import PROCESSES, build_parser

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_TEXT = (ROOT / "compose.yaml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
SERVICES = COMPOSE["services"]
# The object store's settings, named in advance for the storage backend they select (with
# VAEO_MEDIA_CACHE_DIR); once infra/settings.py has them they are checked like every other.
STORAGE = {"VAEO_STORAGE_BACKEND", "VAEO_S3_ENDPOINT_URL", "VAEO_S3_BUCKET", "VAEO_S3_REGION",
           "VAEO_S3_ACCESS_KEY_ID", "VAEO_S3_SECRET_ACCESS_KEY", "VAEO_MEDIA_CACHE_DIR"}
SECRET = re.compile(r"SECRET|PASSWORD|API_KEY|TOKEN|ACCESS_KEY")
# A value taken from the environment: ${NAME:?message} (required) or ${NAME:-} (empty by default).
FROM_ENV = re.compile(r"^\$\{[A-Z][A-Z0-9_]*(:\?[^}]*|:-)\}$")


def _ours() -> dict[str, dict]:
    """The services run from our image (the processes of vaeo)."""
    return {name: s for name, s in SERVICES.items() if s.get("image") == "vaeo:local" and "entrypoint" not in s}


def _subcommands() -> set[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return set(action.choices)


def test_every_service_of_ours_runs_a_real_vaeo_command_from_the_one_image():
    ours = _ours()
    commands = {name: s["command"] for name, s in ours.items()}
    assert all(isinstance(c, list) and c[0] in _subcommands() for c in commands.values()), commands
    assert {c[0] for c in commands.values()} == {*PROCESSES, "migrate"}
    assert all(s["build"]["dockerfile"] == "infra/Dockerfile" for s in ours.values())
    assert COMPOSE_TEXT.count("dockerfile: infra/Dockerfile") == 1  # one build, shared by the anchor
    assert (ROOT / "infra" / "Dockerfile").is_file()
    # The processes wait for the migrations; the migrations wait for the servers when they run here.
    assert all(s["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
               for name, s in ours.items() if name != "migrate")


def test_every_vaeo_variable_is_a_setting_and_every_process_gets_the_same_configuration():
    fields = {f"VAEO_{name.upper()}" for name in Settings.model_fields}
    for name, service in SERVICES.items():
        for var in service.get("environment", {}):
            if var.startswith("VAEO_"):
                assert var in fields or var in STORAGE, f"{name}: {var} is not a setting of infra/settings.py"
    if any(f.startswith("VAEO_S3_") for f in fields):  # the storage settings exist: all of them, by these names
        assert STORAGE <= fields
    envs = [s["environment"] for s in _ours().values()]
    shared = {k: v for k, v in envs[0].items() if k.startswith("VAEO_")}
    assert all(shared.items() <= env.items() for env in envs)
    assert shared["VAEO_MODE"] == "production"
    assert shared["VAEO_STORAGE_BACKEND"] == "s3" and STORAGE <= set(shared)
    assert "${PG_HOST" in shared["VAEO_DATABASE_URL"] and "${KAFKA_HOST" in shared["VAEO_KAFKA_BOOTSTRAP"]


def test_no_secret_is_written_in_the_file():
    for name, service in SERVICES.items():
        for var, value in (service.get("environment") or {}).items():
            if SECRET.search(var):
                assert FROM_ENV.match(str(value)), f"{name}: {var} must come from the environment, not the file"
                if var in ("VAEO_SECRET_KEY", "POSTGRES_PASSWORD") or "S3" in var:
                    assert ":?" in value, f"{name}: {var} must be required, with no default"
    url = SERVICES["api"]["environment"]["VAEO_DATABASE_URL"]
    assert re.match(r"^postgresql://vaeo:\$\{PG_PASSWORD:\?[^}]*\}@", url), url
    assert not re.search(r"\b[0-9a-f]{64}\b", COMPOSE_TEXT), "a literal key in the file"
    assert "whsec_" not in COMPOSE_TEXT and "service_live_" not in COMPOSE_TEXT
    # Every variable compose fills in has a default or stops compose with a message when unset;
    # the required ones are exactly the secrets the header asks for.
    used = re.findall(r"(?<!\$)\$\{([A-Z0-9_]+)(:[-?][^}]*)?\}", COMPOSE_TEXT)
    assert used and all(rule for _, rule in used), [name for name, rule in used if not rule]
    required = {name for name, rule in used if rule.startswith(":?")}
    assert required == {"VAEO_SECRET_KEY", "PG_PASSWORD", "VAEO_S3_ACCESS_KEY_ID", "VAEO_S3_SECRET_ACCESS_KEY"}
    header = COMPOSE_TEXT.split("\nname:", 1)[0]
    assert all(name in header for name in required)


def test_two_of_each_process_kind_and_the_api_processes_share_one_published_port():
    for kind in ("api", "relay", "projector", "worker", "dispatcher"):
        assert SERVICES[kind]["deploy"]["replicas"] >= 2, kind
    api = SERVICES["api"]
    holder = SERVICES[api["network_mode"].removeprefix("service:")]
    assert holder["ports"] == ["${API_PORT:-8080}:8080"]
    assert api["environment"]["VAEO_API_PORT"] == "8080" and api["environment"]["VAEO_API_REUSE_PORT"] == "true"
    assert api["environment"]["VAEO_API_HOST"] == "0.0.0.0"
    assert "ports" not in api  # the replicas publish nothing of their own


def test_the_servers_and_the_object_store_are_on_the_data_profile():
    assert {n for n, s in SERVICES.items() if "data" in s.get("profiles", [])} == {
        "postgres", "kafka", "seaweedfs", "bucket"}
    assert all("app" in s["profiles"] for s in _ours().values())
    assert SERVICES["kafka"]["image"].startswith("apache/kafka:4")
    assert SERVICES["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert SERVICES["postgres"]["image"].startswith("postgres:")
    weed = SERVICES["seaweedfs"]
    assert weed["image"].startswith("chrislusf/seaweedfs:") and "weed server" in weed["command"][0]
    assert "-s3" in weed["command"][0].split()
    migrate = SERVICES["migrate"]["depends_on"]
    assert migrate["postgres"]["required"] is False and migrate["kafka"]["required"] is False
