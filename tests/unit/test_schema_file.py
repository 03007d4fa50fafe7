"""schema.graphql is generated from the code (`make schema`); this fails when it drifts."""
from pathlib import Path

from strawberry.printer import print_schema

from service.api.schema import schema

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_file_matches_the_code():
    assert SCHEMA_FILE.read_text().strip() == print_schema(schema).strip(), (
        "schema.graphql is stale: run `make schema`")


def test_the_contract_names_are_present():
    text = SCHEMA_FILE.read_text()
    for expected in [
        "session(id: ID!): Session\n", "sessions(first: Int = null, after: String = null, last: Int = null, before: String = null,"
        " filter: SessionFilter = null, orderBy: SessionOrder! = CREATED): SessionConnection!", "interface Node {\n  id: ID!\n}", "node(id: ID!): Node\n",
        "nodes(ids: [ID!]!): [Node]!", "type Message implements Node", "type Session implements Node",
        "type ModelCall implements Node", "type PageInfo {", "call(id: ID!): ModelCall\n", "callsReading(nodeId: ID!",
        "createSession(title: String = null, systemPrompt: String = null",
        "sendMessage(sessionId: ID!, content: String = null, blocks: [ContentBlockInput!] = null,"
        " tools: [ToolInput!] = null, toolChoice: ToolChoiceInput = null,"
        " cancelOpenToolUses: Boolean! = false, recall: Boolean = null): Turn!",
        "submitToolResults(sessionId: ID!, results: [ToolResultBlockInput!]!",
        "appendMessage(sessionId: ID!, role: Role!, content: String = null,"
        " blocks: [ContentBlockInput!] = null, predecessorId: ID = null, callerId: ID = null",
        "retry(nodeId: ID!, tools: [ToolInput!] = null", "editMessage(nodeId: ID!, content: String = null",
        "input ContentBlockInput @oneOf {", "union ContentBlock = ",
        "request(format: RequestFormat!",
        "checkout(sessionId: ID!, nodeId: ID!, summarizeLeft: Boolean! = false,"
        " summaryInstructions: String = null): Session!",
        "carryOver(sessionId: ID!, fromTip: ID!, intoHead: ID!, instructions: String = null)"
        ": CarryOver!",
        "rewind(sessionId: ID!, nodeId: ID!): Session!",
        "deleteBranch(sessionId: ID!, tipId: ID!): Session!",
        "compact(sessionId: ID!, keepRecentTokens: Int = null", "spawnTask(sessionId: ID!,"
        " fromNodeId: ID!, prompt: String!): Turn!", "recordCall(sessionId: ID!, readIds: [ID!]!,"
        " model: String!, output: String = null", "sessionEvents(sessionId: ID!, after: Int = null): SessionEvent!",
        "enum Role {", "enum Purpose {", "enum CompactionStatus {",
    ]:
        assert expected in text, expected
