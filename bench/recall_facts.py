"""Recall of planted facts (docs/guides/recall.md; docs/benchmarks.md, "Recall of planted facts").

A 2,000-message agent session (user asks, the assistant calls a tool, the tool answers,
the assistant reports) holds 50 facts, each a sentence with a random code planted in a
tool result spread over the session. The session is compacted every 200 messages (the
offline extractive summarizer, rolling), then a scripted model is asked for each fact:

- summary only: the fact's sentence appears verbatim in the text of the summaries HEAD's
  render shows (what the model has without recall);
- recall, search: within one sendMessage the model calls history_search for the fact's
  label and the answer it is given holds the sentence verbatim;
- recall, expand: every page of history_expand of the summary HEAD shows (cursor after
  cursor, 4,000 tokens a page), as a model paging through it reads them: the sentence is
  on a page verbatim;
and the READ edges of each turn's last call are checked to name the fact's node.

    NEO4J_URI=bolt://127.0.0.1:7690 python -m bench.recall_facts [--messages 2000] [--json]

It writes in a tenant of its own (bench-recall-<random>) and leaves it for inspection.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import string
import time
import uuid

from service.context.budget import BudgetPolicy
from service.context.compaction import Compactor
from service.context.summarizers import OfflineExtractiveSummarizer
from service.context.tokens import HeuristicEstimator
from service.model.blocks import ToolResult
from service.model.validate import Limits
from service.recall import expand
from service.store import Database, Ledger, open_driver
from service.turns.providers import ModelReply
from service.turns.service import Turns

FACTS = 50
COMPACT_EVERY = 200  # messages
KEEP_RECENT = 400  # tokens kept verbatim by each compaction


def fact_sentence(i: int, rng: random.Random) -> tuple[str, str]:
    code = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(10))
    return f"fact{i:02d}", f"Marker fact{i:02d}: the deploy token for shard {i} is {code}."


class FactSeeker:
    """The scripted model: asked "recall factNN", it calls history_search for factNN, then
    answers. It keeps the recall results it was given this turn."""

    name = "scripted"
    model = "fact-seeker"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def complete(self, prompt):
        last = prompt.nodes[-1]
        results = [p.text for b in last.blocks if isinstance(b, ToolResult) for p in b.content]
        self.seen += results
        if results:
            return ModelReply("done", self.model, 1, 1, {},
                              blocks=[{"type": "text", "text": "done"}])
        label = re.search(r"recall (fact\d\d)", last.content).group(1)
        block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:16]}",
                 "name": "history_search", "input": {"query": label}}
        return ModelReply("", self.model, 1, 1, {}, blocks=[block], stop_reason="tool_use")


async def build(ledger: Ledger, compactor: Compactor, messages: int, rng: random.Random):
    session = await ledger.sessions.create("recall facts", "You operate the fleet.", recall=True)
    rounds = messages // 4
    at = sorted(rng.sample(range(rounds - 20), FACTS))  # never in the retained tail
    facts: dict[str, str] = {}
    fact_nodes: dict[str, str] = {}
    compactions = 0
    for r in range(rounds):
        await ledger.head.append_message(session.id, "user", f"Round {r}: check host {r}.")
        await ledger.head.append_message(session.id, "assistant", blocks=[
            {"type": "text", "text": f"Checking host {r}."},
            {"type": "tool_use", "id": f"toolu_r{r}", "name": "inspect",
             "input": {"host": r}}])
        output = f"host {r}: load {rng.random():.2f}, disk {rng.randint(1, 99)}% used. " * 3
        if r in at:
            label, sentence = fact_sentence(len(facts), rng)
            facts[label] = sentence
            output += sentence
        tool = await ledger.head.append_message(session.id, "tool", blocks=[
            {"type": "tool_result", "tool_use_id": f"toolu_r{r}", "content": output}])
        if r in at:
            fact_nodes[label] = tool.node.id
        await ledger.head.append_message(session.id, "assistant", f"Host {r} is fine.")
        if (4 * (r + 1)) % COMPACT_EVERY == 0:
            result = await compactor.compact(session.id, keep_recent_tokens=KEEP_RECENT)
            compactions += result.status.value == "COMPACTED"
    return session, facts, fact_nodes, compactions


async def run(messages: int, seed: int) -> dict:
    rng = random.Random(seed)
    driver = open_driver(os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    try:
        db = Database(driver)
        await db.apply_schema()
        ledger = Ledger.open(db, f"bench-recall-{uuid.uuid4().hex[:8]}", Limits())
        compactor = Compactor(ledger, OfflineExtractiveSummarizer(), BudgetPolicy(),
                              HeuristicEstimator())
        started = time.perf_counter()
        session, facts, fact_nodes, compactions = await build(ledger, compactor, messages, rng)
        built = time.perf_counter() - started
        render = await ledger.views.render(session.id)
        summaries = await ledger.summaries.get_many(list(render.stand_in_ids))
        summary_text = "\n".join(s.content for s in summaries)
        in_summary = sum(sentence in summary_text for sentence in facts.values())
        seeker = FactSeeker()
        turns = Turns(ledger, compactor, seeker)
        by_search = read = 0
        for label, sentence in facts.items():
            seeker.seen = []
            result = await turns.send_message(session.id, f"recall {label}")
            search_text = next((s for s in seeker.seen if "covered by summary" in s), "")
            by_search += sentence in search_text
            reads = (await ledger.calls.get(result.call_id)).read_ids
            read += fact_nodes[label] in reads
        # Every covered turn, paged through expand: each fact verbatim somewhere (the render
        # again: the turns may have compacted automatically).
        render = await ledger.views.render(session.id)
        pages, cursor, expanded = 0, None, []
        while True:
            page = await expand(ledger, session.id, render.summary_id, None, cursor=cursor)
            expanded += [n.content for n in page.turns]
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        whole = "\n".join(expanded)
        violations = await ledger.violations(session.id)
        return {
            "messages": messages, "facts": FACTS, "compactions": compactions,
            "strategy": "rolling", "summary_only": in_summary,
            "recall_search": by_search,
            "recall_expand_all_pages": sum(s in whole for s in facts.values()),
            "expand_pages": pages, "calls_reading_the_fact_node": read,
            "violations": len(violations), "build_seconds": round(built, 1),
            "seconds": round(time.perf_counter() - started, 1),
        }
    finally:
        await driver.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = asyncio.run(run(args.messages, args.seed))
    if args.json:
        print(json.dumps(found))
        return
    n = found["facts"]
    print(f"{found['messages']} messages, {found['compactions']} compactions ({found['strategy']}), "
          f"{n} planted facts, {found['seconds']} s")
    print(f"  in the summary text alone:           {found['summary_only']}/{n}")
    print(f"  recall, history_search's answer:     {found['recall_search']}/{n}")
    print(f"  recall, every expand page:           {found['recall_expand_all_pages']}/{n} "
          f"({found['expand_pages']} pages)")
    print(f"  turn's last call READs the fact node: {found['calls_reading_the_fact_node']}/{n}")
    print(f"  ctxdag check violations:              {found['violations']}")


if __name__ == "__main__":
    main()
