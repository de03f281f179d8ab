"""LLM usage per workspace, environment and operation: GET /usage/llm.

Increments (``commutative``), relying on the runner's exactly-once effect; the event's own
stream is deterministic per call, so an engine's retry never records twice.
"""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="llm_usage",
    ddl=[
        """CREATE TABLE IF NOT EXISTS llm_usage (
            workspace_id      uuid NOT NULL,
            environment       text NOT NULL,
            operation         text NOT NULL,
            calls             bigint NOT NULL,
            prompt_tokens     bigint NOT NULL,
            completion_tokens bigint NOT NULL,
            PRIMARY KEY (workspace_id, environment, operation)
        )""",
    ],
    tables=["llm_usage"],
    ordering="commutative",
)


@projection.handles("LlmUsageRecorded")
def _recorded(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO llm_usage (workspace_id, environment, operation, calls, prompt_tokens, completion_tokens)
                VALUES ($1, $2, $3, 1, $4, $5)
                ON CONFLICT (workspace_id, environment, operation) DO UPDATE SET
                  calls = llm_usage.calls + 1, prompt_tokens = llm_usage.prompt_tokens + excluded.prompt_tokens,
                  completion_tokens = llm_usage.completion_tokens + excluded.completion_tokens""",
             (ev.workspace_id, d["environment"], d["operation"], d["prompt_tokens"], d["completion_tokens"]))]
