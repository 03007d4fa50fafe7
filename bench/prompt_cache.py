"""Workload 16: compaction and the prompt cache (issue 26), under each summary strategy.

One agent conversation (bench/agent_loop.py: workload 12's rounds of thinking, text and
tool calls answered by tool results; `cache_messages` messages) with automatic compaction
in a small context window (`cache_window`, `cache_keep` kept), through the service's own
path: `Runtime.assemble` with the Anthropic provider, summarizer and token counter, the
real `anthropic` SDK, and the Anthropic stub on 127.0.0.1 playing the model (its prefix
rule reports the cache tokens). Per strategy, three runs of the same conversation:

- **breakpoints**: the service as it is. The calls' stored `shared_prefix_tokens` /
  `prompt_tokens` give the share of input in a shared prefix (all calls; the summarizer's;
  the first turn after each compaction), and their stored cache tokens the input cost at
  Anthropic's multipliers relative to the same tokens uncached. HEAD's compacted render is
  timed as the history passes each of `cache_points`, and what the session stores counted.
- **no breakpoints**: the same requests sent without `cache_control` (`Unmarked`, an HTTP
  transport of the bench's SDK client that strips the marks from each body on its way out:
  the service has no setting that sends none), so the stub caches nothing.
- **markers**: the offline extractive summarizer instead (`OfflineExtractiveSummarizer`);
  after each compaction, how many of the marker facts planted in the first messages
  HEAD's prompt still holds.

A run that cannot go on (a prompt the model refuses as too long, after compaction could
not make room) stops there and says so; the other runs go on.
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import anthropic
import httpx2  # the anthropic SDK's HTTP client (a fork of httpx it depends on)

from service.config import Settings
from service.context.compaction import CompactionStatus, Compactor
from service.context.render import render_context
from service.context.summarizers import OfflineExtractiveSummarizer
from service.llm.anthropic_provider import AnthropicProvider
from service.llm.anthropic_summarizer import AnthropicSummarizer
from service.runtime import Runtime
from service.store import Purpose
from service.turns.service import Turns
from tests.provider_requests import uncached
from tests.stubs.anthropic_stub import AnthropicStub

from .agent_loop import SYSTEM_PROMPT, Script, ScriptedModel, converse, markers_in
from .core import Bench
from .storage import checkpoint
from .timing import Stats

S16 = "16 compaction and the prompt cache"
STRATEGIES = ("rolling", "branch", "segmented")
BREAKPOINTS, UNMARKED, MARKERS = "breakpoints", "no breakpoints", "markers"

# Anthropic's published prompt-caching prices, as multiples of the base input price:
# base input 1×, a 5-minute cache write 1.25×, a cache read 0.1×.
BASE_INPUT, CACHE_WRITE_5M, CACHE_READ = 1.0, 1.25, 0.1

# The nested merge of `segmented` (docs/segmented.md, "Nesting"): the stand-ins may hold this
# share of the window before the oldest merge (the service's default, stated here so the
# report says what ran).
SEGMENT_MERGE = {"CTXDAG_SEGMENT_MERGE_SHARE": "0.25"}


@dataclass
class Run:
    strategy: str
    mode: str
    session_id: str = ""
    messages: int = 0
    seconds: float = 0.0
    compactions: list[dict[str, Any]] = field(default_factory=list)
    trouble: list[str] = field(default_factory=list)  # compactions that failed or were skipped
    stopped: str | None = None  # why the conversation ended early
    # Segmented: the first compaction after which an earlier stand-in was no longer rendered
    # (a merge into a nested summary).
    first_merge: int | None = None
    renders: dict[int, tuple[Stats, Stats, int, int]] = field(default_factory=dict)
    store_bytes: int | None = None


class Unmarked(httpx2.AsyncBaseTransport):
    """Sends each Messages API body without its `cache_control` marks (bench only: the
    service marks every request), the way the request was before breakpoints existed."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        if request.url.path.endswith("/v1/messages") and body:
            content = json.dumps(uncached(json.loads(body))).encode()
            headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
            request = httpx2.Request(request.method, request.url, headers=headers,
                                    content=content, extensions=request.extensions)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def settings(b: Bench, stub: AnthropicStub) -> Settings:
    s = b.sizes
    return Settings.from_env({
        "CTXDAG_TENANT": b.tenant, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL":
        stub.base_url, "CTXDAG_ANTHROPIC_MODEL": "claude-bench",
        "CTXDAG_ANTHROPIC_MAX_RETRIES": "0", "CTXDAG_CONTEXT_WINDOW": str(s.cache_window),
        "CTXDAG_KEEP_RECENT_TOKENS": str(s.cache_keep), **SEGMENT_MERGE})


@contextlib.asynccontextmanager
async def service(b: Bench, stub: AnthropicStub, mode: str) -> AsyncIterator[Turns]:
    """The turn service as `ctxdag serve` assembles it with Anthropic configured; for the
    other modes, with its summarizer (markers) or its SDK client (no breakpoints) swapped."""
    config = settings(b, stub)
    runtime = Runtime.assemble(config, b.db)
    clients = [runtime.summarizer.client]  # the provider's, summarizer's and counter's
    provider, summarizer = runtime.provider, runtime.summarizer
    if mode == MARKERS:
        summarizer = OfflineExtractiveSummarizer()
    elif mode == UNMARKED:
        part = config.anthropic
        client = anthropic.AsyncAnthropic(
            api_key=part.api_key, base_url=part.base_url, timeout=part.timeout,
            max_retries=part.max_retries,
            http_client=anthropic.DefaultAsyncHttpxClient(transport=Unmarked()))
        clients.append(client)
        provider = AnthropicProvider(client, part, cache_ttl=config.cache_ttl)
        summarizer = AnthropicSummarizer(client, part, cache_ttl=config.cache_ttl)
    compactor = Compactor(runtime.ledger, summarizer, runtime.policy, runtime.estimator)
    try:
        yield Turns(runtime.ledger, compactor, provider)
    finally:
        for client in clients:
            await client.close()


async def conversation(b: Bench, strategy: str, mode: str, *, timed: bool) -> Run:
    s = b.sizes
    run = Run(strategy, mode)
    model = ScriptedModel(s.cache_window, s.cache_summary_tokens)
    script = Script(s.cache_markers, s.cache_marker_span)
    with AnthropicStub(default=model, keep_requests=False) as stub:
        async with service(b, stub, mode) as turns:
            ledger = turns.ledger
            session = await ledger.sessions.create(f"bench cache {strategy} {mode}",
                                                   SYSTEM_PROMPT, summary_strategy=strategy)
            run.session_id = session.id
            stand_ins: tuple[str, ...] = ()
            compacted: str | None = None  # the prompt head of the last compaction's turn
            started = time.perf_counter()
            async for step in converse(turns, session.id, model, script, s.cache_messages):
                run.messages = step.messages
                done = step.result.compaction
                if done is not None and done.status is CompactionStatus.COMPACTED:
                    compacted = step.result.user_node.id
                    view = await render_context(ledger, session.id, compacted)
                    _compacted(run, step, view, stand_ins, script, s.cache_markers)
                    stand_ins = view.stand_in_ids
                elif done is not None:
                    run.trouble.append(f"message {step.messages}: {done.trigger} compaction "
                                       f"{done.status.value}: {done.message}")
                if step.result.error is not None:
                    error = step.result.error
                    run.stopped = f"at message {step.messages}: {error.code}: {error.message}"
                if timed:
                    await _time_renders(b, run, ledger, compacted)
            run.seconds = time.perf_counter() - started
    if len(script.planted) < s.cache_markers and run.messages >= s.cache_marker_span:
        raise RuntimeError(f"only {len(script.planted)} markers fit in the first "
                           f"{s.cache_marker_span} messages")
    b.log(f"{S16}: {strategy}, {mode}: {run.messages} messages, {len(run.compactions)} "
          f"compactions in {run.seconds:.0f} s" + (f"; stopped {run.stopped}" if run.stopped
                                                  else ""))
    return run


def _compacted(run: Run, step: Any, view: Any, stand_ins: tuple[str, ...], script: Script,
               markers: int) -> None:
    """Records a compaction from the render it left (`view`; `stand_ins`: the one before)."""
    merged = view.stand_in_ids[:len(stand_ins)] != stand_ins
    before_reply = step.messages - (step.result.reply is not None)  # the messages it renders
    if run.strategy == "segmented" and merged and run.first_merge is None:
        run.first_merge = len(run.compactions) + 1
    run.compactions.append({
        "at": step.messages, "trigger": step.result.compaction.trigger,
        "stand_ins": len(view.stand_in_ids), "tokens_after": view.tokens,
        "stand_in_tokens": sum(n.tokens for n in view.nodes if n.id in view.stand_in_ids),
        **({"markers": markers_in(view.nodes, markers),
            "planted": sum(i < before_reply for i in script.planted)}
           if run.mode == MARKERS else {})})


async def _time_renders(b: Bench, run: Run, ledger: Any, head: str | None) -> None:
    """At each of `cache_points` passed: the render of the prompt the last compaction left
    (the first turn after it read it), timed; so every point is measured at the same phase."""
    for point in b.sizes.cache_points:
        if point in run.renders or run.messages < point or head is None:
            continue
        view = await render_context(ledger, run.session_id, head)
        stats, base = await b.timed(f"{S16} {run.strategy} render at {point}",
                                    lambda: render_context(ledger, run.session_id, head),
                                    samples=b.sizes.cache_render_samples, warmup=10)
        run.renders[point] = (stats, base, len(view.nodes), view.tokens)


async def prompt_cache(b: Bench) -> None:
    runs: dict[tuple[str, str], Run] = {}
    before = await checkpoint(b)
    for strategy in STRATEGIES:
        run = await conversation(b, strategy, BREAKPOINTS, timed=True)
        after = await checkpoint(b)
        if b.sizes.isolated_stores:  # a smoke run does not restart Neo4j to measure bytes
            run.store_bytes = after["store"] - before["store"]
        runs[strategy, BREAKPOINTS], before = run, after
    for mode in ((UNMARKED,) if b.sizes.cache_unmarked else ()) + (MARKERS,):
        for strategy in STRATEGIES:
            runs[strategy, mode] = await conversation(b, strategy, mode, timed=False)
    for strategy in STRATEGIES:
        await _rows(b, strategy, runs)


def _share(calls: list[Any]) -> float | None:
    prompt = sum(c.prompt_tokens or 0 for c in calls)
    return None if not prompt else 100 * sum(c.shared_prefix_tokens or 0 for c in calls) / prompt


def _cost(calls: list[Any]) -> tuple[float | None, dict[str, int]]:
    """Input cost at Anthropic's multipliers / the same tokens all at the base price."""
    tokens = {"uncached": sum(c.input_tokens or 0 for c in calls),
              "cache_write": sum(c.cache_creation_input_tokens or 0 for c in calls),
              "cache_read": sum(c.cache_read_input_tokens or 0 for c in calls)}
    total = sum(tokens.values())
    paid = (tokens["uncached"] * BASE_INPUT + tokens["cache_write"] * CACHE_WRITE_5M
            + tokens["cache_read"] * CACHE_READ)
    return (None if not total else paid / (total * BASE_INPUT)), tokens


async def _calls(b: Bench, run: Run) -> list[Any]:
    calls = (await b.ledger.calls.in_sessions([run.session_id], limit=10_000))[run.session_id]
    return [c for c in calls if c.error_code is None]


def _after_compaction(calls: list[Any]) -> list[Any]:
    """The first turn's call after each summarizer call: where a compaction breaks a prefix."""
    return [c for before, c in zip(calls, calls[1:])
            if before.purpose is Purpose.SUMMARIZE and c.purpose is not Purpose.SUMMARIZE]


def _merge(run: Run) -> str:
    if run.first_merge is not None:
        return f"first merge at compaction {run.first_merge}"
    return "no merge"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


async def _rows(b: Bench, strategy: str, runs: dict[tuple[str, str], Run]) -> None:
    s = b.sizes
    run = runs[strategy, BREAKPOINTS]
    calls = await _calls(b, run)
    summarizing = [c for c in calls if c.purpose is Purpose.SUMMARIZE]
    first_after = _after_compaction(calls)
    turns = [c for c in calls if c.purpose is not Purpose.SUMMARIZE]
    label = f"{strategy}:"
    triggers = {t: sum(c["trigger"] == t for c in run.compactions) for t in ("auto", "passive")}
    b.add(S16, f"{label} the conversation, window {s.cache_window:,} tokens, "
               f"{s.cache_keep:,} kept", None, None,
          value=len(run.compactions), unit="compactions",
          status="failed" if run.stopped else "ok",
          note=f"{run.messages:,} of {s.cache_messages:,} messages in {run.seconds:.0f} s, "
               f"{len(turns):,} turn calls + {len(summarizing)} summarizer calls; "
               f"{triggers['auto']} auto, {triggers['passive']} passive; at most "
               f"{max((c['stand_ins'] for c in run.compactions), default=0)} stand-ins "
               f"holding {max((c['stand_in_tokens'] for c in run.compactions), default=0):,} "
               "tokens" + (f"; {_merge(run)}" if strategy == "segmented" else "")
               + (f"; {len(run.trouble)} compactions failed or skipped (first: "
                  f"{run.trouble[0]})" if run.trouble else "")
               + (f"; STOPPED {run.stopped}" if run.stopped else ""),
          compactions=run.compactions, trouble=run.trouble[:20], stopped=run.stopped)

    share = _share(calls)
    b.add(S16, f"{label} input in a shared prefix, all calls", None, None,
          value=None if share is None else round(share, 1), unit="%",
          note=f"turn calls {_pct(_share(turns))}; the first turn after each compaction "
               f"{_pct(_share(first_after))} ({len(first_after)} calls); from the calls' "
               "shared_prefix_tokens / prompt_tokens")
    summary_share = _share(summarizing)
    b.add(S16, f"{label} input in a shared prefix, summarizer calls", None, None,
          value=None if summary_share is None else round(summary_share, 1), unit="%",
          target="≥ 90 %", met=None if summary_share is None else summary_share >= 90,
          note=f"{len(summarizing)} summarizer calls, each sending the conversation's own "
               "request with the instruction appended")

    for mode in (BREAKPOINTS, UNMARKED):
        if (strategy, mode) not in runs:
            continue
        mode_calls = calls if mode == BREAKPOINTS else await _calls(b, runs[strategy, mode])
        # The same conversation, compacted at the same messages, or the comparison is void.
        same = [c["at"] for c in runs[strategy, mode].compactions] == \
            [c["at"] for c in run.compactions]
        cost, tokens = _cost(mode_calls)
        after, _ = _cost(_after_compaction(mode_calls))
        summarizer, _ = _cost([c for c in mode_calls if c.purpose is Purpose.SUMMARIZE])
        b.add(S16, f"{label} input cost / uncached, {mode}", None, None,
              value=None if cost is None else round(cost, 3), unit="×",
              note=f"stub-reported tokens: {tokens['cache_read']:,} read, "
                   f"{tokens['cache_write']:,} written, {tokens['uncached']:,} uncached; "
                   f"summarizer calls {summarizer or 0:.3f}×, "
                   f"first turn after a compaction {after or 0:.3f}×; "
                   f"{runs[strategy, mode].messages:,} messages, shared prefix "
                   f"{_pct(_share(mode_calls))}"
                   + ("" if same else "; DIFFERENT compactions from the run with breakpoints"),
              **tokens)

    marked = runs[strategy, MARKERS]
    kept = [c["markers"] for c in marked.compactions]
    lost = next((i for i, c in enumerate(marked.compactions, 1)
                 if c["markers"] < c["planted"]), None)
    after_all = [c["markers"] for c in marked.compactions if c["planted"] == s.cache_markers]
    b.add(S16, f"{label} of {s.cache_markers} marker facts, in HEAD's prompt after every "
               "compaction (offline summarizer)", None, None,
          value=min(after_all, default=None), unit="kept (fewest once all planted)",
          status="failed" if marked.stopped else "ok",
          note=("none lost" if lost is None else f"first lost at compaction {lost}")
               + f" of {len(kept)}; kept after each: {', '.join(map(str, kept))}"
               + (f" (all {s.cache_markers} planted by compaction "
                  f"{len(kept) - len(after_all) + 1})" if after_all else "")
               + (f"; {_merge(marked)}" if strategy == "segmented" else "")
               + (f"; STOPPED {marked.stopped}" if marked.stopped else ""),
          kept_after_each=kept, first_loss=lost, first_merge=marked.first_merge,
          stopped=marked.stopped)

    for point, (stats, base, nodes, tokens) in sorted(run.renders.items()):
        b.add(S16, f"{label} HEAD's compacted render at {point:,} messages", stats, base,
              note=f"{nodes} nodes, {tokens:,} tokens: the prompt the last compaction left")
    missing = [p for p in s.cache_points if p not in run.renders]
    if len(run.renders) >= 2:
        points = sorted(run.renders)
        growth = run.renders[points[-1]][0].p50_ms / run.renders[points[0]][0].p50_ms
        b.add(S16, f"{label} render {points[-1]:,} / {points[0]:,} messages (p50 ratio)",
              None, None, value=round(growth, 2), unit="×", target="≤ 1.5", met=growth <= 1.5,
              note=f"{run.renders[points[-1]][2]} vs {run.renders[points[0]][2]} nodes"
                   + (f"; not reached: {', '.join(map(str, missing))}" if missing else ""))
    elif missing:
        b.add(S16, f"{label} render points not reached: {', '.join(map(str, missing))}",
              None, None, status="failed", note=f"the conversation stopped {run.stopped}")

    size = (await b.loader.db.read("bench_session_size", session_id=run.session_id))[0]
    per_message = None if run.store_bytes is None else round(run.store_bytes / run.messages)
    b.add(S16, f"{label} storage of the conversation", None, None,
          value=per_message if per_message is not None else size["nodes"],
          unit="bytes/message" if per_message is not None else "nodes",
          note=f"{size['nodes']:,} nodes ({len(run.compactions)} summaries), "
               f"{size['calls']:,} calls, {size['tool_uses']:,} tool uses, {size['events']:,} "
               f"events; {size['relationships']:,} relationships"
               + ("" if run.store_bytes is None else
                  f"; store +{run.store_bytes / 1e6:.1f} MB"), **size)
