"""The document bounds: measured in one pass, whatever the fragments expand to."""
from graphql import get_introspection_query, parse

from service.api.limits import MAX_DEPTH, MAX_SELECTIONS, Cost, measure, over_limits
from tests.scenarios.test_hostile_clients import fragment_bomb as bomb


def nested(levels: int) -> str:
    return "query { node(id: \"x\") { " + "children { " * levels + "id" + " }" * levels + " } }"


def test_a_fragment_bomb_is_measured_exactly_without_expanding_it():
    for levels in (1, 10, 40, 400):
        cost = measure(parse(bomb(levels)))
        assert cost.selections == 2 ** levels + 2  # sessions, nodes, and every expanded id
        assert cost.depth == 2
    assert "fields once its fragments are expanded" in over_limits(measure(parse(bomb(40))))


def test_depth_counts_levels_below_the_root_field_as_before():
    assert measure(parse(nested(MAX_DEPTH - 1))).depth == MAX_DEPTH
    assert over_limits(measure(parse(nested(MAX_DEPTH - 1)))) is None
    assert "nests 13 levels deep" in over_limits(measure(parse(nested(MAX_DEPTH))))


def test_depth_and_aliases_follow_fragments_and_inline_fragments():
    document = parse("""
        query { a: node(id: "x") { ...Deep } b: node(id: "y") { ... on Node { c: id } } }
        fragment Deep on Node { children { d: children { ...Leaf } } }
        fragment Leaf on Node { e: id f: id }""")
    assert measure(document) == Cost(depth=3, aliases=6, selections=7)


def test_cycles_and_unknown_fragments_cost_nothing_and_are_left_to_graphql_core():
    document = parse("query { sessions { nodes { ...A ...Missing } } } "
                     "fragment A on Session { id ...B } fragment B on Session { title ...A }")
    assert measure(document) == Cost(depth=2, aliases=0, selections=4)


def test_introspection_is_within_the_limits():
    cost = measure(parse(get_introspection_query(descriptions=True)))
    assert over_limits(cost) is None and cost.selections < MAX_SELECTIONS
