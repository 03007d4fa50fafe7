"""The capsule viewer (/ui) in a real browser: headless Debian chromium driven by selenium.

Shared by tests/integration/test_ui_browser.py and by the screenshot entry point:

    python -m tests.browser --screenshots docs/images

which starts Neo4j the way the tests do (tests/neo4j_source.py; NEO4J_URI, or
NEO4J_TEST_URI, names an existing one instead), serves the app on a free loopback port,
loads the demo conversation (service.demo) and saves PNGs of the viewer at 1400x900.

A missing browser or driver is an error with the command that installs them, never a skip.
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import httpx

INSTALL_HINT = ("install them with `apt-get install chromium chromium-driver` "
                "(Debian's headless-capable chromium and its matching chromedriver)")
WINDOW = (1400, 900)


class BrowserMissing(RuntimeError):
    pass


# -- the service ------------------------------------------------------------------------


class LiveService:
    """The real app (create_app) served by uvicorn on a loopback port, in a thread with an
    event loop and a Neo4j driver of its own, so synchronous selenium code can drive it.

    `tokens`: bearer token -> tenant (the page then needs one); none: loopback mode, every
    request belongs to `tenant`. `env`: further settings (a model provider's, say).
    """

    def __init__(self, neo4j_uri: str, user: str = "neo4j", password: str = "",
                 tokens: dict[str, str] | None = None, tenant: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.neo4j = (neo4j_uri, user, password)
        self.tokens = tokens or {}
        self.env = env or {}
        self.tenant = tenant or f"ui-{uuid.uuid4().hex[:10]}"
        self.url = ""
        self._server: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    @property
    def token(self) -> str | None:
        """The first configured token (None in loopback mode)."""
        return next(iter(self.tokens), None)

    def start(self, timeout: float = 120) -> "LiveService":
        from service.neo4j_local import free_port

        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self._thread = threading.Thread(target=self._run, args=(port,), daemon=True,
                                        name="ctxdag-ui-service")
        self._thread.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._failure is not None:
                raise RuntimeError(f"the service did not start: {self._failure!r}")
            if self._server is not None and self._server.started:
                return self
            time.sleep(0.05)
        raise RuntimeError(f"the service did not start within {timeout:.0f} s")

    def _run(self, port: int) -> None:
        try:
            asyncio.run(self._serve(port))
        except BaseException as e:  # noqa: BLE001 - reported by start()
            self._failure = e

    async def _serve(self, port: int) -> None:
        import uvicorn

        from service.api.app import create_app
        from service.api.server import server_config
        from service.config import Settings
        from service.store import Database, open_driver

        env = {"CTXDAG_TENANT": self.tenant, **self.env}
        if self.tokens:
            env["CTXDAG_API_TOKENS"] = ",".join(f"{t}={n}" for t, n in self.tokens.items())
        settings = Settings.from_env(env)
        driver = open_driver(*self.neo4j)
        try:
            database = Database(driver)
            await database.apply_schema()
            self._server = uvicorn.Server(server_config(
                create_app(settings, database), settings, "127.0.0.1", port,
                log_level="warning"))
            await self._server.serve()
        finally:
            await driver.close()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._thread = self._server = None

    def __enter__(self) -> "LiveService":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # GraphQL over HTTP, synchronously: writes the tests make while the page watches.

    def gql(self, query: str, **variables: Any) -> dict:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        response = httpx.post(f"{self.url}/graphql", headers=headers, timeout=120,
                              json={"query": query, "variables": variables})
        body = response.json()
        if body.get("errors"):
            raise AssertionError(f"GraphQL errors: {body['errors']}")
        return body["data"]

    def demo(self) -> str:
        """The demo conversation (a fork, a tool call, two compactions, a spawned task)."""
        from service.demo import run_demo

        return run_demo(self.url, self.token, out=lambda line: None)


# -- the browser ------------------------------------------------------------------------


def start_browser(width: int = WINDOW[0], height: int = WINDOW[1]):
    """Headless chromium through chromedriver (both from Debian's packages)."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", chromedriver))
               if path is None]
    if missing:
        raise BrowserMissing(f"{' and '.join(missing)} not found on PATH; {INSTALL_HINT}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--hide-scrollbars",
                     "--force-device-scale-factor=1", "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=chromedriver),
                                  options=options)
    except Exception as e:  # noqa: BLE001 - the reason is reported as it is
        raise BrowserMissing(f"chromium did not start through chromedriver ({e}); "
                             f"{INSTALL_HINT}") from e
    # --window-size is the viewport in headless mode; grow the window if chrome takes some.
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    if inner != [width, height]:
        outer = driver.get_window_size()
        driver.set_window_size(outer["width"] + width - inner[0],
                               outer["height"] + height - inner[1])
    return driver


def browser_for_tests() -> Iterator[Any]:
    """A test module's browser (`yield from` it in a fixture): a missing one fails the
    test with the command that installs it, never skips it."""
    import pytest

    try:
        driver = start_browser()
    except BrowserMissing as e:
        pytest.fail(f"the viewer's browser tests need a browser: {e}", pytrace=False)
    yield driver
    driver.quit()


def service_with_token(neo4j_server: Any, tenant_prefix: str) -> Iterator[LiveService]:
    """The app for a test module (`yield from` it in a fixture), with one API token whose
    tenant, named after `tenant_prefix`, is the service's `tenant`: the page must take the
    token from the URL fragment and send it over HTTP and in the websocket's connection_init."""
    run = uuid.uuid4().hex[:8]
    tenant = f"{tenant_prefix}-{run}"
    with LiveService(neo4j_server.uri, neo4j_server.user, neo4j_server.password,
                     tokens={f"ui-token-{run}": tenant}, tenant=tenant) as live:
        yield live


class Viewer:
    """The page, through the stable hooks it promises: `data-id` / `data-kind` on drawn
    nodes and capsules, classes `highlighted`, `expanded`, `head`, `data-call-id` on calls,
    `#live-status`, `#render-panel` rows."""

    def __init__(self, driver: Any, service: LiveService) -> None:
        self.driver = driver
        self.service = service

    def open(self, session_id: str | None = None, token: str | None = None) -> None:
        url = f"{self.service.url}/ui"
        if session_id:
            url += f"?session={session_id}"
        if token:
            url += f"#token={token}"
        self.driver.get(url)

    def wait(self, condition: Callable[[], Any], timeout: float = 20,
             what: str = "the page") -> Any:
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                value = condition()
                if value:
                    return value
            except Exception as e:  # noqa: BLE001 - stale elements while the page redraws
                last = e
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}"
                             + (f" (last error: {last!r})" if last else "")
                             + f"\nbrowser log: {self.console()[-10:]}")

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def console(self, level: str | None = None) -> list[str]:
        """The browser console since the last call (reading drains it), or only `level`
        entries (SEVERE: uncaught errors, failed requests)."""
        try:
            return [entry["message"] for entry in self.driver.get_log("browser")
                    if level is None or entry["level"] == level]
        except Exception:  # noqa: BLE001
            return []

    # What is drawn.

    def drawn(self) -> dict[str, str]:
        """Drawn node and capsule ids -> data-kind, in document order."""
        return dict(self.js(
            "return [...document.querySelectorAll('#graph [data-id]')]"
            ".map(e => [e.dataset.id, e.dataset.kind])"))

    def classes(self, node_id: str) -> set[str]:
        return set(self.js("const e = document.querySelector("
                           "`#graph [data-id=\"${arguments[0]}\"]`);"
                           " return e ? [...e.classList] : []", node_id))

    def highlighted(self) -> set[str]:
        return set(self.js("return [...document.querySelectorAll('#graph .highlighted[data-id]')]"
                           ".map(e => e.dataset.id)"))

    def wait_drawn(self, node_id: str, timeout: float = 20) -> None:
        self.wait(lambda: node_id in self.drawn(), timeout, f"{node_id} to be drawn")

    def render_rows(self) -> list[dict]:
        return self.js("return [...document.querySelectorAll('#render-panel [data-id]')]"
                       ".map(e => ({id: e.dataset.id, summary: e.classList.contains('summary')}))")

    def live(self) -> str:
        return self.js("const e = document.getElementById('live-status');"
                       " return e ? e.textContent.trim() : ''")

    # What a user does.

    def click_node(self, node_id: str) -> None:
        """A click on the node's card (or a capsule's header), as a user makes it. The page
        may redraw meanwhile (a live refetch): a stale element is looked up again."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By

        for attempt in range(5):
            try:
                element = self.driver.find_element(
                    By.CSS_SELECTOR, f'#graph [data-id="{node_id}"] .hit')
                self.js("arguments[0].scrollIntoView({block: 'center', inline: 'center'})",
                        element)
                element.click()
                return
            except StaleElementReferenceException:
                if attempt == 4:
                    raise
                time.sleep(0.1)

    def click_call(self, call_id: str) -> None:
        from selenium.webdriver.common.by import By

        self.show_tab("calls")
        self.wait(lambda: self.driver.find_elements(
            By.CSS_SELECTOR, f'[data-call-id="{call_id}"]'), what=f"call {call_id} listed")
        item = self.driver.find_element(By.CSS_SELECTOR, f'[data-call-id="{call_id}"]')
        self.js("arguments[0].scrollIntoView({block: 'center'})", item)
        item.click()

    def show_tab(self, name: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, f'[data-tab="{name}"]').click()

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))


# -- screenshots ------------------------------------------------------------------------


def _neo4j(scratch: Path):
    """NEO4J_URI (the service's own variable) or the tests' choice (tests/neo4j_source.py)."""
    import os

    from tests.neo4j_source import Neo4jServer, start_neo4j

    if os.environ.get("NEO4J_URI"):
        return Neo4jServer(os.environ["NEO4J_URI"], os.environ.get("NEO4J_USER", "neo4j"),
                           os.environ.get("NEO4J_PASSWORD", ""), "NEO4J_URI")
    return start_neo4j(scratch)


def screenshots(directory: Path, say: Callable[[str], None] = print) -> list[Path]:
    with tempfile.TemporaryDirectory(prefix="ctxdag-ui-") as scratch:
        neo4j = _neo4j(Path(scratch))
        say(f"Neo4j: {neo4j.origin} at {neo4j.uri}")
        try:
            with LiveService(neo4j.uri, neo4j.user, neo4j.password) as service:
                session = service.demo()
                say(f"demo session {session} at {service.url}/ui?session={session}")
                driver = start_browser()
                try:
                    return _shoot(Viewer(driver, service), session, directory, say)
                finally:
                    driver.quit()
        finally:
            neo4j.stop()


def _shoot(viewer: Viewer, session: str, directory: Path,
           say: Callable[[str], None]) -> list[Path]:
    service = viewer.service
    view = service.gql(
        "query($s: ID!) { session(id: $s) { headId activeSummaryId"
        " modelCalls(first: 50) { nodes { id purpose readIds } } } }", s=session)["session"]
    capsule = view["activeSummaryId"]
    viewer.open(session)
    viewer.wait(lambda: capsule in viewer.drawn(), what="the capsule")
    viewer.wait(lambda: viewer.live() == "live", what="the live subscription")
    viewer.js("document.getElementById('graph-scroll').scrollTo(0, 0)")
    time.sleep(0.3)
    saved = []

    def save(name: str) -> None:
        viewer.js("document.getElementById('tooltip').hidden = true")
        path = directory / name
        viewer.screenshot(path)
        saved.append(path)
        say(f"saved {path}")

    save("viewer-capsule.png")
    viewer.click_node(capsule)
    viewer.wait(lambda: "expanded" in viewer.classes(capsule), what="the capsule to expand")
    # The chat call that read most of the turns the capsule now covers.
    rows = {r["id"]: r for r in service.gql(
        "query($s: ID!) { session(id: $s) { graph { nodes { id foldedInto } } } }",
        s=session)["session"]["graph"]["nodes"]}
    chat = max((c for c in view["modelCalls"]["nodes"] if c["purpose"] == "CHAT"),
               key=lambda c: sum(rows[i]["foldedInto"] == capsule for i in c["readIds"]))
    viewer.click_call(chat["id"])
    viewer.wait(lambda: viewer.highlighted(), what="the call's reads highlighted")
    viewer.js("document.getElementById('graph-scroll').scrollTo(0, 0)")
    time.sleep(0.3)
    save("viewer-expanded-call.png")
    viewer.click_node(capsule)  # collapse again
    viewer.wait(lambda: "expanded" not in viewer.classes(capsule), what="the capsule to fold")
    viewer.click_node(view["headId"])
    viewer.wait(lambda: viewer.render_rows(), what="the render panel")
    time.sleep(0.3)
    save("viewer-render.png")
    return saved


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.browser", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--screenshots", type=Path, required=True, metavar="DIR",
                        help="where to save the PNGs (e.g. docs/images)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        screenshots(args.screenshots)
    except BrowserMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
