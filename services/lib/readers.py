"""The readers of the log whose effect is beyond a read model, by the name their tracking rows
carry, with the topic each reads. Their processes take their names from here, and the status
screen and ``/metrics`` list them from here, without importing the processes (every process
imports the status module for its heartbeat; the dispatcher's modules alone would add about
15 MB to each)."""

DISPATCHER_INTAKE = "dispatcher"
CREDITS_WATCH = "credits_watch"
EXPORTS_WATCH = "exports_watch"

EFFECT_READERS: dict[str, str] = {DISPATCHER_INTAKE: "events", CREDITS_WATCH: "events", EXPORTS_WATCH: "telemetry"}
