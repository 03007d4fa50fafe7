// The service, from the page: GraphQL over HTTP (fetch) and a minimal graphql-transport-ws
// client over the browser's WebSocket, both to this origin's /graphql. The bearer token
// (when the service requires one) lives in sessionStorage.

const TOKEN_KEY = "ctxdag.token";

export class ApiError extends Error {
  constructor(message, code = null, status = null) {
    super(message);
    this.code = code;
    this.status = status; // the HTTP status, when the service answered one
  }
}

// -- the token --------------------------------------------------------------------------

/** A token given once in the URL fragment (#token=…) is kept and removed from the address bar. */
export function adoptTokenFromFragment() {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ""));
  const token = fragment.get("token");
  if (!token) return;
  setToken(token);
  fragment.delete("token");
  const rest = fragment.toString();
  history.replaceState(history.state, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage disabled: the token lasts as long as the page */
  }
}

function authorization() {
  const token = getToken();
  return token ? `Bearer ${token}` : null;
}

// -- HTTP -------------------------------------------------------------------------------

/** `data` of one operation; an ApiError carrying the first error's extensions.code otherwise. */
export async function gql(query, variables = {}) {
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  const auth = authorization();
  if (auth) headers.Authorization = auth;
  let response;
  try {
    response = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  } catch (e) {
    throw new ApiError(`the service did not answer (${e.message})`, "UNAVAILABLE");
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`the service answered HTTP ${response.status}, not GraphQL`, "UNAVAILABLE");
  }
  if (body.errors && body.errors.length) {
    const first = body.errors[0];
    throw new ApiError(first.message, first.extensions?.code ?? null, response.status);
  }
  return body.data;
}

// -- graphql-transport-ws ---------------------------------------------------------------

/**
 * One websocket for the page, carrying at most one subscription (the shown session's events).
 * It reconnects with backoff and reports its state: "connecting", "live", "disconnected",
 * "unauthorized" (the service refused the token), "idle" (nothing to watch).
 */
export class LiveSocket {
  constructor({ onEvent, onStatus, onResubscribed }) {
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.onResubscribed = onResubscribed;
    this.ws = null;
    this.acked = false;
    this.target = null; // {query, variables} of the wanted subscription
    this.opId = null;
    this.counter = 0;
    this.attempt = 0;
    this.retryTimer = null;
    this.status = "idle";
  }

  /** Watch `variables` with `query` from now on (null: watch nothing). */
  subscribe(query, variables) {
    this.target = query ? { query, variables } : null;
    this.attempt = 0;
    if (this.opId && this.ws && this.acked) this.send({ id: this.opId, type: "complete" });
    this.opId = null;
    if (!this.target) {
      this.setStatus("idle");
      return;
    }
    if (this.ws && this.acked) this.startOperation();
    else if (!this.ws) this.connect();
  }

  /** Drops the connection and makes a new one (a new token, say). */
  restart() {
    this.attempt = 0;
    this.teardown();
    if (this.target) this.connect();
  }

  setStatus(status) {
    if (status === this.status) return;
    this.status = status;
    this.onStatus?.(status);
  }

  connect() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    let ws;
    try {
      ws = new WebSocket(`${scheme}://${location.host}/graphql`, "graphql-transport-ws");
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.acked = false;
    this.setStatus("connecting");
    ws.onopen = () => {
      const auth = authorization();
      this.send({ type: "connection_init", payload: auth ? { Authorization: auth } : {} });
    };
    ws.onmessage = (message) => this.receive(ws, message.data);
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.acked = false;
      this.opId = null;
      // 4403: the service refused the token sent in connection_init.
      this.setStatus(event.code === 4403 ? "unauthorized" : "disconnected");
      this.scheduleReconnect();
    };
  }

  receive(ws, data) {
    if (this.ws !== ws) return;
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    switch (message.type) {
      case "connection_ack":
        this.acked = true;
        this.attempt = 0;
        if (this.target) this.startOperation();
        break;
      case "ping":
        this.send({ type: "pong" });
        break;
      case "next":
        if (message.id === this.opId && message.payload) {
          if (message.payload.errors?.length) this.failed(message.payload.errors);
          else if (message.payload.data) this.onEvent?.(message.payload.data);
        }
        break;
      case "error":
        if (message.id === this.opId) this.failed(message.payload);
        break;
      case "complete":
        if (message.id === this.opId) {
          // The server ended the stream: watch again after a pause.
          this.opId = null;
          this.setStatus("disconnected");
          this.scheduleResubscribe();
        }
        break;
      default:
        break;
    }
  }

  failed(errors) {
    this.opId = null;
    const code = Array.isArray(errors) ? errors[0]?.extensions?.code : null;
    this.setStatus(code === "UNAUTHENTICATED" ? "unauthorized" : "disconnected");
    this.scheduleResubscribe();
  }

  startOperation() {
    this.opId = `events-${++this.counter}`;
    this.send({ id: this.opId, type: "subscribe", payload: this.target });
    this.setStatus("live");
    this.onResubscribed?.();
  }

  scheduleResubscribe() {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.target && this.ws && this.acked && !this.opId) this.startOperation();
    }, this.backoff());
  }

  scheduleReconnect() {
    clearTimeout(this.retryTimer);
    if (!this.target) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.ws && this.target) this.connect();
    }, this.backoff());
  }

  /** 0.5 s, 1 s, 2 s, … up to 15 s, with a little jitter. */
  backoff() {
    const delay = Math.min(15000, 500 * 2 ** this.attempt);
    this.attempt += 1;
    return delay * (0.85 + Math.random() * 0.3);
  }

  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  teardown() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const ws = this.ws;
    this.ws = null;
    this.acked = false;
    this.opId = null;
    if (ws) {
      ws.onclose = null;
      ws.close();
    }
  }
}
