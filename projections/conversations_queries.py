"""The reads of the ``conversations`` read model: GET /agent/conversations/{id}."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row

# The caller's own conversation, or any of its workspace and environment for a wildcard key
# (``Conversation.open_to``). A row recorded before conversations kept their key (key_id null) is a
# wildcard key's only, until the read model is rebuilt.
_CONVERSATION = """SELECT id, created_at, updated_at FROM agent_conversations
                    WHERE id = $1 AND workspace_id = $2 AND environment = $3 AND (key_id = $4 OR $5)"""
_TURNS = """SELECT turn, message, planner, request_id, actions, reply, outcome, not_done, created_at, replied_at
              FROM agent_turns WHERE conversation_id = $1 ORDER BY turn"""


async def with_turns(pool: Pool, conversation_id: UUID, workspace_id: UUID, environment: str, key_id: UUID,
                     every_key: bool) -> tuple[Row, list[Row]] | None:
    """The conversation and its turns in order, read on one connection; None when the caller may
    not read it (another key's without ``every_key``) or there is none."""
    async with pool.acquire() as conn:
        found = await conn.fetchrow(_CONVERSATION, conversation_id, workspace_id, environment, key_id, every_key)
        if found is None:
            return None
        return found, await conn.fetch(_TURNS, conversation_id)
