// Every GraphQL document the viewer sends (schema.graphql is the contract).

export const SESSIONS = `query Sessions($first: Int!, $after: String) {
  sessions(first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id title nodeCount summaryStrategy updatedAt } }
  }
}`;

// The drawing: the whole graph in one request, with the calls list alongside.
export const SESSION_VIEW = `query SessionView($id: ID!) {
  session(id: $id) {
    id title headId rootId nodeCount summaryStrategy activeSummaryId updatedAt
    branches { tip { id } isHead summaryId length }
    graph {
      nodes {
        id role seq predecessorId callerId forkOf isHead tokens preview sideBranch deleted
        coversIds supersededSummary retired foldedInto drawnFromId
      }
    }
    modelCalls(last: 50) {
      totalCount
      edges { node { id purpose model provider inputTokens outputTokens readCount createdAt error headId outputId } }
    }
  }
}`;

export const RENDER = `query Render($id: ID!, $head: ID) {
  session(id: $id) {
    render(headId: $head) { headId nodeIds summaryId tokens nodes { id role content tokens } }
  }
}`;

export const CALL_READS = `query CallReads($id: ID!) {
  call(id: $id) {
    id purpose model provider inputTokens outputTokens readCount createdAt error headId outputId readIds
  }
}`;

export const NODE_DETAIL = `query NodeDetail($id: ID!) {
  node(id: $id) {
    ... on Message {
      id role content tokens seq createdAt depth forkOf callerId sideBranch
      readBy(first: 20) { totalCount edges { position node { id purpose createdAt } } }
      coveredBy { id isActive superseded retired }
      summary { id coversIds superseded retired isActive instructions strategy }
    }
  }
}`;

export const SESSION_EVENTS = `subscription Events($id: ID!) {
  sessionEvents(sessionId: $id) {
    __typename id type
    ... on NodeAppended { nodeId role }
    ... on HeadMoved { headId }
    ... on CompactionFinished { summaryId }
  }
}`;
