"""The premium writing of a job: the three provider calls of ``domain.analysis.premium``, their usage.

``write_premium`` runs ``PremiumWriter`` over the offline graph (its pure steps in the worker's
threads): the outline (title, summary, chapters), the article and its FAQ, the platform
descriptions, one Chat Completions call each, with the call's JSON Schema and token bound
(``infra.llm.ChatProvider.complete``). Every answered call records ``LlmUsageRecorded`` at once, in
its own append (its operation: ``analysis.enrich``, ``article.write``, ``descriptions.complete``),
whatever happens to the answer next. An answer that fails a check costs only its parts, which keep
the offline text (the writer records why); a provider that does not answer (after the client's
bounded retries) fails the job (``PermanentJobError``), since a premium result without the
provider's work would not be what was paid for.
"""

from __future__ import annotations

from domain.analysis.premium import PremiumWriter, Reply
from domain.analysis.premium_prompts import Call
from domain.llm_usage import LlmUsage
from infra.eventstore import ConcurrencyError
from infra.llm import ChatProvider, ProviderError
from services.jobs.context import JobContext
from services.jobs.errors import PermanentJobError

STEPS = (  # progress, step, the writer's call and what reads its answer
    (80, "writing the title, summary and chapters (provider)", "outline_call", "take_outline"),
    (85, "writing the article (provider)", "article_call", "take_article"),
    (90, "writing the platform descriptions (provider)", "descriptions_call", "take_descriptions"),
)


async def ask(ctx: JobContext, provider: ChatProvider, call: Call, environment: str, nothing: str,
              operation: str | None = None) -> Reply:
    """The provider's reply to ``call``; its usage recorded (as ``operation``, default the call's)
    once per job, operation and attempt."""
    operation = operation or call.operation
    try:
        completion = await provider.complete(call.messages, schema=(call.schema_name, call.schema),
                                             max_tokens=call.max_tokens)
    except ProviderError as exc:
        raise PermanentJobError(f"the provider failed writing {call.what}: {exc}; {nothing}") from None
    usage = LlmUsage.record(call_key=f"{ctx.job_id}:{operation}:attempt-{ctx.attempt}",
                            workspace_id=ctx.workspace_id, environment=environment, operation=operation,
                            prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                            job_id=ctx.job_id)
    try:
        await ctx.save_now(usage)
    except ConcurrencyError:
        pass  # this call is recorded already
    return Reply(completion.content, completion.finish_reason)


async def write_premium(ctx: JobContext, provider: ChatProvider, graph, writing_style: str, language: str,
                        environment: str, nothing: str, *, everything: bool = True,
                        operations: dict[str, str] | None = None) -> PremiumWriter:
    """Every text a person reads, written by the provider and checked part by part (see the module);
    with ``everything`` false (no article asked for), only the chapters' call is made. ``operations``
    renames a call's operation in its usage (a regeneration's article is ``article.regenerate``)."""
    writer = await ctx.run_blocking(PremiumWriter, graph, writing_style, language)
    for progress, step, make, take in STEPS if everything else STEPS[:1]:
        await ctx.progress(progress, step)
        call = await ctx.run_blocking(getattr(writer, make))
        reply = await ask(ctx, provider, call, environment, nothing, (operations or {}).get(call.operation))
        await ctx.run_blocking(getattr(writer, take), reply)
        await ctx.checkpoint()
    return writer
