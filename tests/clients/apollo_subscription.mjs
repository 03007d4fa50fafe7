// A subscription through Apollo Client's HttpLink, which streams it over multipart HTTP,
// against the served app. Run by tests/integration/test_http_subscriptions.py:
//
//   node apollo_subscription.mjs URL TOKEN SESSION_ID
//
// Subscribes to the session's events from its first (after: 0, the session holds one
// append: two events), and once both are replayed appends a message through the same
// client, whose two events then arrive live. Prints one JSON line:
// {"accept", "events": [{type, seq}, ...], "appended", "error"?}.
import { HttpLink, ApolloClient, InMemoryCache, gql } from "@apollo/client/core/index.js";

const [url, token, sessionId] = process.argv.slice(2);
const EVENTS = gql`subscription Events($s: ID!) {
  sessionEvents(sessionId: $s, after: 0) { type seq }
}`;
const APPEND = gql`mutation Append($s: ID!) {
  appendMessage(sessionId: $s, role: USER, content: "sent while subscribed") { id }
}`;

const out = { accept: null, events: [], appended: null };

async function recordingFetch(uri, options) {
  if (options.body?.includes("subscription")) out.accept = options.headers?.accept ?? null;
  return fetch(uri, options);
}

const client = new ApolloClient({
  link: new HttpLink({
    uri: url, fetch: recordingFetch, headers: { authorization: `Bearer ${token}` },
  }),
  cache: new InMemoryCache(),
});

try {
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no 4 events within 60 s")), 60_000);
    const subscription = client.subscribe({ query: EVENTS, variables: { s: sessionId } })
      .subscribe({
        next({ data, errors, error }) {
          if (errors?.length || error) {
            reject(new Error(JSON.stringify(errors ?? error)));
            return;
          }
          const { type, seq } = data.sessionEvents;
          out.events.push({ type, seq });
          if (out.events.length === 2) {
            client.mutate({ mutation: APPEND, variables: { s: sessionId } })
              .then(({ data }) => { out.appended = data.appendMessage.id; }, reject);
          }
          if (out.events.length === 4) {
            clearTimeout(timer);
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
        complete: () => reject(new Error("the subscription completed early")),
      });
  });
} catch (e) {
  out.error = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
}
console.log(JSON.stringify(out));
// An unsubscribed stream may leave its socket to the pool for a while: exit now.
process.exit(0);
