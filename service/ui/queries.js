// Every GraphQL document the viewer sends (schema.graphql is the contract).

// The sessions list: last active first, a page at a time, kept to titles holding $filter's
// text; the list groups what it has loaded by project.
export const SESSIONS = `query Sessions($first: Int!, $after: String, $filter: SessionFilter) {
  sessions(first: $first, after: $after, filter: $filter, orderBy: LAST_ACTIVITY) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id title nodeCount summaryStrategy lastActivityAt firstActivityAt
      tool toolVersion project gitBranch models } }
  }
}`;

// A message's blocks, whole (media data included: the render panel and the detail card draw
// images as thumbnails).
const MEDIA = "source { mediaType sha256 bytes width height pages url data }";
const BLOCKS = `blocks {
  __typename
  ... on TextBlock { text }
  ... on ThinkingBlock { thinking signature }
  ... on RedactedThinkingBlock { data }
  ... on ToolUseBlock { id name input }
  ... on ToolResultBlock { toolUseId isError content { __typename ... on TextBlock { text } ... on ImageBlock { ${MEDIA} } } }
  ... on ImageBlock { ${MEDIA} }
  ... on DocumentBlock { title ${MEDIA} }
}`;

// The drawing: the whole graph in one request, with the calls list alongside. Of the
// blocks only the tool use ids (a card counts its calls and its results by them; the
// blocks themselves would take the request past the cost limit on large sessions).
// A call's prompt caching: its shared prefix with the previous call, where and why it broke.
const CACHE = "promptTokens sharedPrefixTokens cacheReadInputTokens cacheBreak { position cause nodeId previousNodeId }";

export const SESSION_VIEW = `query SessionView($id: ID!) {
  session(id: $id) {
    id title headId rootId nodeCount summaryStrategy activeSummaryId updatedAt
    branches { tip { id } isHead summaryId length name }
    graph {
      nodes {
        id role seq predecessorId callerId forkOf isHead tokens preview sideBranch deleted
        coversIds supersededSummary retired foldedInto drawnFromId toolUseIds label branchName pinned
        outOfContext
      }
    }
    modelCalls(last: 50) {
      totalCount
      edges { node { id purpose model provider inputTokens outputTokens readCount createdAt error headId outputId ${CACHE} } }
    }
  }
}`;

export const RENDER = `query Render($id: ID!, $head: ID) {
  session(id: $id) {
    render(headId: $head) {
      headId nodeIds summaryId standInIds tokens openToolUseIds
      nodes { id role content tokens predecessorId toolUseIds }
    }
  }
}`;

export const CALL_READS = `query CallReads($id: ID!) {
  call(id: $id) {
    id purpose model provider inputTokens outputTokens readCount createdAt error headId outputId readIds ${CACHE}
    cacheCreationInputTokens previousCallId sharedPrefixReads
  }
}`;

export const NODE_DETAIL = `query NodeDetail($id: ID!) {
  node(id: $id) {
    ... on Message {
      id role content tokens seq createdAt depth forkOf callerId sideBranch predecessorId toolUseIds label
      ${BLOCKS}
      readBy(first: 20) { totalCount edges { position node { id purpose createdAt } } }
      coveredBy { id isActive superseded retired }
      summary { id coversIds superseded retired isActive instructions strategy }
    }
  }
}`;

// The blocks of rendered messages, asked apart from the render and in chunks: the query's
// cost estimate counts about 1,500 values for one message's blocks, so a chunk of
// BLOCKS_PER_REQUEST stays under the service's default limit of 100,000.
export const BLOCKS_PER_REQUEST = 50;
export const NODE_BLOCKS = `query NodeBlocks($ids: [ID!]!) {
  nodes(ids: $ids) { ... on Message { id ${BLOCKS} } }
}`;

// The names of the tools a reply calls (a tool message's detail card names what it answers).
export const TOOL_NAMES = `query ToolNames($id: ID!) {
  node(id: $id) { ... on Message { blocks { __typename ... on ToolUseBlock { id name } } } }
}`;

// A transcript file the page was given (importer.js); the page's own size check keeps it
// under the request body limit.
export const IMPORT_TRANSCRIPT = `mutation ImportTranscript($content: String!, $fileName: String) {
  importTranscript(content: $content, fileName: $fileName) { outcome written session { id } }
}`;

export const SESSION_EVENTS = `subscription Events($id: ID!) {
  sessionEvents(sessionId: $id) {
    __typename id type
    ... on NodeAppended { nodeId role }
    ... on HeadMoved { headId }
    ... on CompactionFinished { summaryId }
  }
}`;

// The search box (search.js): a page of hits across sessions, each with where it stands in
// the model's context at its session's HEAD and how many calls read it.
export const SEARCH = `query Search($query: String!, $first: Int, $after: String) {
  search(query: $query, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes {
      sessionId sessionTitle matchedIn snippet highlights { start end }
      context { state headId summaryId summaryRendered }
      node { id role readBy(first: 1) { totalCount } }
    }
  }
}`;
