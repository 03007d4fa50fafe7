"""`ctxdag demo`: a small conversation with a fork, two compactions, a tool call (a reply's
`tool_use` block and the message answering it) and a spawned task, written through the running service's GraphQL API, so GraphiQL and the viewer at /ui
show capsules at once."""
from __future__ import annotations

import httpx

APPEND = ("mutation($s: ID!, $r: Role!, $c: String!, $k: ID) { appendMessage(sessionId: $s,"
          " role: $r, content: $c, callerId: $k) { id } }")
APPEND_BLOCKS = ("mutation($s: ID!, $r: Role!, $b: [ContentBlockInput!]!) {"
                 " appendMessage(sessionId: $s, role: $r, blocks: $b) { id } }")
MUSEUMS = ["Vatican Museums", "Borghese Gallery", "Uffizi"]
LOOKUP = {"id": "toolu_demo_booking", "name": "booking_windows",
          "input": {"museums": MUSEUMS, "month": "May"}}
SEND = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {"
        " userNode { id } reply { id } } }")

CONVERSATION = [
    ("USER", "We are planning a week in Italy in May. We like art, food and short walks, "
             "and we do not want to rent a car."),
    ("ASSISTANT", "Rome, Florence and Bologna work well by train. Three nights in Rome, two "
                  "in Florence and two in Bologna keeps every transfer under two hours."),
    ("USER", "Which museums need advance booking? We would rather not queue for hours."),
    ("ASSISTANT", "Book the Vatican Museums and the Borghese Gallery in Rome and the Uffizi "
                  "in Florence. I will look up the current booking windows."),
]
BOOKING_WINDOWS = "booking windows: Vatican 60 days, Borghese 30 days, Uffizi 45 days"
FOLLOW_UPS = [
    "Where should we eat in Bologna? Something traditional, not touristy.",
    "Can you suggest one easy walk in each city?",
    "Summarize the plan as a day-by-day list.",
    "What should we pack for May weather?",
]


def base_url(url: str) -> str:
    """The service's address from either form a user may give: http://host:port, or its
    GraphQL endpoint http://host:port/graphql (a trailing slash is fine)."""
    return url.rstrip("/").removesuffix("/graphql")


class Demo:
    """Posts GraphQL to the service; any failure ends the demo with one line, no traceback."""

    def __init__(self, url: str, token: str | None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.endpoint = f"{url}/graphql"
        self.http = httpx.Client(base_url=url, headers=headers, timeout=120)

    def __call__(self, query: str, **variables):
        try:
            answer = self.http.post("/graphql", json={"query": query, "variables": variables})
        except httpx.HTTPError as e:
            raise SystemExit(f"demo failed: cannot reach {self.endpoint} ({e}); is "
                             "`ctxdag serve` running there?") from None
        try:
            body = answer.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or ("data" not in body and "errors" not in body):
            raise SystemExit(f"demo failed: {self.endpoint} answered HTTP {answer.status_code}, "
                             f"not GraphQL: {answer.text[:200]!r}")
        if body.get("errors"):
            refused = ("" if answer.status_code == 200
                       else f"{self.endpoint} answered HTTP {answer.status_code}: ")
            raise SystemExit(f"demo failed: {refused}{body['errors'][0].get('message')}")
        return body["data"]


def run_demo(url: str, token: str | None = None, out=print) -> str:
    url = base_url(url)
    gql = Demo(url, token)
    session = gql("mutation { createSession(title: \"Trip planning (demo)\", systemPrompt: "
                  "\"You are a careful travel planner.\") { id } }")["createSession"]["id"]
    ids = []
    for role, text in CONVERSATION[:-1]:
        ids.append(gql(APPEND, s=session, r=role, c=text, k=None)["appendMessage"]["id"])
    # The last reply calls a tool; the message after it answers the call.
    ids.append(gql(APPEND_BLOCKS, s=session, r="ASSISTANT", b=[
        {"text": {"text": CONVERSATION[-1][1]}},
        {"toolUse": LOOKUP}])["appendMessage"]["id"])
    tool = gql(APPEND_BLOCKS, s=session, r="TOOL", b=[
        {"toolResult": {"toolUseId": LOOKUP["id"], "content": BOOKING_WINDOWS}}])
    gql(APPEND, s=session, r="ASSISTANT", k=None,
        c="Vatican: book 60 days ahead; Borghese: 30; Uffizi: 45. Set reminders now.")
    gql("mutation($n: ID!) { editMessage(nodeId: $n, content: \"Which museums are free on "
        "the first Sunday of the month?\") { reply { id } } }", n=ids[2])
    head = gql("query($s: ID!) { session(id: $s) { branches { tip { id } length } } }",
               s=session)["session"]["branches"]
    main_tip = max(head, key=lambda b: b["length"])["tip"]["id"]
    gql("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { id } }",
        s=session, n=main_tip)
    for text in FOLLOW_UPS[:2]:
        gql(SEND, s=session, c=text)
    gql("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 200) { status } }",
        s=session)
    for text in FOLLOW_UPS[2:]:
        gql(SEND, s=session, c=text)
    gql("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 200) { status } }",
        s=session)
    gql("mutation($s: ID!, $f: ID!) { spawnTask(sessionId: $s, fromNodeId: $f, prompt: "
        "\"Check train times Rome to Florence on a Saturday morning.\") { reply { id } } }",
        s=session, f=tool["appendMessage"]["id"])
    view = gql("query($s: ID!) { session(id: $s) { branches { length isHead } "
               "render { nodeIds summaryId } graph { nodes { id coversIds supersededSummary } }"
               " } }", s=session)["session"]
    capsule = next(n for n in view["graph"]["nodes"] if n["coversIds"])
    out(f"demo session {session}: {len(view['branches'])} branches, active summary "
        f"{capsule['id']} folds {len(capsule['coversIds'])} nodes; HEAD renders "
        f"{len(view['render']['nodeIds'])} nodes.")
    out(f"Open {url}/graphql and run:\n"
        f"  {{ session(id: \"{session}\") {{ branches {{ isHead length tip {{ content }} }}\n"
        f"    render {{ nodes {{ role content }} }}\n"
        f"    graph {{ nodes {{ id role predecessorId callerId isHead coversIds "
        f"supersededSummary }} }} }} }}")
    out(f"or open {url}/ui?session={session} to see it drawn, the summary as a capsule.")
    if token:
        # The token itself stays out of the output, which people paste into issues and chats.
        out("The viewer asks for the token once; or add #token=<your token> to that address.")
    return session
