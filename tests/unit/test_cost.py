"""The cost estimate: how many values an answer may hold, from the document and its variables."""
import re
from pathlib import Path

from graphql import (
    GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType, get_named_type,
    get_introspection_query, parse,
)

from service.api.cost import LIST_SIZES, PAGE, PROMPT, SESSION, Paged, estimate
from service.api.schema import schema
from service.config import Settings

SCHEMA = schema._schema
ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ("query($i: [ID!]!) { nodes(ids: $i) { ... on Message { readBy(first: 1000) {"
           " nodes { reads { id content } } } } } }")


def cost(query: str, **variables) -> int:
    return estimate(SCHEMA, parse(query), None, variables).total


def fields():
    for type_ in SCHEMA.type_map.values():
        if isinstance(type_, (GraphQLObjectType, GraphQLInterfaceType)) \
                and not type_.name.startswith("__"):
            for name, field in type_.fields.items():
                yield f"{type_.name}.{name}", field


def is_list(field) -> bool:
    type_ = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
    return isinstance(type_, GraphQLList)


def test_every_list_of_the_schema_is_sized_and_every_size_names_a_field():
    schema_fields = dict(fields())
    lists = {name for name, field in schema_fields.items() if is_list(field)}
    assert lists <= set(LIST_SIZES), f"lists the estimate does not size: {lists - set(LIST_SIZES)}"
    assert set(LIST_SIZES) <= set(schema_fields)
    # A connection's edges and nodes are sized by a paged field, and only such fields return one.
    connections = {name.split(".")[0] for name, size in LIST_SIZES.items() if size == PAGE}
    for name, field in schema_fields.items():
        if get_named_type(field.type).name in connections:
            assert isinstance(LIST_SIZES.get(name), Paged), name


def test_nested_lists_multiply_and_the_largest_is_named():
    e = estimate(SCHEMA, parse(HOSTILE), None, {"i": [f"nod_{i}" for i in range(100)]})
    # 100 nodes, their readBy, 100 × 1,000 calls, and of each call its reads, id, content.
    assert e.total == 100 + 100 + 100 * 1000 + 3 * 100 * 1000 * PROMPT
    assert e.explain() == ("nodes.readBy.nodes.reads may hold 100,000,000 items: 100 ids × "
                           "1,000 readBy page × 1,000 reads of a call")


def test_pages_count_as_asked_capped_at_their_maximum_or_their_default():
    # The connection, then each session of its page and each one's id.
    assert cost("{ sessions { nodes { id } } }") == 1 + 2 * 20  # the default page
    assert cost("{ sessions(first: 3) { nodes { id } } }") == 1 + 2 * 3
    assert cost("query($n: Int) { sessions(last: $n) { nodes { id } } }", n=7) == 1 + 2 * 7
    assert cost("query($n: Int = 4) { sessions(first: $n) { nodes { id } } }") == 1 + 2 * 4
    assert cost("{ sessions(first: 5000) { nodes { id } } }") == 1 + 2 * 100  # its maximum
    assert cost("{ sessions(first: 2) { totalCount pageInfo { hasNextPage } "
                "edges { cursor node { id } } } }") == 4 + 2 * 4
    assert cost('{ callsReading(nodeId: "n") { id } }') == 200  # its own default: 100


def test_ids_count_as_given():
    assert cost("query($i: [ID!]!) { nodes(ids: $i) { id } }", i=["a", "b", "c"]) == 6
    assert cost('{ nodes(ids: ["a", "b"]) { id } }') == 4
    assert cost("query($i: [ID!]!) { nodes(ids: $i) { id } }", i="a") == 2  # read as [a]
    ids = [f"a{i}" for i in range(5000)]
    assert cost("query($i: [ID!]!) { nodes(ids: $i) { id } }", i=ids) == 2000


def test_a_repeated_id_counts_once():
    assert cost("query($i: [ID!]!) { nodes(ids: $i) { id } }", i=["a", "b", "a"] * 300) == 4
    assert cost('{ nodes(ids: ["a", "a", "a"]) { id } }') == 2


def test_a_render_request_counts_the_values_it_holds():
    request = 'session(id: "s") { render { request(format: OPENAI_CHAT) } }'
    assert cost(f"{{ {request} }}") == 2 + PROMPT


def test_aliases_and_fragments_count_each_time_they_are_spread():
    assert cost("{ a: sessions(first: 2) { nodes { ...S } } b: sessions(first: 3) { nodes "
                "{ ... on Session { id } } } } fragment S on Session { id title }") == 7 + 7
    session = 'session(id: "s") { graph { nodes { id } } }'
    assert cost(f"{{ a: {session} b: {session} }}") == 2 * (2 + 2 * SESSION)


def test_introspection_counts_once_per_field():
    assert cost(get_introspection_query(descriptions=True)) == 1


def viewer_documents() -> dict[str, str]:
    """The viewer's GraphQL documents (service/ui/queries.js), its `${NAME}` parts filled in."""
    text = (ROOT / "service" / "ui" / "queries.js").read_text()
    parts: dict[str, str] = {}
    for name, _, body in re.findall(r'(?:export )?const (\w+) = (["`])(.*?)\2;', text, re.S):
        parts[name] = re.sub(r"\$\{(\w+)\}", lambda m: parts[m.group(1)], body)
    return {name: body for name, body in parts.items() if re.match(r"\s*(query|subscription|mutation)", body)}


def test_what_the_viewer_and_the_demo_send_is_admitted_by_default():
    """A viewer query over the limit is refused on large sessions: the page would draw nothing."""
    limit = Settings.from_env({}).max_query_cost
    text = (ROOT / "service" / "ui" / "queries.js").read_text()
    chunk = int(re.search(r"BLOCKS_PER_REQUEST = (\d+);", text).group(1))
    documents = viewer_documents()
    assert set(documents) == {"SESSIONS", "SESSION_VIEW", "RENDER", "CALL_READS", "NODE_DETAIL",
                              "NODE_BLOCKS", "TOOL_NAMES", "SESSION_EVENTS", "IMPORT_TRANSCRIPT",
                              "SEARCH"}
    documents["demo"] = (  # what `ctxdag demo` prints to paste into GraphiQL
        '{ session(id: "s") { branches { isHead length tip { content } } '
        "render { nodes { role content } } graph { nodes { id role predecessorId callerId "
        "isHead coversIds supersededSummary } } } }")
    totals = {name: cost(document, first=20, ids=["x"] * chunk)
              for name, document in documents.items()}
    assert {name: total for name, total in totals.items() if total > limit} == {}
