"""Shapes found in real, public session files that the fixtures written from documentation
lacked (each fixture here is of that shape, its content invented): imported, rendered and
sent as a provider request the SDKs' own types take."""
import json
from pathlib import Path

from service.context.render import render_context
from service.transcripts import import_text, model
from service.transcripts.model import Mode
from tests.integration.helpers import assert_sound
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CODEX_INSTRUCTIONS = FIXTURES / "codex" / "rollout-2026-06-10T07-30-00-019ea1c4-instructions.jsonl"

IMPORT = """
mutation ($content: String!, $format: TranscriptFormat, $file: String) {
  importTranscript(content: $content, format: $format, fileName: $file) { session { id } }
}"""
VIEW = """query ($s: ID!) { session(id: $s) {
  render { nodes { role content metadata }
           anthropic: request(format: ANTHROPIC_MESSAGES)
           openai: request(format: OPENAI_CHAT) }
} }"""


def system_text(body: dict) -> str:
    """An Anthropic body's system prompt as text (a string, or text blocks)."""
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def test_codex_base_instructions_are_the_system_prompt(api):
    # Codex (0.13x) writes the system prompt it sends (the Responses API `instructions`)
    # into session_meta.base_instructions: ROOT holds it, so the render and the requests
    # built from it carry what Codex's model read.
    text = CODEX_INSTRUCTIONS.read_text()
    instructions = json.loads(text.splitlines()[0])["payload"]["base_instructions"]["text"]
    imported = await api.client(IMPORT, content=text, format="CODEX",
                                file=CODEX_INSTRUCTIONS.name)
    view = (await api.client(VIEW, s=imported["importTranscript"]["session"]["id"]))["session"]
    root = view["render"]["nodes"][0]
    assert (root["role"], root["content"]) == ("SYSTEM", instructions)
    assert root["metadata"]["source"]["line"] == 1
    anthropic, openai = view["render"]["anthropic"], view["render"]["openai"]
    assert_valid_anthropic(anthropic)
    assert_valid_openai(openai)
    assert system_text(anthropic) == instructions
    assert openai["messages"][0] == {"role": "system", "content": instructions}


async def test_codex_instructions_stay_on_root_as_the_file_grows(ledger):
    text = CODEX_INSTRUCTIONS.read_text()
    lines = text.splitlines(keepends=True)
    first = await import_text(ledger, "".join(lines[:6]), CODEX_INSTRUCTIONS.name, None)
    mode = Mode()
    grown = await import_text(ledger, text, CODEX_INSTRUCTIONS.name, None, mode)
    assert mode.degraded == [] and grown.session_id == first.session_id and grown.changed
    await assert_sound(ledger, grown.session_id)
    rendered = await render_context(ledger, grown.session_id)
    root, = await ledger.nodes.get_many([rendered.node_ids[0]])
    assert root.id == model.node_id(ledger.tenant, "codex", "019ea1c4-5d2e-7b10-9c3a-44f1e0d2b7a8",
                                    model.ROOT_KEY)
    assert root.content.startswith("You are a careful coding agent")
