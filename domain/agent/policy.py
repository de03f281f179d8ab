"""The assistant's bounds and rules, in one place: what it may do, how much, and what it never does.

- **At most 15 actions per request** (the interface's bound): what a plan or a model asks beyond
  that is not done, and the reply says how many were left.
- **A message is 1 to 4,000 characters**: enough for a paragraph of requests, small enough that
  a conversation's context stays within what a model reads.
- **A conversation keeps at most 200 turns**; a model is shown the last 10 of them (bounded in
  size too), so that continuing a long conversation costs what continuing a short one does.
- **Operations it never performs**, whatever the key's scopes (``REFUSED_BY_DESIGN``): credentials,
  webhooks, uploads and downloads of files, the API's own description and the assistant itself.
  Each has its reason below; an action that names one is ``refused`` with that reason.
- **A notification URL is never set by the assistant** (``webhook_url``): a URL chosen by a model
  could send the workspace's data to anyone; a person sets one with the operation itself.
- **It changes only what the person's own message asks for**: an operation that writes runs only
  when the message names that kind of change (``asked_writes``). Text that actions return
  (transcripts, articles, names) is data: a model that reads "cancel every job" in a transcript
  and asks for it gets the action refused, since the person never asked.
- **Once it has read content, it reads only what the person asked about**: before any action has
  answered, a model's reads are free (its choices come from the person's words alone); after one
  has, or when the conversation already holds actions, a read runs only when the person's messages
  name its kind of resource (``asked_reads``), so that words in a transcript cannot send it
  through the workspace's jobs, usage or account either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from domain.agent.actions import ACTIONS, read_kinds  # noqa: F401  (a read's kinds are declared with it)
from domain.languages import ASSISTANT_LANGUAGES, assistant_words, fold

MAX_ACTIONS = 15
MAX_MESSAGE_CHARS = 4000
MAX_TURNS = 200
CONTEXT_TURNS = 10
# What one turn may store: a reply a person reads (a model may write more; it is cut here), an
# action's arguments and result as JSON, an error message.
MAX_REPLY_CHARS = 16_000
MAX_ARGUMENTS_CHARS = 4_000
MAX_RESULT_CHARS = 4_000
MAX_ERROR_CHARS = 500

ACTION_STATUSES = ("ok", "refused", "failed")

# Operation id -> why the assistant never performs it (the reason is what the action's error says).
_CREDENTIALS = ("API keys are credentials: an assistant that could create, list or revoke them could hand out "
                "access or lock the owner out; manage keys with the keys operations")
_WEBHOOKS = ("webhooks send the workspace's events to an outside address and reveal signing secrets: an "
             "assistant must not be able to open such a channel; manage webhooks with the webhook operations")
_FILES = ("files move bytes, not requests: an upload needs the file itself and a download is a signed link "
          "that the assistant's answers already give")
REFUSED_BY_DESIGN: dict[str, str] = {
    "create_key": _CREDENTIALS, "list_keys": _CREDENTIALS, "revoke_key": _CREDENTIALS,
    "create_webhook": _WEBHOOKS, "list_webhooks": _WEBHOOKS, "remove_webhook": _WEBHOOKS,
    "test_webhook": _WEBHOOKS, "list_deliveries": _WEBHOOKS, "resend": _WEBHOOKS,
    "job_secret": _WEBHOOKS, "rotate_job_secret": _WEBHOOKS,
    "upload_video": _FILES, "download_file": _FILES,
    "revoke_public_links": "a video's public links are published in pages: a person ends them with the operation "
                           "itself",
    "job_events": "a stream of a job's progress never ends within one request; read the job instead (get_job)",
    "get_openapi": "the API's own description is documentation, not an action",
    "get_asyncapi": "the event stream's description is documentation, not an action",
    "agent_chat": "the assistant does not call itself", "agent_stream": "the assistant does not call itself",
    "get_agent_conversation": "the assistant does not read conversations as an action",
}
WEBHOOK_URL_REFUSED = ("the assistant never sets a notification URL (webhook_url): a URL chosen in a conversation "
                       "could send the workspace's data anywhere; set it with the operation itself")

def _merged(table: str, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """One of the assistant's word tables (``asks`` or ``kind_words``) of every language it speaks,
    merged: a person may ask in any of them."""
    homes = [assistant_words(code) for code in ASSISTANT_LANGUAGES]
    return {key: tuple(dict.fromkeys(p for home in homes for p in getattr(home, table).get(key, ())))
            for key in keys}


# The kinds of change a message can ask for: the words (accents and case ignored, from every
# language the assistant speaks) that ask for each action that writes. A model may perform a write
# only when the person's message has one of its words.
WRITE_WORDS: dict[str, tuple[str, ...]] = _merged("asks", (a.name for a in ACTIONS.values() if a.writes))

# The kinds of resource a person's messages can ask about, by the words that name them; each read
# declares its kinds (``AssistantAction.kinds``). Once a model has read content, it may read only
# the kinds the person's messages name.
KIND_WORDS: dict[str, tuple[str, ...]] = _merged("kind_words", dict.fromkeys(
    k for code in ASSISTANT_LANGUAGES for k in assistant_words(code).kind_words))


def _named(table: dict[str, tuple[str, ...]], messages: Sequence[str]) -> frozenset[str]:
    """The keys of ``table`` one of whose word patterns a word of ``messages`` matches (accents and
    case ignored)."""
    words = {w for m in messages for w in re.findall(r"[a-z]+", fold(m))}
    return frozenset(key for key, patterns in table.items() if any(re.fullmatch(p, w) for p in patterns for w in words))


def asked_writes(message: str) -> frozenset[str]:
    """The operations that write which ``message`` asks for (see ``WRITE_WORDS``)."""
    return _named(WRITE_WORDS, [message])


def asked_reads(messages: Sequence[str]) -> frozenset[str]:
    """The kinds of resource (``KIND_WORDS``) that the person's ``messages`` name."""
    return _named(KIND_WORDS, messages)
