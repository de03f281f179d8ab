"""The premium profile's chapters and titles against human ones, beside the standard profile's:
``python -m tests.benchmarks premium --set DIR [--items 01,02] [--model-file F.gguf --model-name N]``.

The development set's English items (``NAME.chapters.json`` beside ``NAME.srt`` or
``NAME.transcript.md``, as ``bench_quality`` reads them; the set is read where it lies, never
copied). Each item is analysed in this process as the worker would (the standard profile: the
offline chapters and titles), then the premium writer's first call, the one that writes the title,
the summary and the chapters (``domain.analysis.premium``), is sent to a language model and its
answer checked exactly as a premium analysis checks it: the chapters a person then reads are the
model's where they passed, the offline ones where they did not.

The model: a llama.cpp server this benchmark starts (``infra.llama_server``, the test stack's build)
with ``--model-file`` (default: the test stack's SmolLM2-135M-Instruct), or any OpenAI-compatible
server given by ``--base-url`` and ``--model``.

Measures, per item and as means, for both profiles:

- boundary F1 at +-30 s (chapter starts after 0:01, matched one to one, closest first);
- title ROUGE-L: for each human chapter, the ROUGE-L F1 (longest common subsequence of the
  lowercased words) between its title and the title of the predicted chapter in effect at its start,
  averaged over the human chapters;
- for premium: whether the model's chapter titles and starts passed the checks, the call's time,
  its prompt and completion tokens and the completion tokens per second (prompt included in the
  time: what a job waits).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from pathlib import Path

from domain.analysis import MediaFacts, analyse
from domain.analysis.premium import PremiumWriter, Reply
from infra import llama_server
from infra.captions import parse_captions
from infra.llm import ChatProvider
from infra.settings import Settings
from tests.benchmarks.bench_quality import load_items
from tests.benchmarks.chapter_measures import boundary_f1

WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def rouge_l(a: str, b: str) -> float:
    """ROUGE-L F1 of two titles: their longest common subsequence of lowercased words."""
    x, y = WORD_RE.findall(a.lower()), WORD_RE.findall(b.lower())
    if not x or not y:
        return 0.0
    row = [0] * (len(y) + 1)
    for word in x:
        previous = 0
        for j, other in enumerate(y, start=1):
            current = row[j]
            row[j] = previous + 1 if word == other else max(row[j], row[j - 1])
            previous = current
    lcs = row[-1]
    if not lcs:
        return 0.0
    precision, recall = lcs / len(x), lcs / len(y)
    return 2 * precision * recall / (precision + recall)


def title_rouge(chapters: list[dict], gold: list[dict]) -> float:
    """Mean over the human chapters of ROUGE-L against the predicted chapter in effect at their start."""
    if not chapters or not gold:
        return 0.0
    scores = []
    for human in gold:
        at = human["start_s"] * 1000
        shown = [c for c in chapters if c["startMs"] <= at + 1000] or chapters[:1]
        scores.append(rouge_l(shown[-1]["title"], human["title"]))
    return sum(scores) / len(scores)


def measures(chapters: list[dict], gold: list[dict]) -> dict:
    starts = [c["startMs"] / 1000 for c in chapters if c["startMs"] > 1000]
    gold_starts = [g["start_s"] for g in gold if g["start_s"] > 1]
    return {"f1_30": boundary_f1(starts, gold_starts, 30), "title_rouge_l": title_rouge(chapters, gold),
            "chapters": len(chapters), "titles": [c["title"] for c in chapters]}


async def run_item(item, provider: ChatProvider) -> dict:
    segments = parse_captions(item.captions)
    duration_ms = (max(s.end_ms for s in segments) // 1000 + 2) * 1000
    graph = analyse(segments, MediaFacts(duration_ms=duration_ms), language=item.language)
    writer = PremiumWriter(graph, "auto", item.language)
    call = writer.outline_call()
    started = time.monotonic()
    done = await provider.complete(call.messages, schema=(call.schema_name, call.schema), max_tokens=call.max_tokens)
    seconds = time.monotonic() - started
    writer.take_outline(Reply(done.content, done.finish_reason))
    record = writer.record()
    return {"item": item.name, "gold": len(item.gold), "gold_titles": [g["title"] for g in item.gold],
            "standard": measures([c.to_dict() for c in graph.chapters], item.gold),
            "premium": measures([c.to_dict() for c in writer.graph.chapters], item.gold),
            "title": writer.title, "written": {p: record[p] for p in ("title", "chapter_titles", "chapter_starts")},
            "seconds": seconds, "prompt_tokens": done.prompt_tokens, "completion_tokens": done.completion_tokens}


def mean(rows: list[dict], profile: str, key: str) -> float:
    return sum(r[profile][key] for r in rows) / len(rows)


def print_rows(rows: list[dict], model: str) -> None:
    print(f"\npremium profile with {model}: the title, summary and chapters call, checked; standard beside it")
    print(f"{'item':40s} {'F1 std':>7s} {'F1 prem':>7s} {'RL std':>7s} {'RL prem':>7s} {'titles':>7s} "
          f"{'starts':>7s} {'s':>6s} {'tok/s':>6s}")
    for r in rows:
        print(f"{r['item'][:40]:40s} {r['standard']['f1_30']:7.3f} {r['premium']['f1_30']:7.3f} "
              f"{r['standard']['title_rouge_l']:7.3f} {r['premium']['title_rouge_l']:7.3f} "
              f"{r['written']['chapter_titles']['by']:>7s} {r['written']['chapter_starts']['by']:>7s} "
              f"{r['seconds']:6.1f} {r['completion_tokens'] / max(r['seconds'], 1e-9):6.1f}")
    tokens = sum(r["completion_tokens"] for r in rows)
    seconds = sum(r["seconds"] for r in rows)
    print(f"{'mean of ' + str(len(rows)) + ' items':40s} {mean(rows, 'standard', 'f1_30'):7.3f} "
          f"{mean(rows, 'premium', 'f1_30'):7.3f} {mean(rows, 'standard', 'title_rouge_l'):7.3f} "
          f"{mean(rows, 'premium', 'title_rouge_l'):7.3f} "
          f"{sum(r['written']['chapter_titles']['by'] == 'model' for r in rows):>7d} "
          f"{sum(r['written']['chapter_starts']['by'] == 'model' for r in rows):>7d} "
          f"{seconds / len(rows):6.1f} {tokens / max(seconds, 1e-9):6.1f}")
    for r in rows:
        reasons = {p: o.get("reason") for p, o in r["written"].items() if o["by"] == "offline"}
        if reasons:
            print(f"  {r['item']}: fell back: {reasons}")


async def _measure(items, provider: ChatProvider) -> list[dict]:
    rows = []
    for item in items:
        rows.append(await run_item(item, provider))
        print(f"  {item.name}: {rows[-1]['seconds']:.0f} s", flush=True)
    return rows


def run(args: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks premium")
    parser.add_argument("--set", required=True, type=Path, help="the folder of transcripts and human chapters")
    parser.add_argument("--items", default="", help="item numbers or names, comma-separated (default: all)")
    parser.add_argument("--base-url", default="", help="an OpenAI-compatible server to use instead of starting one")
    parser.add_argument("--model", default=llama_server.MODEL_NAME, help="the model's name at --base-url")
    parser.add_argument("--model-file", type=Path, help="a GGUF file for the server this benchmark starts")
    parser.add_argument("--model-name", default="", help="the model's name as the report prints it")
    parser.add_argument("--port", type=int, default=28401)
    parser.add_argument("--threads", type=int, default=llama_server.THREADS)
    parser.add_argument("--json", type=Path, help="write every row here")
    opts = parser.parse_args(args)
    only = {s.strip() for s in opts.items.split(",") if s.strip()} or None
    items = [i for i in load_items(opts.set, only) if i.language == "en"]
    settings = Settings()
    server, base_url = None, opts.base_url
    if not base_url:
        model = opts.model_file or llama_server.model_file(settings)
        socket_path = Path(tempfile.mkdtemp(prefix="vaeo-bench-llama-")) / "llama.sock"
        server = llama_server.start_server(llama_server.server_python(settings), model, opts.port, socket_path,
                                           socket_path.parent / "llama.log", threads=opts.threads)
        base_url = f"http://127.0.0.1:{opts.port}/v1"
        started = time.monotonic()
        while not llama_server.llama_ready(settings.model_copy(update={"stack_llm_port": opts.port})):
            if server.poll() is not None:
                raise SystemExit((socket_path.parent / "llama.log").read_text()[-2000:])
            time.sleep(0.25)
        print(f"llama server ready in {time.monotonic() - started:.1f} s ({model.name}, {opts.threads} threads)")
    provider = ChatProvider(base_url=base_url, model=opts.model, api_key="", timeout_s=3600, max_attempts=1,
                            backoff_s=1, retry_after_max_s=1, max_response_bytes=1 << 22, json_mode=True)
    try:
        rows = asyncio.run(_measure(items, provider))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print_rows(rows, opts.model_name or opts.model)
    if opts.json:
        opts.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
