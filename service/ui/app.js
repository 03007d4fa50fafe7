// The capsule viewer: state, wiring and the URL. Data comes from the GraphQL API (api.js),
// the drawing from layout.js + graph.js, the side panels from panels.js.

import { ApiError, LiveSocket, adoptTokenFromFragment, getToken, gql, setToken } from "./api.js";
import { GraphView } from "./graph.js";
import { layout } from "./layout.js";
import { markPair, toolNames } from "./blocks.js";
import { wireImport } from "./importer.js";
import * as panels from "./panels.js";
import { wireSearch } from "./search.js";
import {
  BLOCKS_PER_REQUEST, CALL_READS, NODE_BLOCKS, NODE_DETAIL, RENDER, SESSIONS, SESSION_EVENTS, SESSION_VIEW, TOOL_NAMES,
} from "./queries.js";
import { debounce, fill, h, plural, shortId } from "./util.js";

const $ = (id) => document.getElementById(id);
const PAGE = 50; // sessions per page of the list

const state = {
  sessions: [],
  sessionsCursor: null,
  sessionsTicket: 0, // bumps on every sessions request: only the newest answer is drawn
  sessionFilter: "", // the filter box's text
  sessionId: null,
  generation: 0, // bumps on every session switch: late answers for another session are dropped
  session: null, // the SessionView answer
  rows: [],
  rowsById: new Map(),
  tips: new Set(),
  calls: [],
  expanded: new Set(),
  renderHeadId: null, // null: HEAD
  selection: null, // {type: "node" | "call", id}
  highlightSource: null, // "render" | "call" | "pair" (a tool call and its result) | "find" | "search"
  pendingHit: null, // a search hit's node id, lit once its session is drawn
  found: [], // the rows the finder matched, in seq order
  foundAt: -1, // the one revealed last (Enter goes to the next)
  blocksById: new Map(), // rendered messages' blocks (nodes never change: asked once each)
  drawMs: 0,
  tickets: 0, // SessionView requests sent
  applied: 0, // the newest one shown
};

const graph = new GraphView($("graph-scroll"), $("graph"), $("tooltip"), {
  onNode: (id, kind) => nodeClicked(id, kind),
  onBackground: () => {},
  onZoom: (zoom) => showZoom(zoom),
});

function showZoom(zoom) {
  $("zoom-reset").textContent = `${Math.round(zoom * 100)}%`;
}

const live = new LiveSocket({
  onEvent: (data) => eventArrived(data),
  onStatus: (status) => showLive(status),
  onResubscribed: () => refreshSoon(), // events may have been missed while away
});

// -- errors and auth --------------------------------------------------------------------

function needsToken(error) {
  return error instanceof ApiError && error.code === "UNAUTHENTICATED";
}

function askForToken(message) {
  const dialog = $("auth");
  // Several requests can be refused at once: the later refusals must not wipe a token
  // the user is already typing.
  if (dialog.open && !message) return;
  $("auth-error").hidden = !message;
  $("auth-error").textContent = message || "";
  if (!dialog.open) {
    $("auth-token").value = "";
    dialog.showModal();
  }
  $("auth-token").focus();
}

function showTokenButton() {
  $("token-button").hidden = !getToken();
}

/** `work()`'s answer; on failure undefined, after asking for a token or calling onError. */
async function guarded(work, onError) {
  try {
    return await work();
  } catch (error) {
    if (needsToken(error)) {
      askForToken(getToken() ? "The service refused this token." : "");
      return undefined;
    }
    console.warn("ctxdag viewer:", error.message);
    onError?.(error);
    return undefined;
  }
}

// -- sessions ---------------------------------------------------------------------------

// A page of the sessions last active first; the filter box keeps titles holding its text.
// Only the answer to the newest request is shown (typing sends one per pause).
async function loadSessions(more = false) {
  const ticket = ++state.sessionsTicket;
  const text = state.sessionFilter.trim();
  const data = await guarded(() => gql(SESSIONS, {
    first: PAGE, after: more ? state.sessionsCursor : null, filter: text ? { text } : null,
  }), (e) => $("session-list").replaceChildren(h("li", { class: "pane-note error" }, e.message)));
  if (!data || ticket !== state.sessionsTicket) return;
  const page = data.sessions;
  state.sessions = more ? state.sessions.concat(page.edges.map((e) => e.node)) : page.edges.map((e) => e.node);
  state.sessionsCursor = page.pageInfo.endCursor;
  $("more-sessions").hidden = !page.pageInfo.hasNextPage;
  $("session-count").textContent = page.totalCount ? String(page.totalCount) : "";
  drawSessions();
}

function drawSessions() {
  const list = $("session-list");
  if (!state.sessions.length) {
    const note = state.sessionFilter.trim() ? `No session title holds “${state.sessionFilter.trim()}”.`
      : "No sessions yet. `ctxdag demo` writes one.";
    fill(list, h("li", { class: "pane-note muted" }, note));
    return;
  }
  fill(list, ...panels.sessionGroups(state.sessions, state.sessionId));
}

function sessionFromUrl() {
  return new URLSearchParams(location.search).get("session");
}

function openSession(id, { push = true } = {}) {
  if (!id) return;
  if (push && sessionFromUrl() !== id) {
    const url = new URL(location.href);
    url.searchParams.set("session", id);
    history.pushState({ session: id }, "", url.pathname + url.search + url.hash);
  }
  state.generation += 1;
  state.sessionId = id;
  state.session = null;
  state.drawingKey = state.callsKey = state.renderKey = null;
  state.expanded = new Set();
  state.blocksById = new Map();
  state.selection = null;
  state.renderHeadId = null;
  state.highlightSource = null;
  state.found = [];
  $("find").value = "";
  $("find-count").textContent = "";
  graph.highlight([]);
  graph.select(null);
  $("graph-scroll").scrollTo(0, 0);
  $("detail").replaceChildren(h("p", { class: "muted hint" }, "Click a node to see what the model reads from it; click a capsule to open it."));
  for (const item of $("session-list").children) item.classList.toggle("selected", item.dataset.sessionId === id);
  live.subscribe(SESSION_EVENTS, { id });
  refresh();
}

// -- the session: drawing, calls, render ------------------------------------------------

async function refresh() {
  const generation = state.generation;
  const id = state.sessionId;
  if (!id) return;
  const started = performance.now();
  const ticket = ++state.tickets; // answers may cross: an older one never replaces a newer
  const data = await guarded(() => gql(SESSION_VIEW, { id }), (e) => showSessionError(e));
  if (!data || generation !== state.generation || ticket < state.applied) return;
  state.applied = ticket;
  if (!data.session) {
    showSessionError(new ApiError(`no session ${id}`, "NOT_FOUND"));
    return;
  }
  const fetchedMs = performance.now() - started;
  const session = data.session;
  // Redraw only what changed (a refetch after a reconnect usually changes nothing).
  const drawing = JSON.stringify([session.headId, session.branches, session.graph.nodes]);
  const calls = JSON.stringify(session.modelCalls);
  const redraw = drawing !== state.drawingKey;
  const recall = calls !== state.callsKey;
  state.drawingKey = drawing;
  state.callsKey = calls;
  state.session = session;
  if (redraw) {
    state.rows = session.graph.nodes;
    state.rowsById = new Map(state.rows.map((r) => [r.id, r]));
    state.tips = new Set(session.branches.map((b) => b.tip.id));
    // Capsules that are gone (a new compaction replaced them) are no longer expanded; a
    // render or selection of a node that is gone (its branch deleted) falls back to HEAD.
    for (const capsule of [...state.expanded]) if (!state.rowsById.get(capsule)?.coversIds) state.expanded.delete(capsule);
    if (state.renderHeadId && !state.rowsById.has(state.renderHeadId)) {
      state.renderHeadId = null;
      if (state.highlightSource === "render") clearHighlight();
    }
    if (state.selection?.type === "node" && !state.rowsById.has(state.selection.id)) {
      state.selection = null;
      graph.select(null);
      fill($("detail"), h("p", { class: "muted hint" }, "The selected node is gone (its branch was deleted)."));
    }
    draw();
    $("graph").dataset.fetchMs = String(Math.round(fetchedMs));
    if (state.pendingHit) lightHit();
    if (state.highlightSource === "find") find({ reveal: false });
  }
  drawHeader();
  if (recall) {
    state.calls = session.modelCalls.edges.map((e) => e.node).reverse();
    drawCalls(session.modelCalls.totalCount);
  }
  if (redraw || recall) refreshRender();
  if (state.selection?.type === "node") showNode(state.selection.id, { quiet: true });
}

function draw() {
  const started = performance.now();
  const placed = layout(state.rows, state.expanded);
  graph.draw({ layout: placed, rowsById: state.rowsById, tips: state.tips });
  state.drawMs = performance.now() - started;
  $("graph").dataset.layoutMs = String(Math.round(state.drawMs));
  $("graph-empty").hidden = true;
  const capsules = state.rows.filter((r) => r.coversIds).length;
  const folded = state.rows.filter((r) => r.foldedInto).length;
  const stats = $("graph-stats");
  stats.title = `laid out and drawn in ${Math.round(state.drawMs)} ms`;
  stats.replaceChildren(
    h("span", {}, plural(state.rows.length, "node")),
    h("span", {}, plural(state.session.branches.length, "branch", "branches")),
    h("span", {}, plural(capsules, "capsule")),
    h("span", {}, `${folded} folded`));
}

function drawHeader() {
  const s = state.session;
  $("session-head").replaceChildren(
    h("span", { class: "sh-title" }, s.title || "Untitled session"),
    h("span", { class: `strategy st-${s.summaryStrategy}`, title: "summary strategy" }, s.summaryStrategy),
    h("code", { class: "sh-id" }, s.id));
  document.title = `${s.title || shortId(s.id)} · ctxdag`;
}

function showSessionError(error) {
  $("graph").innerHTML = "";
  const empty = $("graph-empty");
  empty.hidden = false;
  empty.textContent = error.code === "NOT_FOUND" ? `No session ${state.sessionId} here.` : error.message;
}

function drawCalls(total) {
  const active = state.selection?.type === "call" ? state.selection.id : null;
  $("calls-list").replaceChildren(...state.calls.map((c) => panels.callItem(c, c.id === active)));
  panels.callsHead($("calls-head"), state.calls.length, total);
  $("calls-count").textContent = total ? String(total) : "";
}

async function refreshRender() {
  const generation = state.generation;
  const head = state.renderHeadId;
  const data = await guarded(() => gql(RENDER, { id: state.sessionId, head }),
    (e) => {
      state.renderKey = null;
      panels.renderMessage($("render-panel"), $("render-head"), e.message, "error");
    });
  if (!data || generation !== state.generation || head !== state.renderHeadId) return;
  const render = data.session.render;
  const key = JSON.stringify(render);
  if (key === state.renderKey && $("render-panel").childElementCount) return;
  if (!(await loadBlocks(render.nodes.map((n) => n.id)))) return;
  if (generation !== state.generation || head !== state.renderHeadId) return;
  state.renderKey = key;
  render.nodes = render.nodes.map((n) => ({ ...n, blocks: state.blocksById.get(n.id) }));
  const covers = render.standInIds.map((id) => state.rowsById.get(id)?.coversIds);
  panels.renderHead($("render-head"), {
    render, headId: render.headId, isHead: render.headId === state.session?.headId,
    folds: covers.every(Boolean) ? plural(covers.reduce((n, ids) => n + ids.length, 0), "row") : null,
  });
  panels.renderList($("render-panel"), render);
  if (state.highlightSource === "render") graph.highlight(render.nodeIds);
}

/** Asks the blocks of the messages not asked before; false when a request failed. */
async function loadBlocks(ids) {
  const cache = state.blocksById;
  const missing = ids.filter((id) => !cache.has(id));
  const chunks = [];
  for (let i = 0; i < missing.length; i += BLOCKS_PER_REQUEST) chunks.push(missing.slice(i, i + BLOCKS_PER_REQUEST));
  const answers = await guarded(() => Promise.all(chunks.map((chunk) => gql(NODE_BLOCKS, { ids: chunk }))),
    (e) => panels.renderMessage($("render-panel"), $("render-head"), e.message, "error"));
  if (!answers) return false;
  for (const answer of answers) for (const node of answer.nodes) if (node) cache.set(node.id, node.blocks);
  return true;
}

// -- clicks -----------------------------------------------------------------------------

function nodeClicked(id, kind) {
  if (kind === "capsule") {
    if (state.expanded.has(id)) state.expanded.delete(id);
    else state.expanded.add(id);
    draw();
    state.selection = { type: "node", id };
    graph.select(id);
    showNode(id);
    return;
  }
  state.selection = { type: "node", id };
  graph.select(id);
  showNode(id);
  if (kind === "relic") return; // a summary is no head: nothing renders from it
  state.renderHeadId = id;
  state.highlightSource = "render";
  markActiveCall(null);
  showTab("context");
  state.renderKey = null;
  panels.renderMessage($("render-panel"), $("render-head"), "Rendering…");
  refreshRender();
}

async function showNode(id, { quiet = false } = {}) {
  const generation = state.generation;
  const row = state.rowsById.get(id);
  if (!quiet) panels.detailLoading($("detail"), shortId(id));
  const data = await guarded(() => gql(NODE_DETAIL, { id }), (e) => panels.detailError($("detail"), e.message));
  if (!data || generation !== state.generation || state.selection?.id !== id) return;
  if (!data.node) return;
  const kind = row?.coversIds ? "capsule" : row?.role === "SUMMARY" ? "relic" : "node";
  const folds = row?.coversIds ? state.rows.filter((r) => r.foldedInto === id).length : 0;
  const names = await toolNamesFor(data.node);
  if (generation !== state.generation || state.selection?.id !== id) return;
  panels.detailNode($("detail"), data.node, { kind, row, folds, pair: toolPair(data.node), names });
}

/** The drawn nodes holding the other half of `node`'s tool calls: the reply its results
 * answer, and the message answering its calls (of several branches, the first). */
function toolPair(node) {
  const pred = node.predecessorId && state.rowsById.get(node.predecessorId);
  const uses = node.role === "TOOL" && pred?.toolUseIds?.length ? pred.id : null;
  const results = node.toolUseIds.length
    ? state.rows.find((r) => r.predecessorId === node.id && !r.deleted && r.role === "TOOL")?.id ?? null
    : null;
  return { uses, results };
}

/** The tools a node's results answer, by tool use id (its own calls name themselves). */
async function toolNamesFor(node) {
  const own = toolNames([node]);
  if (node.role !== "TOOL" || !node.predecessorId) return own;
  const data = await guarded(() => gql(TOOL_NAMES, { id: node.predecessorId }));
  return data?.node ? toolNames([data.node]) : own;
}

async function callClicked(callId) {
  const generation = state.generation;
  state.selection = { type: "call", id: callId };
  markActiveCall(callId);
  graph.select(null);
  const data = await guarded(() => gql(CALL_READS, { id: callId }), (e) => panels.detailError($("detail"), e.message));
  if (!data || generation !== state.generation || state.selection?.id !== callId || !data.call) return;
  const call = data.call;
  state.highlightSource = "call";
  graph.highlight(call.readIds);
  const shown = call.readIds.filter((id) => graph.shownAs(id) === id).length;
  panels.detailCall($("detail"), call, { shownCount: shown });
}

function markActiveCall(callId) {
  for (const item of $("calls-list").querySelectorAll(".call-item.active")) item.classList.remove("active");
  if (callId) $("calls-list").querySelector(`[data-call-id="${CSS.escape(callId)}"]`)?.classList.add("active");
}

// -- a search hit ------------------------------------------------------------------------

/** Opens a hit's session (if another is shown) and lights the node once it is drawn. */
function openHit(sessionId, nodeId) {
  if (sessionId !== state.sessionId) openSession(sessionId);
  state.pendingHit = nodeId;
  if (state.session?.id === sessionId) lightHit();
}

/** Lights the pending hit: the capsules folding it opened, highlighted, selected, shown. */
function lightHit() {
  const id = state.pendingHit;
  state.pendingHit = null;
  if (!state.rowsById.has(id)) {
    panels.detailError($("detail"), `${shortId(id)} is not in this session's graph any more.`);
    return;
  }
  let opened = false;
  for (let row = state.rowsById.get(id); row?.foldedInto; row = state.rowsById.get(row.foldedInto)) {
    if (state.expanded.has(row.foldedInto)) continue;
    state.expanded.add(row.foldedInto);
    opened = true;
  }
  if (opened) draw();
  state.highlightSource = "search";
  markActiveCall(null);
  graph.highlight([id]);
  state.selection = { type: "node", id };
  graph.select(id);
  showNode(id);
  graph.reveal(id);
}

// -- finding labels, branch names and text ---------------------------------------------

/** The rows whose label, branch name or preview holds the finder's text (any case). */
function matching(text) {
  const needle = text.trim().toLowerCase();
  if (!needle) return [];
  return state.rows.filter((r) => !r.deleted
    && [r.label, r.branchName, r.preview].some((v) => v && v.toLowerCase().includes(needle)));
}

function find({ reveal = true, next = false } = {}) {
  const text = $("find").value;
  if (!text.trim()) {
    $("find-count").textContent = "";
    if (state.highlightSource === "find") clearHighlight();
    return;
  }
  const found = matching(text);
  const same = found.length === state.found.length && found.every((r, i) => r.id === state.found[i].id);
  state.found = found;
  state.foundAt = !found.length ? -1 : next && same ? (state.foundAt + 1) % found.length : same ? state.foundAt : 0;
  state.highlightSource = "find";
  markActiveCall(null);
  graph.highlight(found.map((r) => r.id));
  $("find-count").textContent = found.length ? `${state.foundAt + 1} of ${found.length}` : "none";
  if (reveal && found.length) graph.reveal(found[Math.max(0, state.foundAt)].id);
}

function clearHighlight() {
  state.highlightSource = null;
  state.found = [];
  $("find").value = "";
  $("find-count").textContent = "";
  graph.highlight([]);
  markActiveCall(null);
  if (state.selection?.type === "call") state.selection = null;
}

function showTab(name) {
  for (const tab of document.querySelectorAll("[data-tab]")) tab.classList.toggle("active", tab.dataset.tab === name);
  for (const pane of document.querySelectorAll("[data-pane]")) pane.hidden = pane.dataset.pane !== name;
}

// -- live -------------------------------------------------------------------------------

const refreshSoon = debounce(() => refresh(), 250);

function eventArrived(data) {
  const event = data?.sessionEvents;
  if (!event) return;
  const pill = $("live-status");
  pill.classList.remove("pulse");
  requestAnimationFrame(() => pill.classList.add("pulse"));
  pill.title = `last event: ${event.type.toLowerCase().replace(/_/g, " ")} (${event.__typename})`;
  refreshSoon();
}

function showLive(status) {
  const pill = $("live-status");
  pill.className = `live s-${status}`;
  pill.textContent = status;
}

// -- wiring -----------------------------------------------------------------------------

function wire() {
  $("session-list").addEventListener("click", (event) => {
    const item = event.target.closest("[data-session-id]");
    if (item) openSession(item.dataset.sessionId);
  });
  $("more-sessions").addEventListener("click", () => loadSessions(true));
  const filterSessions = debounce(() => loadSessions(), 250);
  $("session-filter").addEventListener("input", (event) => {
    state.sessionFilter = event.target.value;
    filterSessions();
  });
  $("calls-list").addEventListener("click", (event) => {
    const item = event.target.closest("[data-call-id]");
    if (item) callClicked(item.dataset.callId);
  });
  $("calls-list").addEventListener("keydown", (event) => {
    const item = event.target.closest("[data-call-id]");
    if (item && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      callClicked(item.dataset.callId);
    }
  });
  $("detail").addEventListener("click", (event) => {
    const reader = event.target.closest("[data-read-call]");
    if (reader) {
      showTab("calls");
      callClicked(reader.dataset.readCall);
      $("calls-list").querySelector(`[data-call-id="${CSS.escape(reader.dataset.readCall)}"]`)?.scrollIntoView({ block: "nearest" });
      return;
    }
    const target = event.target.closest("[data-goto]");
    if (target) graph.reveal(target.dataset.goto);
  });
  $("render-panel").addEventListener("click", (event) => {
    if (event.target.closest("summary")) return; // opens a thinking block, nothing else
    const card = event.target.closest("[data-tool-use]");
    if (card) {
      // A tool card: its call and its result are selected together, the other one shown.
      const cards = markPair($("render-panel"), card.dataset.toolUse, "pair-selected");
      const other = cards.find((c) => c !== card);
      other?.scrollIntoView({ block: "nearest", behavior: "smooth" });
      graph.highlight([...new Set(cards.map((c) => c.closest("[data-id]").dataset.id))]);
      state.highlightSource = "pair";
      return;
    }
    const row = event.target.closest("[data-id]");
    if (!row) return;
    row.classList.toggle("open");
    graph.reveal(row.dataset.id);
  });
  for (const pane of [$("render-panel"), $("detail")]) {
    pane.addEventListener("mouseover", (event) => markPair(pane, event.target.closest("[data-tool-use]")?.dataset.toolUse));
    pane.addEventListener("mouseleave", () => markPair(pane, null));
  }
  for (const tab of document.querySelectorAll("[data-tab]")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
  $("expand-all").addEventListener("click", () => {
    state.expanded = new Set(state.rows.filter((r) => r.coversIds).map((r) => r.id));
    if (state.session) draw();
  });
  $("collapse-all").addEventListener("click", () => {
    state.expanded = new Set();
    if (state.session) draw();
  });
  $("clear-highlight").addEventListener("click", clearHighlight);
  const findSoon = debounce(() => find(), 150);
  $("find").addEventListener("input", () => findSoon());
  $("find").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      find({ next: true });
    }
  });
  $("labeled-only").addEventListener("change", (event) => {
    $("graph").classList.toggle("labeled-only", event.target.checked);
  });
  $("goto-head").addEventListener("click", () => state.session && graph.reveal(state.session.headId));
  $("zoom-in").addEventListener("click", () => showZoom(graph.setZoom(graph.zoom * 1.2)));
  $("zoom-out").addEventListener("click", () => showZoom(graph.setZoom(graph.zoom / 1.2)));
  $("zoom-reset").addEventListener("click", () => showZoom(graph.setZoom(1)));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !$("auth").open) clearHighlight();
  });
  window.addEventListener("popstate", () => {
    const id = sessionFromUrl();
    if (id && id !== state.sessionId) openSession(id, { push: false });
  });

  $("auth-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("auth-token").value.trim();
    if (!token) return;
    setToken(token);
    $("auth").close();
    showTokenButton();
    restart();
  });
  $("auth-forget").addEventListener("click", () => {
    setToken("");
    showTokenButton();
    $("auth-token").value = "";
  });
  $("token-button").addEventListener("click", () => askForToken(""));
  wireSearch({
    form: $("search-form"), input: $("search"), list: $("search-results"), status: $("search-status"),
    more: $("more-hits"), gql, guarded, onOpen: (hit) => openHit(hit.sessionId, hit.node.id),
  });
  wireImport({
    target: document.body, button: $("import-transcript"), input: $("import-file"), status: $("import-status"),
    onImported: (id) => {
      loadSessions();
      if (id === state.sessionId) refresh();
      else openSession(id);
    },
    onError: (error) => needsToken(error) && (askForToken(""), true),
  });
}

function restart() {
  live.restart();
  loadSessions();
  if (state.sessionId) refresh();
}

function boot() {
  adoptTokenFromFragment();
  showTokenButton();
  wire();
  loadSessions();
  const id = sessionFromUrl();
  if (id) openSession(id, { push: false });
}

boot();

// For tests and the curious: the state and the last timings.
window.ctxdagViewer = { state, graph };
