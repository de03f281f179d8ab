"""The assistant: its conversations (an aggregate), its offline planner, its rules and its replies.

Pure code: the services run the actions (``services/api/assistant/turn.py``, ``services/api/assistant/actions.py``)."""

from domain.agent import conversation  # noqa: F401  (registers the published events)
