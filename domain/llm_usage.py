"""LLM usage: one stream per provider call, recorded by the engine that made it.

``operation`` is a stable, readable name of what the call was for (``article.write``,
``article.translate``, ...), never the provider's model name; costs and margins are not events.
The offline engines (no provider) record nothing: usage is what providers were asked for.
The stream id is ``deterministic_id("llm-usage", call_key)``: an engine that retries the same
call records it once.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, aggregate, deterministic_id


@aggregate("LlmUsage")
class LlmUsage(Aggregate):
    class Recorded(Aggregate.Created):
        """The tokens one call to the language-model provider spent, appended at once in its own append: they were spent
        whatever happens to the job next. One stream per call (`call_key`), so recording it twice is refused.

        Read by the `llm_usage` read model (GET /usage/llm)."""

        published_as = "LlmUsageRecorded"
        call_key: str  # the engine's name for the call (job, step, attempt): a retry records once
        workspace_id: UUID
        environment: str
        operation: str
        prompt_tokens: int
        completion_tokens: int
        job_id: UUID | None

    @staticmethod
    def create_id(call_key: str, **_: Any) -> UUID:
        return deterministic_id("llm-usage", call_key)

    @event(Recorded)
    def __init__(self, call_key: str, workspace_id: UUID, environment: str, operation: str, prompt_tokens: int,
                 completion_tokens: int, job_id: UUID | None):
        self.workspace_id = workspace_id
        self.environment = environment
        self.operation = operation
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.job_id = job_id

    @classmethod
    def record(cls, *, call_key: str, workspace_id: UUID, environment: str, operation: str, prompt_tokens: int,
               completion_tokens: int, job_id: UUID | None = None) -> LlmUsage:
        if not operation.strip():
            raise DomainError("an LLM call names its operation", field="operation")
        if prompt_tokens < 0 or completion_tokens < 0:
            raise DomainError("token counts are zero or more", field="tokens")
        return cls(call_key=call_key, workspace_id=workspace_id, environment=environment, operation=operation,
                   prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, job_id=job_id)
