"""The application layer of the write side: typed commands and their handlers.

A command is a small frozen value naming one operation and what the caller asked (``QueueJob``,
``CancelJob``, ``IngestVideo``, ``RequestAnalysis``...), declared beside its handler in the
module of its aggregate. A handler takes ``(command, context)``: the context (``context.Context``)
is the application built once at start-up from settings (``bootstrap``), with the meta of the
call. ``handlers.HANDLERS`` lists every command with its handler; ``Context.handle`` runs one.
A handler loads what it decides on, decides through the aggregates, and saves in one append
(optimistic concurrency, retried on conflict by ``context.with_retries``); callers (the API, the
assistant, the CLI, the workers) parse, call and answer.
"""
