from typing import Any, Optional, Union

from .base_client import BaseClient
from .base_model import UNSET, UnsetType
from .begin_turn import BeginTurn
from .complete_turn import CompleteTurn
from .create_session import CreateSession
from .edit_message import EditMessage
from .enums import RequestFormat, Role, SearchKind, SessionOrder, TranscriptFormat
from .get_session import GetSession
from .import_transcript import ImportTranscript
from .input_types import (
    ContentBlockInput,
    ModelFailureInput,
    SessionFilter,
    ToolChoiceInput,
    ToolInput,
    ToolResultBlockInput,
    UsageInput,
)
from .list_sessions import ListSessions
from .render import Render
from .render_request import RenderRequest
from .retry import Retry
from .search import Search
from .send_message import SendMessage
from .submit_tool_results import SubmitToolResults
from .trace import Trace


def gql(q: str) -> str:
    return q


class GeneratedClient(BaseClient):
    def render(
        self,
        session_id: str,
        head_id: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Render:
        query = gql("""
            query Render($sessionId: ID!, $headId: ID) {
              session(id: $sessionId) {
                render(headId: $headId) {
                  headId
                  nodeIds
                  summaryId
                  tokens
                  openToolUseIds
                  nodes {
                    ...BriefMessageFields
                  }
                }
              }
            }

            fragment BriefMessageFields on Message {
              id
              role
              content
              tokens
              toolUseIds
              blocks {
                __typename
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                }
              }
            }
            """)
        variables: dict[str, object] = {"sessionId": session_id, "headId": head_id}
        response = self.execute(
            query=query, operation_name="Render", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Render.model_validate(data)

    def render_request(
        self,
        session_id: str,
        format: RequestFormat,
        head_id: Union[Optional[str], UnsetType] = UNSET,
        model: Union[Optional[str], UnsetType] = UNSET,
        max_tokens: Union[Optional[int], UnsetType] = UNSET,
        tools: Union[Optional[list[ToolInput]], UnsetType] = UNSET,
        tool_choice: Union[Optional[ToolChoiceInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> RenderRequest:
        query = gql("""
            query RenderRequest($sessionId: ID!, $headId: ID, $format: RequestFormat!, $model: String, $maxTokens: Int, $tools: [ToolInput!], $toolChoice: ToolChoiceInput) {
              session(id: $sessionId) {
                render(headId: $headId) {
                  request(
                    format: $format
                    model: $model
                    maxTokens: $maxTokens
                    tools: $tools
                    toolChoice: $toolChoice
                  )
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "sessionId": session_id,
            "headId": head_id,
            "format": format,
            "model": model,
            "maxTokens": max_tokens,
            "tools": tools,
            "toolChoice": tool_choice,
        }
        response = self.execute(
            query=query, operation_name="RenderRequest", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RenderRequest.model_validate(data)

    def trace(self, call_id: str, **kwargs: Any) -> Trace:
        query = gql("""
            query Trace($callId: ID!) {
              call(id: $callId) {
                id
                sessionId
                purpose
                provider
                model
                headId
                outputId
                inputTokens
                outputTokens
                error
                errorCode
                createdAt
                readIds
                tools
                reads {
                  ...BriefMessageFields
                }
                replay {
                  system
                  messages
                  differs
                  addedIds
                  removedIds
                }
              }
            }

            fragment BriefMessageFields on Message {
              id
              role
              content
              tokens
              toolUseIds
              blocks {
                __typename
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                }
              }
            }
            """)
        variables: dict[str, object] = {"callId": call_id}
        response = self.execute(
            query=query, operation_name="Trace", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Trace.model_validate(data)

    def import_transcript(
        self,
        content: str,
        strict: bool,
        format: Union[Optional[TranscriptFormat], UnsetType] = UNSET,
        file_name: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> ImportTranscript:
        query = gql("""
            mutation ImportTranscript($content: String!, $format: TranscriptFormat, $fileName: String, $strict: Boolean!) {
              importTranscript(
                content: $content
                format: $format
                fileName: $fileName
                strict: $strict
              ) {
                session {
                  ...SessionFields
                }
                outcome
                written
                degraded {
                  file
                  line
                  kind
                  reason
                }
              }
            }

            fragment SessionFields on Session {
              id
              title
              project
              tool
              headId
              rootId
              nodeCount
              summaryStrategy
              createdAt
              lastActivityAt
            }
            """)
        variables: dict[str, object] = {
            "content": content,
            "format": format,
            "fileName": file_name,
            "strict": strict,
        }
        response = self.execute(
            query=query,
            operation_name="ImportTranscript",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return ImportTranscript.model_validate(data)

    def search(
        self,
        query: str,
        session_id: Union[Optional[str], UnsetType] = UNSET,
        roles: Union[Optional[list[Role]], UnsetType] = UNSET,
        kinds: Union[Optional[list[SearchKind]], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Search:
        _query = gql("""
            query Search($query: String!, $sessionId: ID, $roles: [Role!], $kinds: [SearchKind!], $first: Int, $after: String) {
              search(
                query: $query
                sessionId: $sessionId
                roles: $roles
                kinds: $kinds
                first: $first
                after: $after
              ) {
                nodes {
                  sessionId
                  sessionTitle
                  score
                  matchedIn
                  snippet
                  highlights {
                    start
                    end
                  }
                  node {
                    id
                    role
                    content
                  }
                  context {
                    state
                    headId
                    summaryId
                  }
                }
                pageInfo {
                  hasNextPage
                  endCursor
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "query": query,
            "sessionId": session_id,
            "roles": roles,
            "kinds": kinds,
            "first": first,
            "after": after,
        }
        response = self.execute(
            query=_query, operation_name="Search", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Search.model_validate(data)

    def create_session(
        self,
        title: Union[Optional[str], UnsetType] = UNSET,
        system_prompt: Union[Optional[str], UnsetType] = UNSET,
        project: Union[Optional[str], UnsetType] = UNSET,
        extra_meta: Union[Optional[Any], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> CreateSession:
        query = gql("""
            mutation CreateSession($title: String, $systemPrompt: String, $project: String, $extraMeta: JSON) {
              createSession(
                title: $title
                systemPrompt: $systemPrompt
                project: $project
                extraMeta: $extraMeta
              ) {
                ...SessionFields
              }
            }

            fragment SessionFields on Session {
              id
              title
              project
              tool
              headId
              rootId
              nodeCount
              summaryStrategy
              createdAt
              lastActivityAt
            }
            """)
        variables: dict[str, object] = {
            "title": title,
            "systemPrompt": system_prompt,
            "project": project,
            "extraMeta": extra_meta,
        }
        response = self.execute(
            query=query, operation_name="CreateSession", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CreateSession.model_validate(data)

    def get_session(self, id: str, **kwargs: Any) -> GetSession:
        query = gql("""
            query GetSession($id: ID!) {
              session(id: $id) {
                ...SessionFields
              }
            }

            fragment SessionFields on Session {
              id
              title
              project
              tool
              headId
              rootId
              nodeCount
              summaryStrategy
              createdAt
              lastActivityAt
            }
            """)
        variables: dict[str, object] = {"id": id}
        response = self.execute(
            query=query, operation_name="GetSession", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return GetSession.model_validate(data)

    def list_sessions(
        self,
        order_by: SessionOrder,
        filter_: Union[Optional[SessionFilter], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> ListSessions:
        query = gql("""
            query ListSessions($filter: SessionFilter, $orderBy: SessionOrder!, $first: Int, $after: String) {
              sessions(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
                totalCount
                nodes {
                  ...SessionFields
                }
                pageInfo {
                  hasNextPage
                  endCursor
                }
              }
            }

            fragment SessionFields on Session {
              id
              title
              project
              tool
              headId
              rootId
              nodeCount
              summaryStrategy
              createdAt
              lastActivityAt
            }
            """)
        variables: dict[str, object] = {
            "filter": filter_,
            "orderBy": order_by,
            "first": first,
            "after": after,
        }
        response = self.execute(
            query=query, operation_name="ListSessions", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ListSessions.model_validate(data)

    def send_message(
        self,
        session_id: str,
        content: Union[Optional[str], UnsetType] = UNSET,
        tools: Union[Optional[list[ToolInput]], UnsetType] = UNSET,
        tool_choice: Union[Optional[ToolChoiceInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> SendMessage:
        query = gql("""
            mutation SendMessage($sessionId: ID!, $content: String, $tools: [ToolInput!], $toolChoice: ToolChoiceInput) {
              sendMessage(
                sessionId: $sessionId
                content: $content
                tools: $tools
                toolChoice: $toolChoice
              ) {
                ...TurnFields
              }
            }

            fragment MessageFields on Message {
              id
              sessionId
              role
              content
              predecessorId
              createdAt
              tokens
              toolUseIds
              metadata
              blocks {
                __typename
                ... on TextBlock {
                  text
                }
                ... on ThinkingBlock {
                  thinking
                  signature
                }
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                  content {
                    __typename
                    ... on TextBlock {
                      text
                    }
                  }
                }
              }
            }

            fragment TurnFields on Turn {
              userNode {
                ...MessageFields
              }
              reply {
                ...MessageFields
              }
              callId
              error
              errorCode
              openToolUseIds
              headMoved
              replayed
            }
            """)
        variables: dict[str, object] = {
            "sessionId": session_id,
            "content": content,
            "tools": tools,
            "toolChoice": tool_choice,
        }
        response = self.execute(
            query=query, operation_name="SendMessage", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SendMessage.model_validate(data)

    def submit_tool_results(
        self,
        session_id: str,
        results: list[ToolResultBlockInput],
        tools: Union[Optional[list[ToolInput]], UnsetType] = UNSET,
        tool_choice: Union[Optional[ToolChoiceInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> SubmitToolResults:
        query = gql("""
            mutation SubmitToolResults($sessionId: ID!, $results: [ToolResultBlockInput!]!, $tools: [ToolInput!], $toolChoice: ToolChoiceInput) {
              submitToolResults(
                sessionId: $sessionId
                results: $results
                tools: $tools
                toolChoice: $toolChoice
              ) {
                ...TurnFields
              }
            }

            fragment MessageFields on Message {
              id
              sessionId
              role
              content
              predecessorId
              createdAt
              tokens
              toolUseIds
              metadata
              blocks {
                __typename
                ... on TextBlock {
                  text
                }
                ... on ThinkingBlock {
                  thinking
                  signature
                }
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                  content {
                    __typename
                    ... on TextBlock {
                      text
                    }
                  }
                }
              }
            }

            fragment TurnFields on Turn {
              userNode {
                ...MessageFields
              }
              reply {
                ...MessageFields
              }
              callId
              error
              errorCode
              openToolUseIds
              headMoved
              replayed
            }
            """)
        variables: dict[str, object] = {
            "sessionId": session_id,
            "results": results,
            "tools": tools,
            "toolChoice": tool_choice,
        }
        response = self.execute(
            query=query,
            operation_name="SubmitToolResults",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return SubmitToolResults.model_validate(data)

    def retry(
        self,
        node_id: str,
        tools: Union[Optional[list[ToolInput]], UnsetType] = UNSET,
        tool_choice: Union[Optional[ToolChoiceInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Retry:
        query = gql("""
            mutation Retry($nodeId: ID!, $tools: [ToolInput!], $toolChoice: ToolChoiceInput) {
              retry(nodeId: $nodeId, tools: $tools, toolChoice: $toolChoice) {
                ...TurnFields
              }
            }

            fragment MessageFields on Message {
              id
              sessionId
              role
              content
              predecessorId
              createdAt
              tokens
              toolUseIds
              metadata
              blocks {
                __typename
                ... on TextBlock {
                  text
                }
                ... on ThinkingBlock {
                  thinking
                  signature
                }
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                  content {
                    __typename
                    ... on TextBlock {
                      text
                    }
                  }
                }
              }
            }

            fragment TurnFields on Turn {
              userNode {
                ...MessageFields
              }
              reply {
                ...MessageFields
              }
              callId
              error
              errorCode
              openToolUseIds
              headMoved
              replayed
            }
            """)
        variables: dict[str, object] = {
            "nodeId": node_id,
            "tools": tools,
            "toolChoice": tool_choice,
        }
        response = self.execute(
            query=query, operation_name="Retry", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Retry.model_validate(data)

    def edit_message(
        self,
        node_id: str,
        content: Union[Optional[str], UnsetType] = UNSET,
        tools: Union[Optional[list[ToolInput]], UnsetType] = UNSET,
        tool_choice: Union[Optional[ToolChoiceInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> EditMessage:
        query = gql("""
            mutation EditMessage($nodeId: ID!, $content: String, $tools: [ToolInput!], $toolChoice: ToolChoiceInput) {
              editMessage(
                nodeId: $nodeId
                content: $content
                tools: $tools
                toolChoice: $toolChoice
              ) {
                ...TurnFields
              }
            }

            fragment MessageFields on Message {
              id
              sessionId
              role
              content
              predecessorId
              createdAt
              tokens
              toolUseIds
              metadata
              blocks {
                __typename
                ... on TextBlock {
                  text
                }
                ... on ThinkingBlock {
                  thinking
                  signature
                }
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                  content {
                    __typename
                    ... on TextBlock {
                      text
                    }
                  }
                }
              }
            }

            fragment TurnFields on Turn {
              userNode {
                ...MessageFields
              }
              reply {
                ...MessageFields
              }
              callId
              error
              errorCode
              openToolUseIds
              headMoved
              replayed
            }
            """)
        variables: dict[str, object] = {
            "nodeId": node_id,
            "content": content,
            "tools": tools,
            "toolChoice": tool_choice,
        }
        response = self.execute(
            query=query, operation_name="EditMessage", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EditMessage.model_validate(data)

    def begin_turn(
        self,
        session_id: str,
        format: RequestFormat,
        content: Union[Optional[str], UnsetType] = UNSET,
        tool_results: Union[Optional[list[ToolResultBlockInput]], UnsetType] = UNSET,
        tools: Union[Optional[list[ToolInput]], UnsetType] = UNSET,
        tool_choice: Union[Optional[ToolChoiceInput], UnsetType] = UNSET,
        ttl_seconds: Union[Optional[int], UnsetType] = UNSET,
        model: Union[Optional[str], UnsetType] = UNSET,
        max_tokens: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> BeginTurn:
        query = gql("""
            mutation BeginTurn($sessionId: ID!, $content: String, $toolResults: [ToolResultBlockInput!], $tools: [ToolInput!], $toolChoice: ToolChoiceInput, $ttlSeconds: Int, $format: RequestFormat!, $model: String, $maxTokens: Int) {
              beginTurn(
                sessionId: $sessionId
                content: $content
                toolResults: $toolResults
                tools: $tools
                toolChoice: $toolChoice
                ttlSeconds: $ttlSeconds
              ) {
                id
                sessionId
                userNode {
                  ...MessageFields
                }
                headId
                readIds
                toolsSha256
                fingerprint
                expiresAt
                request(format: $format, model: $model, maxTokens: $maxTokens)
              }
            }

            fragment MessageFields on Message {
              id
              sessionId
              role
              content
              predecessorId
              createdAt
              tokens
              toolUseIds
              metadata
              blocks {
                __typename
                ... on TextBlock {
                  text
                }
                ... on ThinkingBlock {
                  thinking
                  signature
                }
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                  content {
                    __typename
                    ... on TextBlock {
                      text
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "sessionId": session_id,
            "content": content,
            "toolResults": tool_results,
            "tools": tools,
            "toolChoice": tool_choice,
            "ttlSeconds": ttl_seconds,
            "format": format,
            "model": model,
            "maxTokens": max_tokens,
        }
        response = self.execute(
            query=query, operation_name="BeginTurn", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return BeginTurn.model_validate(data)

    def complete_turn(
        self,
        draft_id: str,
        client_key: str,
        model: str,
        content: Union[Optional[str], UnsetType] = UNSET,
        blocks: Union[Optional[list[ContentBlockInput]], UnsetType] = UNSET,
        usage: Union[Optional[UsageInput], UnsetType] = UNSET,
        stop_reason: Union[Optional[str], UnsetType] = UNSET,
        provider: Union[Optional[str], UnsetType] = UNSET,
        error: Union[Optional[ModelFailureInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> CompleteTurn:
        query = gql("""
            mutation CompleteTurn($draftId: ID!, $clientKey: String!, $model: String!, $content: String, $blocks: [ContentBlockInput!], $usage: UsageInput, $stopReason: String, $provider: String, $error: ModelFailureInput) {
              completeTurn(
                draftId: $draftId
                clientKey: $clientKey
                model: $model
                content: $content
                blocks: $blocks
                usage: $usage
                stopReason: $stopReason
                provider: $provider
                error: $error
              ) {
                ...TurnFields
              }
            }

            fragment MessageFields on Message {
              id
              sessionId
              role
              content
              predecessorId
              createdAt
              tokens
              toolUseIds
              metadata
              blocks {
                __typename
                ... on TextBlock {
                  text
                }
                ... on ThinkingBlock {
                  thinking
                  signature
                }
                ... on ToolUseBlock {
                  id
                  name
                  input
                }
                ... on ToolResultBlock {
                  toolUseId
                  isError
                  content {
                    __typename
                    ... on TextBlock {
                      text
                    }
                  }
                }
              }
            }

            fragment TurnFields on Turn {
              userNode {
                ...MessageFields
              }
              reply {
                ...MessageFields
              }
              callId
              error
              errorCode
              openToolUseIds
              headMoved
              replayed
            }
            """)
        variables: dict[str, object] = {
            "draftId": draft_id,
            "clientKey": client_key,
            "model": model,
            "content": content,
            "blocks": blocks,
            "usage": usage,
            "stopReason": stop_reason,
            "provider": provider,
            "error": error,
        }
        response = self.execute(
            query=query, operation_name="CompleteTurn", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CompleteTurn.model_validate(data)
