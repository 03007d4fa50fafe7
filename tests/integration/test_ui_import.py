"""The capsule viewer imports a transcript file it is given (service/ui/importer.js): in
headless chromium, against the real app on a real Neo4j (the fixtures of
test_ui_browser.py). A file dropped on the page goes through importTranscript and the
imported session is drawn with its capsule; a file too big for a request is refused in
the page, naming the CLI; a file the service refuses shows the service's coded error."""
from __future__ import annotations

from pathlib import Path

from tests.integration.test_ui_browser import browser, graph_of, service, viewer  # noqa: F401

CC_SESSION = (Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code"
              / "session.jsonl")

DROP = """
const [text, name] = arguments;
const transfer = new DataTransfer();
transfer.items.add(new File([text], name, {type: "application/x-ndjson"}));
for (const type of ["dragover", "drop"]) {
  document.body.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true,
                                                   cancelable: true}));
}
"""
PICK = """
const [text, name] = arguments;
const transfer = new DataTransfer();
transfer.items.add(new File([text], name));
const input = document.getElementById("import-file");
input.files = transfer.files;
input.dispatchEvent(new Event("change"));
"""


def status(viewer) -> tuple[str, str]:
    return tuple(viewer.js("const e = document.getElementById('import-status');"
                           " return [e.className, e.textContent]"))


def test_a_dropped_transcript_is_imported_and_drawn_with_its_capsule(viewer, service):
    viewer.open(token=service.token)
    viewer.wait(lambda: viewer.js("return document.getElementById('import-transcript')"
                                  ".offsetParent !== null"), what="the Import transcript… button")
    viewer.console()
    viewer.js(DROP, CC_SESSION.read_text(), CC_SESSION.name)
    viewer.wait(lambda: viewer.js("return location.search").startswith("?session="),
                what="the imported session to open")
    session = viewer.js("return new URLSearchParams(location.search).get('session')")
    view = graph_of(service, session)
    capsule = view["activeSummaryId"]
    assert capsule and view["rows"][capsule]["coversIds"]
    viewer.wait(lambda: viewer.drawn().get(capsule) == "capsule", what="the imported capsule")
    assert "head" in viewer.classes(view["headId"])
    assert not set(view["rows"][capsule]["coversIds"]) & set(viewer.drawn())
    assert status(viewer) == ("import-status done", f"{CC_SESSION.name}: imported")

    # The same file again, picked this time: unchanged, and the session stays drawn.
    viewer.js(PICK, CC_SESSION.read_text(), CC_SESSION.name)
    viewer.wait(lambda: status(viewer) == ("import-status done",
                                           f"{CC_SESSION.name}: unchanged"),
                what="the re-import to read unchanged")
    assert viewer.drawn().get(capsule) == "capsule"
    assert viewer.console("SEVERE") == []


def test_a_file_too_big_or_refused_says_why(viewer, service):
    viewer.open(token=service.token)
    viewer.wait(lambda: viewer.js("return document.getElementById('import-file') !== null"))
    sessions = service.gql("{ sessions(first: 1) { totalCount } }")["sessions"]["totalCount"]
    viewer.js("const text = 'x'.repeat(9 * 1024 * 1024);" + PICK.replace(
        "const [text, name] = arguments;", "const name = 'huge.jsonl';"))
    viewer.wait(lambda: status(viewer)[0] == "import-status error", what="the refusal")
    assert "huge.jsonl is too big to import from the page" in status(viewer)[1]
    assert "The CLI can import it: ctxdag import-transcript FILE" in status(viewer)[1]

    viewer.js(DROP, '{"type": "user", "parentUuid": null}\n', "bad.jsonl")
    viewer.wait(lambda: status(viewer)[1].startswith("BAD_INPUT: bad.jsonl:1: "),
                what=f"the service's error (the status reads {status(viewer)})")
    assert status(viewer)[0] == "import-status error"
    assert service.gql("{ sessions(first: 1) { totalCount } }")["sessions"]["totalCount"] \
        == sessions
