"""Pure analysis: transcript segments and media facts to the Content Graph, scores and articles.

Standard library only; no I/O. See docs/analysis.md for every rule and its reason.
"""

from domain.analysis.article import WRITING_STYLES, Article, write_article
from domain.analysis.chapters import chapters_text, format_timestamp, validate_chapters
from domain.analysis.graph import MODES, ContentGraph, analyse
from domain.analysis.model import AudioSegment, Loudness, MediaFacts, SceneChange, Segment, Sentence, TimeRange

__all__ = [
    "MODES", "WRITING_STYLES", "Article", "AudioSegment", "ContentGraph", "Loudness", "MediaFacts", "SceneChange",
    "Segment", "Sentence", "TimeRange", "analyse", "chapters_text", "format_timestamp", "validate_chapters",
    "write_article",
]
