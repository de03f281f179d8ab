"""The one settings object of the service (prefix ``VAEO_``).

Nothing else in the code base reads ``os.environ``: processes build a ``Settings`` at start and
pass it down.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from domain.pricing import SandboxAllowance


def wall_clock() -> datetime:
    """The machine's clock: the one place that reads it. Use ``Settings.now`` (which can be fixed or
    shifted) wherever settings are at hand; this is the default of adapters built without them."""
    return datetime.now(UTC)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VAEO_", extra="ignore")

    # PostgreSQL DSN; empty means "the local stack's server" (see stack_* below).
    database_url: str = ""
    # Kafka bootstrap servers; empty means "the local stack's broker".
    kafka_bootstrap: str = ""

    # Local stack: instance name (separates the dev stack from the test stack), ports, state dir.
    stack_instance: str = "dev"
    # Directory holding PostgreSQL data, Kafka storage, pid files and logs of the local stack.
    stack_dir: Path = Path("/var/tmp/vaeo")
    # Port of the private PostgreSQL server of the local stack. Below the kernel's ephemeral range
    # (32768-60999 by default): a port in it may be held by any outgoing connection when the server
    # starts again (a test that restarts PostgreSQL found 55434 taken so).
    stack_pg_port: int = 25432
    # Client port of the local Kafka broker (the controller listens on the next port).
    stack_kafka_port: int = 19092
    # Heap of the local Kafka broker in MB (512 at most: it shares a small machine with everything else).
    stack_kafka_heap_mb: int = 512
    # Where the Kafka jars resolved by Maven are cached between runs.
    kafka_jar_cache: Path = Path.home() / ".cache" / "vaeo" / "kafka"

    # Topic carrying every domain event (public contract, see docs/events.md).
    events_topic: str = "vaeo.events.v1"
    # Topic carrying API call telemetry (not domain events).
    telemetry_topic: str = "vaeo.telemetry.v1"
    # Partition count used when the events topic is created.
    events_partitions: int = 6
    # Prefix of the consumer groups of the projections (group = prefix + projection name).
    consumer_group_prefix: str = "vaeo.projection."

    # Relay: events read from the table per batch.
    relay_batch_size: int = 2000
    # Relay: polling interval when no NOTIFY arrives (fallback), seconds.
    relay_poll_interval_s: float = 1.0
    # Relay: how often a standby relay tries the advisory lock the active one holds, seconds. The
    # lock is free as soon as the active relay's session ends (a kill -9 closes its socket): the
    # standby takes over within this interval plus its own start (docs/operations.md).
    relay_standby_poll_s: float = 0.25
    # Relay: after catching up, the next fetch of unhurried appends only (the assistant's
    # conversation turns) waits this long after the last one, to send them with others, ms.
    relay_unhurried_ms: float = 50.0
    # Event store: send NOTIFY after the append commits (outside the append transaction).
    notify_on_append: bool = True

    # Projector: maximum records fetched per poll.
    projector_max_records: int = 2000
    # Projector: longest time tracking over events a projection ignores stays unstored, seconds.
    projector_idle_flush_s: float = 1.0
    # Rebuild: events applied per transaction (bigger is faster, up to memory).
    rebuild_batch_records: int = 10000
    # Projector: attempts of a failing batch before the projection stops and reports.
    projector_max_attempts: int = 5
    # Projector: first backoff between attempts of a failing batch, seconds (doubles).
    projector_retry_backoff_s: float = 0.2
    # Read-your-writes: longest wait for a projection to reach a position, seconds.
    read_your_writes_timeout_s: float = 2.0

    # Workers: lease length of a claimed job, seconds; heartbeats renew it at a third of this.
    worker_lease_s: float = 30.0
    # Workers: idle polling interval when no job is claimable, seconds.
    worker_poll_interval_s: float = 0.5
    # Workers: attempts before a job fails for good.
    job_max_attempts: int = 3
    # Workers: first retry delay after a transient failure or lost lease, seconds (doubles).
    job_retry_backoff_s: float = 2.0
    # Workers: concurrent jobs per worker process.
    worker_concurrency: int = 2
    # Workers: a job with items that has held its slot this long gives it up at its next item
    # boundary when another workspace's job waits for one, then waits its turn (seconds).
    worker_time_slice_s: float = Field(default=2.0, ge=0)

    # Key for AES-GCM encryption of recoverable secrets: 64 hex chars (32 bytes). Empty in dev
    # means a key is generated once into the stack dir; production must set it.
    secret_key: str = ""
    # HTTP API bind address and port.
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    # API: listen with SO_REUSEPORT, so that several API processes share the port and the kernel
    # spreads connections across them. ``vaeo up --api N`` (N > 1) sets it; off, a second process
    # on a taken port fails with "address in use" instead of silently taking half the traffic.
    api_reuse_port: bool = False
    # HTTP API: largest request body accepted, bytes; a larger one is answered 413.
    api_max_body_bytes: int = 1_048_576
    # HTTP API: how often each API process checks that Kafka answers (writes get 503 when not), seconds.
    api_kafka_check_interval_s: float = 2.0
    # HTTP API: telemetry records buffered per process while Kafka is slow; beyond this they are dropped.
    api_telemetry_buffer: int = 10_000
    # HTTP API: connections of each API process's PostgreSQL pool.
    api_pool_size: int = 20
    # HTTP API: concurrent commands of one API process share commits (EventStore group commit).
    api_group_commit: bool = True
    # HTTP API: integer ids (medias, videos) taken from their sequence this many at a time.
    api_id_block: int = 32
    # HTTP API: longest wait for a JSON body to arrive whole, seconds; a stalled body is answered 408.
    api_body_timeout_s: float = 30.0
    # HTTP API: longest silence inside an upload's body (no byte arrives), seconds; then 408.
    api_upload_idle_timeout_s: float = 30.0
    # HTTP API: least average rate of an upload once its first minute has passed, bytes per second
    # (a body trickled to hold a connection and a staging file is answered 408).
    api_upload_min_rate_bytes_s: int = 16_384
    # HTTP API: staging files older than this (an upload whose process died) are deleted, seconds.
    api_staging_max_age_s: float = 6 * 3600.0
    # HTTP API: a Server-Sent Events stream with nothing to send writes a comment line this often,
    # seconds, so that proxies and clients do not take the quiet connection for a dead one.
    api_stream_keepalive_s: float = 15.0
    # HTTP API: longest time a description completion may take to compute its drafts, seconds; then
    # 503 completion_timeout and nothing is written (ordinary completions take milliseconds).
    api_completion_timeout_s: float = Field(default=5.0, gt=0)
    # Idempotency keys: how long a request's claim on its key holds, seconds; a process that died in
    # flight leaves its key answering 409 idempotency_key_in_use at most this long.
    idempotency_claim_s: float = Field(default=60.0, gt=0)
    # Idempotency keys: how long a key and its first answer are kept, seconds (at least 24 h), then purged.
    idempotency_retention_s: float = Field(default=86400.0, ge=86400.0)
    # Sandbox: jobs a workspace's sandbox keys may queue per UTC day (sandbox work is free; 429 beyond).
    sandbox_daily_jobs: int = 50
    # Sandbox: seconds of clips (cuts and template renders) a workspace's sandbox keys may queue per UTC day.
    sandbox_daily_clip_seconds: int = Field(default=1800, ge=0)
    # Sandbox: seconds of media its sandbox analyses may decode per UTC day (each analysis: its video's duration).
    sandbox_daily_decoded_seconds: int = Field(default=7200, ge=0)
    # Sandbox: longest clip a sandbox key may cut or render, seconds (production keys: 300 for a render).
    sandbox_clip_max_s: int = Field(default=60, ge=1)
    # Webhooks: delay before each attempt, seconds (the first is the first attempt); about a day in all.
    webhook_retry_schedule_s: list[float] = [0, 5, 300, 1800, 7200, 18000, 36000, 36000]
    # Webhooks: jitter of each retry delay, as a fraction of it (+-).
    webhook_retry_jitter: float = 0.1
    # Webhooks: least delay after a timeout or a 429, seconds.
    webhook_retry_floor_s: float = 1.0
    # Webhooks: longest Retry-After honoured (a longer one is clamped to this), seconds.
    webhook_retry_after_max_s: float = 3600.0
    # Webhooks: total time of one attempt (connect, send, answer), seconds; the interface's bound is 10.
    webhook_timeout_s: float = 10.0
    # Webhooks: bytes of a receiver's answer read at most.
    webhook_max_response_bytes: int = 65536
    # Webhooks: names and CIDRs allowed despite the destination guard, comma-separated (tests only; off by
    # default, ignored for production keys in production mode).
    webhook_test_allow: str = ""
    # Webhooks: how long a job-notification secret stays valid after a rotation replaced it, seconds
    # (deliveries carry both signatures meanwhile).
    job_secret_grace_s: float = 86400.0
    # Webhooks: an extra CA file (PEM) the dispatcher trusts besides the system store (test receivers).
    webhook_extra_ca_file: str = ""
    # Dispatcher: lease of a claimed delivery attempt, seconds (an expired lease is claimed again).
    dispatcher_lease_s: float = 30.0
    # Dispatcher: concurrent attempts per dispatcher process.
    dispatcher_concurrency: int = 200
    # Dispatcher: polling interval of the sender when no NOTIFY arrives, seconds.
    dispatcher_poll_interval_s: float = 0.5
    # Dispatcher: Kafka consumer group of the dispatchers' intake (offsets are kept in PostgreSQL).
    dispatcher_group: str = "vaeo.dispatcher"
    # Media analysis: ffmpeg scene score (0-1) above which a frame is a hard cut.
    media_scene_threshold: float = 0.3
    # Media analysis: level under which audio counts as silence, dBFS.
    media_silence_db: float = -35.0
    # Media analysis: shortest silence reported, seconds.
    media_silence_min_s: float = 0.5
    # Media passes of a job (scene changes, audio, speech finding, subtitles): one ffmpeg run over a video may
    # take this many seconds plus media_timeout_per_second per second of the video's priced duration.
    media_timeout_base_s: float = Field(default=60.0, gt=0)
    # Media passes: seconds a run may take per second of priced media (10 minutes of 720p decode in 20 s on 2 cores).
    media_timeout_per_second: float = Field(default=2.0, gt=0)
    # Analysis: CPU seconds the content-graph step may use (in its own process) before the job fails.
    analysis_cpu_limit_s: int = Field(default=300, ge=1)
    # Clips: ffmpeg processes one worker runs at once for clips (cuts, renders, thumbnails); more wait their turn.
    worker_ffmpeg_processes: int = Field(default=2, ge=1)
    # Clips: an ffmpeg run of a clip may take this many seconds plus clip_timeout_per_second per second of clip.
    clip_timeout_base_s: float = Field(default=60.0, gt=0)
    # Clips: seconds an ffmpeg run may take per second of clip (a 9:16 render runs faster than real time on 2 cores).
    clip_timeout_per_second: float = Field(default=10.0, gt=0)
    # Clips (tests only): clip ids whose first render attempt fails on purpose, comma-separated; ignored in
    # production mode.
    clip_fail_once: str = ""
    # Storage of uploaded media: a local directory; empty means <stack_dir>/<stack_instance>/storage.
    storage_dir: str = ""
    # Where every stored file lives: "local" (the directory above) or "s3" (an S3-compatible object store,
    # shared by several machines; docs/operations.md "Object store").
    storage_backend: str = Field(default="local", pattern="^(local|s3)$")
    # Object store: endpoint URL (scheme, host, port); empty with "s3" = the local stack's SeaweedFS.
    s3_endpoint_url: str = ""
    # Object store: the bucket holding every stored file (created when absent).
    s3_bucket: str = "vaeo"
    # Object store: region name signed into requests.
    s3_region: str = "us-east-1"
    # Object store: access key id; empty with the local stack's SeaweedFS = the key the stack generated.
    s3_access_key_id: str = ""
    # Object store: secret access key; a secret, never logged nor stored; empty as above.
    s3_secret_access_key: SecretStr = SecretStr("")
    # Object store: longest wait for one request (connect, then each read), seconds.
    s3_timeout_s: float = Field(default=30.0, gt=0)
    # Object store: attempts of one request at most; connection errors, 5xx and throttling are retried (with backoff).
    s3_max_attempts: int = Field(default=3, ge=1)
    # Object store: size of each part of a multipart upload, bytes (the memory one upload holds; S3's least is 5 MiB).
    s3_part_bytes: int = Field(default=8 * 1024 ** 2, ge=5 * 1024 ** 2)
    # Object store: local read cache of objects (ffmpeg reads local files); empty = <instance dir>/media-cache.
    media_cache_dir: str = ""
    # Object store: bytes the local read cache keeps at most (least recently used files are evicted first).
    media_cache_max_bytes: int = Field(default=20 * 1024 ** 3, ge=0)
    # Object store: a cached file handed out this recently, or open by any process, is never evicted, seconds.
    media_cache_in_use_s: float = Field(default=600.0, ge=0)
    # Local stack: S3 port of its SeaweedFS (master, volume and filer take the next ports; their gRPC ports +11..+14).
    stack_s3_port: int = 18333
    # Local stack: where the SeaweedFS binary built from the Go module proxy is cached between runs.
    seaweedfs_cache: Path = Path.home() / ".cache" / "vaeo" / "seaweedfs"
    # Test stack: where llama.cpp's server (built from source) and its small model are cached between runs.
    llama_cache: Path = Path.home() / ".cache" / "vaeo" / "llama"
    # Test stack: loopback port of its language-model server (tests only; `vaeo up` never starts one).
    stack_llm_port: int = 18360
    # Test stack: CPU threads of that server. ggml's threads wait for each other by spinning, so on a
    # machine whose cores are all busy (the suite's parallel workers) one thread does the same work
    # for a third of the CPU time two take.
    stack_llm_threads: int = Field(default=2, ge=1, le=64)
    # Public base URL of the API (scheme, host, port, no /v1), used to build absolute URLs such as the
    # signed file URLs; empty = the API's own address, http://<api_host>:<api_port>.
    public_base_url: str = ""
    # Signed file URLs (GET /v1/files/{token}): how long one stays valid, seconds.
    file_url_ttl_s: float = Field(default=86400.0, gt=0)
    # Webhook payloads: how long the signed file URLs in a delivery stay valid, seconds from the event's time;
    # at least 24 h, and longer than the whole retry schedule (about 27.6 h) by default: 7 days.
    webhook_file_url_ttl_s: float = Field(default=604800.0, ge=86400.0)
    # Signed file URLs: a download whose client takes nothing of a 256 KiB chunk for this many seconds is disconnected.
    file_send_timeout_s: float = Field(default=60.0, gt=0)
    # Signed file URLs: downloads one client address may have in flight at once (429 beyond; a proxy is one address).
    file_downloads_per_address: int = Field(default=8, ge=1)
    # Videos: largest upload accepted by POST /videos and `vaeo videos import`, bytes (413 beyond).
    video_max_bytes: int = 2 * 1024 ** 3
    # Videos: largest captions file accepted with an upload, bytes.
    captions_max_bytes: int = 5 * 1024 ** 2
    # Videos: longest media accepted, seconds (400 media_too_long beyond); at most 43200 (12 h).
    media_max_duration_s: float = Field(default=43200.0, gt=0, le=43200.0)
    # Article provider (OpenAI-compatible Chat Completions): base URL up to /v1, e.g. https://api.openai.com/v1;
    # empty = no provider (quality_profile=premium then fails clearly and is refunded).
    llm_base_url: str = ""
    # Article provider: API key, sent as "Authorization: Bearer"; a secret, never logged nor stored; empty = no header.
    llm_api_key: SecretStr = SecretStr("")
    # Article provider: the model asked for (the provider's name for it); the provider is used only when set.
    llm_model: str = ""
    # Article provider: longest wait for one answer (connect, send, answer), seconds.
    llm_timeout_s: float = 120.0
    # Article provider: requests per call at most; only 408, 429, 5xx, timeouts and connection failures are retried.
    llm_max_attempts: int = 3
    # Article provider: delay before the second request of a call, seconds (doubles for each further one).
    llm_retry_backoff_s: float = 2.0
    # Article provider: longest delay between two requests, a Retry-After header included, seconds.
    llm_retry_after_max_s: float = 30.0
    # Article provider: bytes of an answer read at most (a larger answer fails the call).
    llm_max_response_bytes: int = 1_048_576
    # Article provider: ask for answers that follow a JSON Schema (response_format, in the first form the server
    # accepts); off: no response_format at all, the prompt alone asks for JSON.
    llm_json_mode: bool = True
    # Article provider: most tokens asked for one answer (max_tokens), whatever the call's own bound; 0 = the call's
    # own bound (a cost ceiling for a hosted model, a time ceiling for a small model on a CPU).
    llm_max_output_tokens: int = Field(default=0, ge=0)
    # Speech recognition (a video without captions): directory of joined model files; empty = <stack_dir>/models.
    asr_model_dir: str = ""
    # Speech recognition: CPU threads of the local Whisper engine (int8).
    asr_cpu_threads: int = Field(default=2, ge=1, le=64)
    # Speech recognition: longest window of audio recognised as one job item, seconds (cut at pauses).
    asr_window_s: int = Field(default=30, ge=5, le=120)
    # Speech recognition: most characters of the text recognised before a window that it is given as its
    # prompt (Whisper reads the last 223 tokens, about 800 characters); 0: each window is recognised alone.
    asr_prompt_chars: int = Field(default=800, ge=0, le=4000)
    # Speech recognition: longest run of one window (decode + recognition), seconds; the recogniser process
    # is killed at the limit and the window fails (and is retried alone).
    asr_window_timeout_s: float = Field(default=300.0, gt=0)
    # Speech recognition: longest audio recognised, seconds (a longer video's analysis with speech is refused).
    asr_max_duration_s: float = Field(default=14400.0, gt=0, le=43200.0)
    # Speech recognition: the detected language is used when its probability among the seven languages
    # reaches this; below it the job asks for `language` in the analyze request.
    asr_language_min_probability: float = Field(default=0.8, ge=0, le=1)
    # Speech recognition: longest time spent finding the speakers of a recognised talk from its voices, seconds
    # (about 1 % of the audio's length); past it the transcript keeps one speaker. 0: speakers are not looked for.
    asr_speakers_timeout_s: float = Field(default=600.0, ge=0)
    # Behavioural analysis (analysis_mode=behavioral): frames sampled per second of video.
    vision_fps: float = Field(default=3.0, ge=0.5, le=10.0)
    # Behavioural analysis: longest side of a sampled frame, pixels (never scaled up).
    vision_max_side: int = Field(default=960, ge=64, le=1920)
    # Behavioural analysis: length of the window of video seen as one job item, seconds.
    vision_window_s: int = Field(default=30, ge=5, le=120)
    # Behavioural analysis: longest run of one window (decoding and seeing its frames), seconds; then the
    # window fails and is retried alone.
    vision_window_timeout_s: float = Field(default=300.0, gt=0)
    # Behavioural analysis: longest part of a video seen, from its start, seconds (priced and analysed up to it).
    vision_max_duration_s: float = Field(default=7200.0, gt=0, le=43200.0)
    # Speech provider (OpenAI-compatible POST /audio/transcriptions): base URL up to /v1; empty = the local model.
    asr_base_url: str = ""
    # Speech provider: API key, sent as "Authorization: Bearer"; a secret, never logged nor stored; empty = no header.
    asr_api_key: SecretStr = SecretStr("")
    # Speech provider: the model asked for (e.g. whisper-1); the provider is used only when base URL and model are set.
    asr_model: str = ""
    # Speech provider: longest wait for one window's answer, seconds.
    asr_timeout_s: float = 120.0
    # Speech provider: requests per window at most; only 408, 429, 5xx, timeouts and connection failures are retried.
    asr_max_attempts: int = 3
    # Speech provider: delay before the second request of a window, seconds (doubles for each further one).
    asr_retry_backoff_s: float = 2.0
    # Clock: a fixed "now" (ISO 8601 with offset) used instead of the wall clock (tests); empty = wall clock.
    clock_fixed: str = ""
    # Clock: seconds added to "now" (tests slide monitoring windows without sleeping); 0 in production.
    clock_offset_s: float = 0.0
    # Alerts: credits_low warning below this percentage of credits remaining (also the credits.low trigger).
    alert_credits_warning_pct: float = 20.0
    # Alerts: credits_low critical below this percentage of credits remaining.
    alert_credits_critical_pct: float = 5.0
    # Alerts: error_rate_high warning at this share of failed calls (5xx, 4xx but 401/404) in the last hour.
    alert_error_rate_warning: float = 0.05
    # Alerts: error_rate_high critical at this share.
    alert_error_rate_critical: float = 0.25
    # Alerts: error_rate_high needs at least this many calls in the last hour (no alert on 1 call of 1).
    alert_error_rate_min_calls: int = 10
    # Alerts: jobs_failing warning at this failed share of the jobs finished in the last 24 h.
    alert_jobs_failed_warning: float = 0.10
    # Alerts: jobs_failing critical at this share.
    alert_jobs_failed_critical: float = 0.50
    # Alerts: jobs_failing needs at least this many finished jobs in 24 h.
    alert_jobs_min_finished: int = 3
    # Alerts: webhook_failing when this share of a webhook's deliveries of the last 24 h fail (retrying or given up).
    alert_webhook_failing_ratio: float = 0.5
    # Alerts: webhook_failing needs at least this many failing deliveries of that webhook.
    alert_webhook_failing_min: int = 3
    # Alerts: projection_lag warning when a read model is this many messages behind its topic.
    alert_projection_lag_warning: int = 1000
    # Alerts: projection_lag critical at this many messages behind (a stopped projection is critical too).
    alert_projection_lag_critical: int = 10000
    # GET /metrics: when set, scrapers must send "Authorization: Bearer <token>"; empty = open to whoever
    # reaches api_host (127.0.0.1 by default).
    metrics_token: str = ""
    # Heartbeats: how often each process records that it is alive, seconds (`vaeo status`).
    heartbeat_interval_s: float = 5.0
    # Run mode: "development" or "production".
    mode: str = Field(default="development", pattern="^(development|production)$")

    def sandbox_allowance(self) -> SandboxAllowance:
        """Today's (UTC, on the settings' clock) bounds of a workspace's free sandbox work."""
        return SandboxAllowance(day=self.now().date(), jobs=self.sandbox_daily_jobs,
                                clip_ms=self.sandbox_daily_clip_seconds * 1000,
                                decoded_ms=self.sandbox_daily_decoded_seconds * 1000,
                                clip_max_ms=self.sandbox_clip_max_s * 1000)

    def now(self) -> datetime:
        """The service's "now": the wall clock, or the fixed instant of ``clock_fixed``, plus the offset.
        Code that needs "now" takes it from here (or as a parameter), so tests and replays can fix it."""
        base = datetime.fromisoformat(self.clock_fixed) if self.clock_fixed else wall_clock()
        return base + timedelta(seconds=self.clock_offset_s)

    @property
    def llm_configured(self) -> bool:
        """An article provider is configured: a base URL and a model."""
        return bool(self.llm_base_url.strip() and self.llm_model.strip())

    def media_timeout(self, duration_ms: int) -> float:
        """The longest one media pass of a job over ``duration_ms`` of priced media may run, seconds:
        proportional to what was priced, from a floor (a slot is held for what was paid for)."""
        return self.media_timeout_base_s + self.media_timeout_per_second * max(0, duration_ms) / 1000

    @property
    def asr_configured(self) -> bool:
        """A speech provider is configured: a base URL and a model (else the local model runs)."""
        return bool(self.asr_base_url.strip() and self.asr_model.strip())

    @property
    def asr_models_path(self) -> Path:
        """Where joined speech model files are kept."""
        return Path(self.asr_model_dir) if self.asr_model_dir else self.stack_dir / "models"

    @property
    def instance_dir(self) -> Path:
        return self.stack_dir / self.stack_instance

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        # The local stack's server through its Unix socket: a round trip costs about half of one
        # over loopback TCP (62 vs 108 us measured), and the API makes one or two per request.
        socket_dir = quote(str(self.instance_dir / "pg" / "sock"), safe="")
        return f"postgresql://postgres@{socket_dir}:{self.stack_pg_port}/vaeo"

    def resolved_kafka_bootstrap(self) -> str:
        if self.kafka_bootstrap:
            return self.kafka_bootstrap
        return f"127.0.0.1:{self.stack_kafka_port}"

    @property
    def media_cache_path(self) -> Path:
        """The object store's local read cache (and its staging files)."""
        return Path(self.media_cache_dir) if self.media_cache_dir else self.instance_dir / "media-cache"

    @property
    def uses_local_object_store(self) -> bool:
        """The S3 backend on the local stack's SeaweedFS (no endpoint given)."""
        return self.storage_backend == "s3" and not self.s3_endpoint_url

    def resolved_s3_endpoint(self) -> str:
        return self.s3_endpoint_url or f"http://127.0.0.1:{self.stack_s3_port}"

    @property
    def uses_local_stack(self) -> bool:
        return not (self.database_url and self.kafka_bootstrap)
