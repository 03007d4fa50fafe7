"""What an operation may cost, estimated from its document and variables before it runs:
how many values its answer may hold.

Every field counts once for each object it is selected on, and a list once for each item
it may hold, so lists nested in lists multiply:
`nodes(ids: $i) { ... on Message { readBy(first: 1000) { nodes { reads { id } } } } }`
with 100 ids may hold 100 × 1,000 × (reads of a call) × 2 values. How many items a list
may hold is `LIST_SIZES`' decision, the one place it is made: what its arguments allow (a
page's `first` or `last`, its default page when neither is given, the ids given), or, for
a list the data sizes, a documented assumption. A list that holds more than assumed costs
more than estimated; the operation timeout still bounds it, and the lists one write can
fill far beyond their assumption (a message's blocks and tool uses, a session's branches)
count what they hold as they are resolved (budget.py): an answer that then holds more
than the limit is refused before it is sent. Repeated ids of `nodes(ids:)` count once:
each object is answered once. A field whose one value holds many (`Holds`: a render's
provider request) counts them.

The estimate walks the operation with every fragment spread expanded, which the shape
limits (limits.py) have already bounded to MAX_SELECTIONS fields. Alternatives of an
abstract type (`... on Message`, `... on ModelCall`) are all counted, as if each applied.
Introspection fields count once each: their lists are as long as the schema, not the data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from graphql import (
    DocumentNode, FieldNode, FragmentDefinitionNode, FragmentSpreadNode, GraphQLField,
    GraphQLInterfaceType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema,
    InlineFragmentNode, IntValueNode, ListValueNode, OperationDefinitionNode,
    SelectionSetNode, StringValueNode, ValueNode, VariableNode, get_named_type,
)
from graphql.utilities import get_operation_ast

from ..store.paging import DEFAULT_PAGE, MAX_PAGE
from .nodes import MAX_NODES_PER_LOOKUP
from .types import MAX_CALLS_PAGE


@dataclass(frozen=True)
class Paged:
    """A page: `first` or `last` items, at most `maximum`; when neither is given, the
    default of `first` in the schema, or else `default`. On a connection, the page sizes
    its `edges` and `nodes`."""

    what: str
    default: int = DEFAULT_PAGE
    maximum: int = MAX_PAGE


@dataclass(frozen=True)
class Given:
    """As many distinct items as the list argument `argument` holds, at most `maximum`."""

    what: str
    argument: str
    maximum: int


@dataclass(frozen=True)
class Assumed:
    """A list the data sizes: `size` items are assumed."""

    what: str
    size: int


@dataclass(frozen=True)
class Holds:
    """A field whose one value (a JSON document) holds about `size` values."""

    what: str
    size: int


PAGE = "the page"  # a connection's edges and nodes: as many as the field that returned it asked

# The sizes assumed for lists the data sizes (docs/reference/limits.md).
PROMPT = 1000  # nodes in one prompt: a call's reads, a render, a summary's segment
SESSION = 2000  # nodes of one session: its graph, a deleted branch
FEW = 10  # a node's children, a session's branches, the summaries covering a node, and
# the capsules listing one graph row (averaged over the rows: most rows are on none)

LIST_SIZES: dict[str, Paged | Given | Assumed | Holds | str] = {
    "Query.sessions": Paged("sessions per page"),
    "Query.nodes": Given("ids", "ids", MAX_NODES_PER_LOOKUP),
    "Query.callsReading": Paged("callsReading page", maximum=MAX_CALLS_PAGE),
    "Session.modelCalls": Paged("modelCalls page", maximum=MAX_CALLS_PAGE),
    "Session.calls": Assumed("calls (the first 1,000)", MAX_CALLS_PAGE),
    "TranscriptImport.degraded": Assumed("entries an import degraded", 100),
    "Message.readBy": Paged("readBy page", maximum=MAX_CALLS_PAGE),
    "Query.search": Paged("search page"),
    "SearchHitConnection.edges": PAGE, "SearchHitConnection.nodes": PAGE,
    "SearchHit.highlights": Assumed("matches in a snippet", FEW),
    "SessionConnection.edges": PAGE, "SessionConnection.nodes": PAGE,
    "ModelCallConnection.edges": PAGE, "ModelCallConnection.nodes": PAGE,
    "CallReadingConnection.edges": PAGE, "CallReadingConnection.nodes": PAGE,
    "ModelCall.readIds": Assumed("reads of a call", PROMPT),
    "ModelCall.reads": Assumed("reads of a call", PROMPT),
    "CallDiff.addedIds": Assumed("reads of a call", PROMPT),
    "CallDiff.removedIds": Assumed("reads of a call", PROMPT),
    "CallDiff.movedIds": Assumed("reads of a call", PROMPT),
    "CallDiff.added": Assumed("reads of a call", PROMPT),
    "CallDiff.removed": Assumed("reads of a call", PROMPT),
    "CallDiff.moved": Assumed("reads of a call", PROMPT),
    "CallReplay.currentIds": Assumed("nodes of a render", PROMPT),
    "CallReplay.addedIds": Assumed("nodes of a render", PROMPT),
    "CallReplay.added": Assumed("nodes of a render", PROMPT),
    "CallReplay.removedIds": Assumed("reads of a call", PROMPT),
    "CallReplay.removed": Assumed("reads of a call", PROMPT),
    "RenderedContext.nodeIds": Assumed("nodes of a render", PROMPT),
    "TurnDraft.readIds": Assumed("reads of a draft's request", PROMPT),
    "RenderedContext.nodes": Assumed("nodes of a render", PROMPT),
    "RenderedContext.standInIds": Assumed("nodes of a render", PROMPT),
    "Summary.coversIds": Assumed("turns a summary covers", PROMPT),
    "Summary.retainedIds": Assumed("turns a summary retains", PROMPT),
    "Summary.nestedIds": Assumed("summaries a nested summary merges", FEW),
    "Compaction.coveredIds": Assumed("turns a summary covers", PROMPT),
    "Compaction.retainedIds": Assumed("turns a summary retains", PROMPT),
    "SessionGraph.nodes": Assumed("rows of a session's graph", SESSION),
    "BranchDeleted.deletedIds": Assumed("nodes of a deleted branch", SESSION),
    "Session.branches": Assumed("branches of a session", FEW),
    "SessionSource.models": Assumed("models an imported session used", FEW),
    "Session.models": Assumed("models a session used", FEW),
    # Tool sets (docs/guides/tool-sets.md): a session sets its tools a few times; a diff of two
    # calls' tools names a few (the history counts what it holds as it is resolved).
    "Session.toolSetHistory": Assumed("versions of a session's tool set", FEW),
    "ToolsDiff.added": Assumed("tools offered to a call", FEW),
    "ToolsDiff.removed": Assumed("tools offered to a call", FEW),
    "ToolsDiff.changed": Assumed("tools offered to a call", FEW),
    "Message.children": Assumed("children of a node", FEW),
    "Message.coveredBy": Assumed("summaries covering a node", FEW),
    "GraphNode.coversIds": Assumed("capsules listing a graph row", FEW),
    # A carry node stands for a branch's turns below its fork (a prompt's worth at most
    # before that branch was compacted); a turn is summarized by a few carry nodes.
    "Message.carriedIds": Assumed("turns a carry node summarizes", PROMPT),
    "Message.carriedFrom": Assumed("turns a carry node summarizes", PROMPT),
    "Message.carriedBy": Assumed("carry nodes summarizing a node", FEW),
    "Message.mayQuoteRedactedIds": Assumed("redacted nodes a summary covers", FEW),
    "Summary.mayQuoteRedactedIds": Assumed("redacted nodes a summary covers", FEW),
    "Redaction.media": Assumed("media a redacted message named", FEW),
    "Redaction.mayBeQuotedByIds": Assumed("summaries covering a node", FEW),
    "Redacted.mayBeQuotedByIds": Assumed("summaries covering a node", FEW),
    "Redacted.erasedMedia": Assumed("media a redacted message named", FEW),
    "NodeRedacted.summaryIds": Assumed("summaries covering a node", FEW),
    "CarryOver.carriedIds": Assumed("turns a carry node summarizes", PROMPT),
    # Content blocks (docs/concepts/content-blocks.md): a message holds a few (each
    # parallel tool call is one), as do a tool result's parts and a head's open tool uses.
    "Message.blocks": Assumed("blocks of a message", FEW),
    "GraphNode.blocks": Assumed("blocks of a message", FEW),
    "ToolResultBlock.content": Assumed("parts of a tool result", FEW),
    "Message.toolUseIds": Assumed("tool uses of a message", FEW),
    "GraphNode.toolUseIds": Assumed("tool uses of a message", FEW),
    "RenderedContext.openToolUseIds": Assumed("tool uses of a message", FEW),
    "Turn.openToolUseIds": Assumed("tool uses of a message", FEW),
    # A provider request holds every message of its render, each a few values.
    "RenderedContext.request": Holds("values of a render's request", PROMPT),
    "TurnDraft.request": Holds("values of a draft's request", PROMPT),
    "CallReplay.messages": Holds("values of a prompt's messages", PROMPT),
}


@dataclass(frozen=True)
class Factor:
    size: int
    what: str


@dataclass
class Estimate:
    """`total`: values the answer may hold. `largest`: the list that may hold the most
    items — its path in the answer and the sizes multiplied to reach it. `per_item`: for
    each assumed list, by its field's name and its path in the answer (aliases, no
    indices), the items assumed and the values each item counts."""

    total: int = 0
    largest: tuple[int, str, tuple[Factor, ...]] = (0, "", ())
    per_item: dict[tuple[str, str], tuple[Assumed, int]] = field(default_factory=dict)

    def explain(self) -> str:
        items, path, factors = self.largest
        if not factors:
            return ""
        sizes = " × ".join(f"{f.size:,} {f.what}" for f in factors)
        return f"{path} may hold {items:,} items: {sizes}"


def estimate(schema: GraphQLSchema, document: DocumentNode, operation_name: str | None,
             variables: Mapping[str, Any] | None) -> Estimate:
    """The estimate for the operation `operation_name` names (or the only one)."""
    operation = get_operation_ast(document, operation_name)
    result = Estimate()
    if operation is None:
        return result
    root = schema.get_root_type(operation.operation)
    given = variables if isinstance(variables, Mapping) else {}
    walk = _Walk(schema, _values(operation, given), result,
                 {d.name.value: d for d in document.definitions
                  if isinstance(d, FragmentDefinitionNode)})
    walk.selections(operation.selection_set, root, 1, (), None, "")
    return result


def _values(operation: OperationDefinitionNode, given: Mapping[str, Any]) -> dict[str, Any]:
    """The operation's variables: those given, else their defaults."""
    values = dict(given)
    for definition in operation.variable_definitions or ():
        name = definition.variable.name.value
        if name not in values and definition.default_value is not None:
            values[name] = _literal(definition.default_value, {})
    return values


def _literal(node: ValueNode, variables: Mapping[str, Any]) -> Any:
    if isinstance(node, VariableNode):
        return variables.get(node.name.value)
    if isinstance(node, IntValueNode):
        return int(node.value)
    if isinstance(node, StringValueNode):
        return node.value
    if isinstance(node, ListValueNode):
        return [_literal(v, variables) for v in node.values]
    return None


@dataclass
class _Walk:
    schema: GraphQLSchema
    variables: dict[str, Any]
    result: Estimate
    fragments: dict[str, FragmentDefinitionNode]

    def selections(self, selection_set: SelectionSetNode | None, parent: Any, multiplier: int,
                   factors: tuple[Factor, ...], page: Factor | None, path: str) -> None:
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                self.field(selection, parent, multiplier, factors, page, path)
                continue
            if isinstance(selection, InlineFragmentNode):
                condition, inner = selection.type_condition, selection.selection_set
            elif isinstance(selection, FragmentSpreadNode) \
                    and selection.name.value in self.fragments:
                fragment = self.fragments[selection.name.value]
                condition, inner = fragment.type_condition, fragment.selection_set
            else:
                continue
            typed = self.schema.get_type(condition.name.value) if condition else parent
            self.selections(inner, typed, multiplier, factors, page, path)

    def field(self, node: FieldNode, parent: Any, multiplier: int,
              factors: tuple[Factor, ...], page: Factor | None, path: str) -> None:
        name = node.name.value
        definition = (parent.fields.get(name)
                      if isinstance(parent, (GraphQLObjectType, GraphQLInterfaceType)) else None)
        if definition is None or name.startswith("__"):
            self.result.total += multiplier
            return
        path = f"{path}.{node.alias.value if node.alias else name}".lstrip(".")
        key = f"{parent.name}.{name}"
        size = LIST_SIZES.get(key)
        inner_page = None
        if _is_list(definition.type):
            factor = self._list(node, definition, size, page)
            multiplier *= factor.size
            factors += (factor,)
            if multiplier > self.result.largest[0]:
                self.result.largest = (multiplier, path, factors)
        elif isinstance(size, Paged):  # a connection: its page sizes its edges and nodes
            inner_page = self._paged(node, definition, size)
        before = self.result.total
        self.result.total += multiplier * (size.size if isinstance(size, Holds) else 1)
        self.selections(node.selection_set, get_named_type(definition.type), multiplier,
                        factors, inner_page, path)
        if isinstance(size, Assumed) and multiplier:
            values = (self.result.total - before) // multiplier
            known = self.result.per_item.get((name, path))
            if known is None or values > known[1]:
                self.result.per_item[(name, path)] = (size, values)

    def _list(self, node: FieldNode, definition: GraphQLField,
              size: Paged | Given | Assumed | Holds | str | None, page: Factor | None
              ) -> Factor:
        if size == PAGE and page is not None:
            return page
        if isinstance(size, Paged):
            return self._paged(node, definition, size)
        if isinstance(size, Given):
            given = self._argument(node, size.argument)
            count = (len({str(item) for item in given}) if isinstance(given, list)
                     else int(given is not None))
            return Factor(min(count, size.maximum), size.what)
        if isinstance(size, Assumed):
            return Factor(size.size, size.what)
        raise LookupError(f"{node.name.value} is a list LIST_SIZES does not size")

    def _paged(self, node: FieldNode, definition: GraphQLField, size: Paged) -> Factor:
        first, last = self._argument(node, "first"), self._argument(node, "last")
        asked = first if isinstance(first, int) else last if isinstance(last, int) else None
        if asked is None:
            default = definition.args["first"].default_value
            asked = default if isinstance(default, int) else size.default
        return Factor(max(0, min(asked, size.maximum)), size.what)

    def _argument(self, node: FieldNode, name: str) -> Any:
        for argument in node.arguments or ():
            if argument.name.value == name:
                return _literal(argument.value, self.variables)
        return None


def _is_list(type_: Any) -> bool:
    return isinstance(type_.of_type if isinstance(type_, GraphQLNonNull) else type_,
                      GraphQLList)
