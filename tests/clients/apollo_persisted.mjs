// Apollo Client's automatic persisted queries over GET, against the served app, as an app
// using Apollo would send them: createPersistedQueryLink({sha256, useGETForHashedQueries})
// in front of an HttpLink. Run by tests/integration/test_apollo_client.py:
//
//   node apollo_persisted.mjs URL TOKEN SESSION_ID OPERATION_NAME
//
// (the operation name makes the text, and so the hash, new to the service).
// Two clients ask for the same query. The first one's hash is unknown, so it sends the
// hash alone (GET), is told PERSISTED_QUERY_NOT_FOUND, and sends hash and query (POST);
// the second one's hash is known and its GET alone is answered. Prints one JSON line:
// {"version", "results": [data, ...], "requests": [{method, accept, query}], "error"?}.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// Files, not directories: Apollo Client 3 has no exports map, and Node resolves no
// directory imports in ES modules.
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client/core/index.js";
import { createPersistedQueryLink } from "@apollo/client/link/persisted-queries/index.js";

const [url, token, sessionId, operationName] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const version = JSON.parse(
  readFileSync(require.resolve("@apollo/client/package.json"), "utf8")).version;

const requests = [];

async function recordingFetch(uri, options) {
  const sent = new URL(uri);
  const body = typeof options.body === "string" ? JSON.parse(options.body) : {};
  requests.push({
    method: options.method ?? "GET",
    accept: options.headers?.accept ?? null,
    query: sent.searchParams.has("query") || typeof body.query === "string",
  });
  return fetch(uri, options);
}

function client() {
  const persisted = createPersistedQueryLink({
    sha256: (text) => createHash("sha256").update(text).digest("hex"),
    useGETForHashedQueries: true,
  });
  const http = new HttpLink({
    uri: url, fetch: recordingFetch, headers: { authorization: `Bearer ${token}` },
  });
  return new ApolloClient({ link: persisted.concat(http), cache: new InMemoryCache() });
}

const TITLE = gql(`query ${operationName}($id: ID!) { session(id: $id) { id title } }`);
const out = { version, results: [], requests };
try {
  for (const apollo of [client(), client()]) {
    const { data } = await apollo.query({ query: TITLE, variables: { id: sessionId } });
    out.results.push(data);
  }
} catch (e) {
  out.error = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
}
console.log(JSON.stringify(out));
