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
import unicodedata
from collections.abc import Sequence
from functools import cache

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
    "job_events": "a stream of a job's progress never ends within one request; read the job instead (get_job)",
    "get_openapi": "the API's own description is documentation, not an action",
    "agent_chat": "the assistant does not call itself", "agent_stream": "the assistant does not call itself",
    "get_agent_conversation": "the assistant does not read conversations as an action",
}
WEBHOOK_URL_REFUSED = ("the assistant never sets a notification URL (webhook_url): a URL chosen in a conversation "
                       "could send the workspace's data anywhere; set it with the operation itself")

# The kinds of change a message can ask for: the words (accents and case ignored) that ask for
# each operation that writes. A model may perform a write only when the person's message has
# one of its words.
WRITE_WORDS: dict[str, tuple[str, ...]] = {
    "analyze_video": (r"analy[sz]\w*",),
    "cancel_job": (r"cancel\w*", r"annul\w*", r"stop\w*", r"arret\w*", r"interromp\w*", r"abort\w*"),
    "create_media": (r"creat\w*", r"cre[ea]\w*", r"new", r"nouve\w*", r"add\w*", r"ajout\w*"),
    "update_article": (r"renam\w*", r"renomm\w*", r"attach\w*", r"rattach\w*", r"retitl\w*"),
    "translate_article": (r"translat\w*", r"tradu\w*"),
    "regenerate_article": (r"regenerat\w*", r"regener\w*", r"rewrit\w*", r"reecri\w*", r"redo", r"refai\w*"),
    "create_video_clip": (r"clip", r"cut\w*", r"coup\w*", r"decoup\w*", r"extrai\w*", r"extract\w*", r"trim\w*"),
    "detect_clips": (r"detect\w*", r"find\w*", r"trouv\w*", r"suggest\w*", r"propos\w*", r"repere\w*",
                     r"identif\w*"),
    "render_clips": (r"render\w*", r"rend\w*", r"produc\w*", r"produi\w*", r"generat\w*", r"gener\w*"),
    "complete_descriptions": (r"descriptions?", r"complet\w*"),
    "update_video": (r"chang\w*", r"modif\w*", r"updat\w*", r"edit\w*", r"replac\w*", r"remplac\w*"),
    "update_revival_candidate": (r"review\w*", r"dismiss\w*", r"ecart\w*", r"revu\w*", r"revoir", r"candidat\w*",
                                 r"reopen\w*", r"rouvr\w*", r"eligib\w*"),
}


# The kinds of resource a person's messages can ask about, by the words (accents and case ignored)
# that name them, and the reads of each kind (``READ_KINDS``). Once a model has read content, it may
# read only the kinds the person's messages name.
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "account": (r"who", r"identit\w*", r"keys?", r"cles?", r"scopes?", r"workspaces?", r"accounts?",
                r"comptes?", r"espaces?", r"environments?", r"environnements?"),
    "credits": (r"balance", r"soldes?", r"credits?", r"money", r"argent", r"plans?", r"forfaits?"),
    "usage": (r"usages?", r"consumption", r"consommation", r"utilisation", r"monitoring", r"surveillance",
              r"alerts?", r"alertes?", r"tokens?", r"llm", r"latenc\w*", r"errors?", r"erreurs?", r"stat\w*",
              r"metri\w*", r"requests?", r"requetes?"),
    "jobs": (r"jobs?", r"taches?", r"travaux", r"traitements?", r"status", r"statut", r"etat", r"progress\w*",
             r"queue", r"renders?", r"rendus?"),
    "content": (r"videos?", r"articles?", r"medias?", r"claims?", r"affirmations?", r"entit\w*", r"intent\w*",
                r"moments?", r"chapters?", r"chapitres?", r"narrat\w*", r"topics?", r"themes?", r"sujets?",
                r"graph\w*", r"elements?", r"transcri\w*", r"summar\w*", r"resum\w*", r"export\w*", r"scores?",
                r"aeo", r"geo", r"translations?", r"traductions?", r"clips?", r"contents?", r"contenus?",
                r"channels?", r"chaines?", r"analys\w*", r"analyz\w*"),
    "templates": (r"templates?", r"modeles?", r"gabarits?", r"clips?", r"render\w*", r"rend\w*", r"detect\w*"),
    "revival": (r"revival", r"reviv\w*", r"candidat\w*", r"relanc\w*", r"descriptions?", r"platforms?",
                r"plateformes?"),
}
READ_KINDS: dict[str, tuple[str, ...]] = {
    "get_me": ("account",), "get_credits": ("credits", "account"),
    "get_usage": ("usage",), "get_usage_llm": ("usage",), "get_monitoring": ("usage",),
    "get_monitoring_alerts": ("usage",),
    "list_jobs": ("jobs",), "get_job": ("jobs",), "get_clip_job": ("jobs", "templates"),
    "list_templates": ("templates",), "list_revival_candidates": ("revival",),
}
READ_DEFAULT_KINDS = ("content",)  # every other read: videos, articles and what analyses found


def fold(text: str) -> str:
    """Lower case without accents, one character for one (``é`` -> ``e``), so that positions in
    the folded text are positions in the original."""
    lower = text.lower()
    if lower.isascii():  # nothing to fold: every message is read, most are plain ASCII
        return lower
    return "".join(map(_fold_character, lower)).replace("\u2019", "'").replace("\u02bc", "'")


@cache
def _fold_character(ch: str) -> str:
    base = unicodedata.normalize("NFKD", ch)
    kept = "".join(c for c in base if not unicodedata.combining(c))
    return kept if len(kept) == 1 else ch


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


def read_kinds(operation: str) -> tuple[str, ...]:
    """The kinds of resource an operation that reads reads (any one of them asked lets it run)."""
    return READ_KINDS.get(operation, READ_DEFAULT_KINDS)
