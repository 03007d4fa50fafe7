"""GraphiQL works without internet: its page loads every script and style from the
service itself (the files vendored in service/api/static/graphiql/)."""
from __future__ import annotations

import gzip
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

STATIC = Path(__file__).resolve().parents[2] / "service" / "api" / "static" / "graphiql"
URL = re.compile(r"\b(?:https?|wss?)://", re.IGNORECASE)


class Page(HTMLParser):
    """Every URL the page names (src, href) and the text of its inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []  # (tag, url)
        self.inline_scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name in ("src", "href", "action", "data", "poster", "srcset"):
            if named.get(name) is not None:
                self.urls.append((tag, named[name]))
        self._in_script = tag == "script" and "src" not in named

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.inline_scripts.append(data)


async def graphiql(url: str, headers: dict | None = None) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.get(f"{url}/graphql", headers={"Accept": "text/html", **(headers or {})})


def parse(response: httpx.Response) -> Page:
    page = Page()
    page.feed(response.text)
    page.close()
    return page


def assets(url: str, page: Page) -> list[str]:
    """The page's URLs resolved against it, other than inline data: URLs."""
    return [urljoin(f"{url}/graphql", ref) for _, ref in page.urls
            if not ref.startswith("data:")]


async def test_the_page_references_nothing_outside_the_service(api):
    response = await graphiql(api.url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = parse(response)
    tags = sorted(tag for tag, _ in page.urls)
    assert tags == ["link", "link", "script", "script", "script"], page.urls
    service = urlsplit(api.url)
    for resolved in assets(api.url, page):
        parts = urlsplit(resolved)
        assert (parts.scheme, parts.netloc) == (service.scheme, service.netloc), resolved
        assert parts.path.startswith("/graphql/static/"), resolved
    for tag, ref in page.urls:
        assert not ref.startswith("//") and (ref.startswith(("/", "data:"))), (tag, ref)
    # Inline scripts name no URL: the endpoints are derived from the page's own location.
    assert page.inline_scripts and not any(URL.search(s) for s in page.inline_scripts)
    assert not URL.search(re.sub(r"<script\b.*?</script>", "", response.text, flags=re.S))
    assert "unpkg" not in response.text and "jsdelivr" not in response.text
    assert "subscriptionUrl" in response.text and 'protocol === "https:"' in response.text


async def test_every_asset_of_the_page_is_served(api):
    page = parse(await graphiql(api.url))
    kinds = set()
    async with httpx.AsyncClient() as http:
        for url in assets(api.url, page):
            response = await http.get(url)
            assert response.status_code == 200, url
            media_type = response.headers["content-type"].split(";")[0]
            assert media_type in ("text/javascript", "text/css"), (url, media_type)
            kinds.add(media_type)
            assert len(response.content) > 10_000, url
            assert "immutable" in response.headers["cache-control"]
            assert "max-age=31536000" in response.headers["cache-control"]
            assert response.headers["x-content-type-options"] == "nosniff"
            name = url.rsplit("/", 1)[1]
            assert response.content == (STATIC / name).read_bytes(), name  # unmodified
            again = await http.get(url, headers={"If-None-Match": response.headers["etag"]})
            assert again.status_code == 304 and again.content == b""
    assert kinds == {"text/javascript", "text/css"}


async def test_assets_are_compressed_for_clients_that_accept_gzip(api):
    url = f"{api.url}/graphql/static/graphiql-3.8.3.min.js"
    async with httpx.AsyncClient() as http:
        async with http.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as response:
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
        plain = await http.get(url, headers={"Accept-Encoding": "identity"})
    assert response.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in response.headers["vary"].lower()
    assert len(raw) < len(plain.content) / 3
    assert gzip.decompress(raw) == plain.content == (STATIC / "graphiql-3.8.3.min.js").read_bytes()
    assert "content-encoding" not in plain.headers


async def test_only_the_vendored_files_are_served(api):
    async with httpx.AsyncClient() as http:
        for name in ("README.md", "LICENSE.react", "..%2Ftransport.py", "graphiql.min.js.map",
                     "..%2F..%2Fconfig.py"):
            response = await http.get(f"{api.url}/graphql/static/{name}")
            assert response.status_code == 404, name
        unknown = await http.get(f"{api.url}/graphql/static/nothing.js")
    assert unknown.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_the_page_starts_with_an_authorization_header_to_fill(api):
    """`api` requires tokens: the headers editor, open, holds the header to complete."""
    page = parse(await graphiql(api.url))
    script = "".join(page.inline_scripts)
    assert "var tokenRequired = true;" in script
    assert '"Authorization": "Bearer <token>"' in script


def test_the_vendored_files_are_documented():
    readme = (STATIC / "README.md").read_text(encoding="utf-8")
    from service.api.graphiql import GRAPHIQL_ASSETS

    for name in GRAPHIQL_ASSETS:
        assert (STATIC / name).stat().st_size > 10_000, name
        assert f"`{name}`" in readme, name
    assert (STATIC / "LICENSE.graphiql").exists() and (STATIC / "LICENSE.react").exists()
    assert readme.count("MIT") >= len(GRAPHIQL_ASSETS)
