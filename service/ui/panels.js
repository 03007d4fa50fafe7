// The HTML around the drawing: the sessions list, what the model reads (the render panel),
// the calls list and the detail card. Each function rebuilds its element's content in one
// go; clicks are handled by delegation in app.js.

import { blocksView, isPlain, toolNames } from "./blocks.js";
import { ago, clock, fill, h, moment, plural, shortId, tokens, trim } from "./util.js";

const ROLE_LABEL = { SYSTEM: "System", USER: "User", ASSISTANT: "Assistant", TOOL: "Tool", SUMMARY: "Summary",
  CARRY: "Branch summary" };
const CONTENT_CHARS = 420;

function roleChip(role) {
  return h("span", { class: `role-chip r-${String(role).toLowerCase()}` }, ROLE_LABEL[role] || role);
}

// -- sessions ---------------------------------------------------------------------------

// The loaded sessions grouped by project (the working directory), each group where its
// most recently active session is; a heading names the directory's last part.
export function sessionGroups(sessions, selectedId) {
  const groups = new Map();
  for (const s of sessions) {
    const key = s.project || "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(s);
  }
  return [...groups].flatMap(([project, members]) => [
    h("li", { class: "project-group", "data-project": project, title: project || "Sessions with no project" },
      h("span", { class: "pg-name" }, projectName(project)),
      h("span", { class: "pg-count muted" }, String(members.length))),
    ...members.map((s) => sessionItem(s, s.id === selectedId)),
  ]);
}

function projectName(project) {
  if (!project) return "No project";
  const parts = project.split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : project;
}

function sessionItem(session, selected) {
  return h("li", { class: `session-item${selected ? " selected" : ""}`, "data-session-id": session.id },
    h("div", { class: "s-title" }, toolBadge(session.tool, session.toolVersion),
      h("span", {}, session.title || "Untitled session")),
    h("div", { class: "s-meta" },
      h("span", {}, plural(session.nodeCount, "node")),
      h("span", { class: `strategy st-${session.summaryStrategy}` }, session.summaryStrategy),
      h("span", { class: "s-when muted", title: moment(session.lastActivityAt) }, ago(session.lastActivityAt))),
    session.tool ? sourceLine(session) : null,
    h("div", { class: "s-id" }, session.id));
}

// A badge per tool: imported sessions carry their tool's, native ones ctxdag's.
const TOOLS = { "claude-code": ["CC", "Claude Code"], codex: ["CX", "Codex"], pi: ["π", "Pi"] };

function toolBadge(tool, version) {
  const [mark, name] = TOOLS[tool] || (tool ? [tool.slice(0, 2).toUpperCase(), tool] : ["◆", "ctxdag (native)"]);
  return h("span", { class: `tool-badge tb-${tool || "native"}`, title: [name, version].filter(Boolean).join(" ") }, mark);
}

// What an imported session's file says: tool and version, branch, models, when.
function sourceLine(session) {
  const tool = [session.tool, session.toolVersion].filter(Boolean).join(" ");
  const when = `${moment(session.firstActivityAt)} – ${moment(session.lastActivityAt)}`;
  return h("div", { class: "s-source", title: [session.project, when].filter(Boolean).join("\n") },
    h("span", { class: "s-tool" }, tool),
    session.gitBranch ? h("span", { class: "s-branch" }, `⎇ ${session.gitBranch}`) : null,
    session.models.length ? h("span", { class: "s-models" }, session.models.join(", ")) : null);
}

// -- what the model reads ---------------------------------------------------------------

export function renderHead(el, { render, headId, isHead, folds }) {
  fill(el, 
    h("div", { class: "ph-title" }, "From ", h("code", {}, shortId(headId)), isHead ? h("span", { class: "pill p-head" }, "HEAD") : null),
    h("div", { class: "ph-meta" },
      plural(render.nodeIds.length, "node"), " · ", `${tokens(render.tokens)} tokens`,
      render.standInIds.length ? h("span", { class: "pill p-summary" }, `${render.standInIds.length > 1
        ? `${render.standInIds.length} summaries stand` : "summary stands"} in for ${folds ?? "?"}`)
        : h("span", { class: "pill" }, "verbatim")));
}

export function renderList(el, render) {
  const names = toolNames(render.nodes);
  const open = new Set(render.openToolUseIds);
  const standIns = new Set(render.standInIds);
  const items = render.nodes.map((node, i) => {
    const summary = standIns.has(node.id);
    const plain = isPlain(node.blocks);
    return h("li", { class: `render-row r-${node.role.toLowerCase()}${summary ? " summary" : ""}${plain ? "" : " has-blocks"}`, "data-id": node.id },
      h("div", { class: "rr-head" },
        h("span", { class: "rr-pos" }, String(i + 1)),
        roleChip(node.role),
        summary ? h("span", { class: "pill p-summary" }, "summary stand-in") : null,
        h("span", { class: "rr-tok" }, `${tokens(node.tokens)} tok`)),
      plain ? h("div", { class: "rr-body" }, trim(node.content, CONTENT_CHARS))
        : blocksView(node.blocks, { names, open }));
  });
  fill(el, ...items);
}

export function renderMessage(el, headEl, text, kind = "muted") {
  fill(headEl);
  fill(el, h("li", { class: `pane-note ${kind}` }, text));
}

// -- calls ------------------------------------------------------------------------------

export function callsHead(el, shown, total) {
  fill(el, h("div", { class: "ph-meta" },
    total ? `${shown < total ? `the newest ${shown} of ` : ""}${plural(total, "call")}, newest first` : "No model calls yet"));
}

export function callItem(call, active) {
  const io = `${tokens(call.inputTokens)} in · ${tokens(call.outputTokens)} out`;
  return h("li", { class: `call-item${active ? " active" : ""}${call.error ? " failed" : ""}`, "data-call-id": call.id, tabindex: "0" },
    h("div", { class: "c-top" },
      h("span", { class: `purpose pu-${call.purpose.toLowerCase()}` }, call.purpose.toLowerCase()),
      h("span", { class: "c-model" }, call.model || call.provider),
      h("span", { class: "c-time", title: call.createdAt }, clock(call.createdAt))),
    h("div", { class: "c-meta" },
      h("span", {}, `reads ${call.readCount}`), h("span", {}, io), cacheNote(call),
      call.error ? h("span", { class: "error" }, trim(call.error, 60)) : null));
}

const BROKE_BY = { COMPACTION: "a compaction", UNCOMPACTION: "an uncompaction", PIN: "a pin", UNPIN: "an unpin",
  EDIT: "an edit, retry or fork", TOOLS: "other tools", BRANCH: "another branch" };
// Writes that took the previous prompt's node out: that node is the one they concern.
const TOOK_OUT = new Set(["UNCOMPACTION", "UNPIN"]);

/** The node a cache break concerns: the one written in, or for a removal the one taken out. */
function brokeOn(broke) {
  return (TOOK_OUT.has(broke.cause) ? broke.previousNodeId : broke.nodeId) || broke.nodeId || broke.previousNodeId;
}

/** A call's shared prefix with the previous call, and where its cache broke (and by what). */
function cacheNote(call) {
  if (call.sharedPrefixTokens == null || !call.promptTokens) return null;
  const share = `prefix ${Math.round((100 * call.sharedPrefixTokens) / call.promptTokens)}%`;
  const broke = call.cacheBreak;
  if (!broke) return h("span", { class: "c-cache", title: `${tokens(call.sharedPrefixTokens)} of ${tokens(call.promptTokens)} shared with the previous call` }, share);
  return h("span", { class: "c-cache broke", "data-cause": broke.cause, title: `the prompt differs from the previous call's at read ${broke.position}` },
    `${share} · broken by ${BROKE_BY[broke.cause] || broke.cause.toLowerCase()}`);
}

// -- the detail card --------------------------------------------------------------------

function field(label, value) {
  return h("div", { class: "kv" }, h("span", { class: "k" }, label), h("span", { class: "v" }, value));
}

export function detailLoading(el, title) {
  fill(el, h("div", { class: "d-title" }, title), h("p", { class: "muted" }, "Loading…"));
}

export function detailError(el, message) {
  fill(el, h("p", { class: "error" }, message));
}

/** A node (turn, ROOT, capsule or relic): its content, the summaries covering it, its readers.
 * `pair` names the nodes holding the other half of its tool calls: `uses` (the reply its
 * results answer), `results` (the message answering its calls); `names` the tool names. */
export function detailNode(el, node, { kind, row, folds, pair = {}, names = null }) {
  const badges = [];
  if (row?.isHead) badges.push(h("span", { class: "pill p-head" }, "HEAD"));
  if (kind === "capsule") badges.push(h("span", { class: "pill p-summary" }, `capsule · ${plural(row.coversIds.length, "row")}`));
  if (row?.outOfContext) badges.push(h("span", { class: "pill p-unsent", title: "kept out of every render: its tool never sent it to the model" }, "not sent to the model"));
  if (kind === "relic") badges.push(h("span", { class: "pill p-relic" }, row?.retired ? "retired" : "relic"));
  if (node.sideBranch) badges.push(h("span", { class: "pill" }, "spawned task"));
  if (node.forkOf) badges.push(h("span", { class: "pill" }, `${node.role === "USER" ? "edit" : "retry"} of ${shortId(node.forkOf)}`));
  if (node.callerId) badges.push(h("span", { class: "pill" }, `called by ${shortId(node.callerId)}`));
  if (node.label) badges.push(h("span", { class: "pill p-label", title: "label" }, node.label));
  if (row?.branchName) badges.push(h("span", { class: "pill p-branch", title: "branch name" }, `⎇ ${row.branchName}`));

  const readers = node.readBy;
  const readList = h("ol", { class: "mini-list" }, ...readers.edges.map((edge) =>
    h("li", { "data-read-call": edge.node.id, tabindex: "0" },
      h("span", { class: `purpose pu-${edge.node.purpose.toLowerCase()}` }, edge.node.purpose.toLowerCase()),
      h("span", { class: "muted" }, `at position ${edge.position}`),
      h("span", { class: "c-time" }, clock(edge.node.createdAt)))));
  const covered = node.coveredBy.length
    ? h("div", { class: "chips" }, ...node.coveredBy.map((s) =>
      h("span", { class: `pill ${s.isActive ? "p-summary" : "p-relic"}`, "data-goto": s.id, title: s.id },
        `${shortId(s.id)} ${s.isActive ? "active" : s.retired ? "retired" : s.superseded ? "relic" : "applies"}`)))
    : h("span", { class: "muted" }, "no summary");

  fill(el, 
    h("div", { class: "d-title" }, roleChip(node.role), h("code", { class: "d-id", title: "node id" }, node.id), ...badges),
    isPlain(node.blocks) ? h("div", { class: "d-content" }, trim(node.content, 900))
      : h("div", { class: "d-content d-blocks" }, blocksView(node.blocks, { names, full: true })),
    pairLinks(node, pair),
    h("div", { class: "kvs" },
      field("seq", `#${node.seq}`), field("depth", String(node.depth)), field("tokens", tokens(node.tokens)),
      field("created", clock(node.createdAt))),
    node.summary ? h("div", { class: "kvs" },
      field("segment", plural(node.summary.coversIds.length, "turn")), field("strategy", node.summary.strategy),
      node.summary.instructions ? field("focus", trim(node.summary.instructions, 80)) : null) : null,
    h("div", { class: "d-sub" }, "Covered by"), covered,
    h("div", { class: "d-sub" }, `Read by ${plural(readers.totalCount, "call")}`,
      readers.totalCount > readers.edges.length ? h("span", { class: "muted" }, ` (newest ${readers.edges.length})`) : null),
    readers.edges.length ? readList : h("span", { class: "muted" }, "no call read it"));
}

function pairLinks(node, pair) {
  const links = [];
  if (node.toolUseIds.length) {
    links.push(pair.results
      ? h("span", { class: "pill p-tool", "data-goto": pair.results, title: pair.results }, `answered in ${shortId(pair.results)}`)
      : h("span", { class: "pill p-open" }, `${plural(node.toolUseIds.length, "tool call")} open`));
  }
  if (pair.uses) links.push(h("span", { class: "pill p-tool", "data-goto": pair.uses, title: pair.uses }, `answers ${shortId(pair.uses)}`));
  return links.length ? h("div", { class: "chips pair-links" }, ...links) : null;
}

/** A model call: what it was, and that its reads are highlighted. */
export function detailCall(el, call, { shownCount }) {
  fill(el, 
    h("div", { class: "d-title" },
      h("span", { class: `purpose pu-${call.purpose.toLowerCase()}` }, call.purpose.toLowerCase()),
      h("code", { class: "d-id" }, call.id)),
    h("div", { class: "kvs" },
      field("model", call.model || "–"), field("provider", call.provider),
      field("tokens", `${tokens(call.inputTokens)} in · ${tokens(call.outputTokens)} out`),
      field("at", clock(call.createdAt)),
      field("head", call.headId ? shortId(call.headId) : "–"),
      field("output", call.outputId ? shortId(call.outputId) : "–"),
      field("cache", `${tokens(call.cacheReadInputTokens)} read · ${tokens(call.cacheCreationInputTokens)} written`),
      field("shared prefix", call.sharedPrefixTokens == null ? "–"
        : `${tokens(call.sharedPrefixTokens)} of ${tokens(call.promptTokens)} (${plural(call.sharedPrefixReads, "read")})`)),
    call.cacheBreak ? h("p", { class: "d-note cache-break", "data-cause": call.cacheBreak.cause },
      `The cache broke at read ${call.cacheBreak.position}: `,
      h("span", { class: "pill", "data-goto": brokeOn(call.cacheBreak) },
        `${BROKE_BY[call.cacheBreak.cause] || call.cacheBreak.cause} (${shortId(brokeOn(call.cacheBreak))})`),
      ".") : null,
    call.error ? h("p", { class: "error" }, call.error) : null,
    h("p", { class: "d-note" }, `Read ${plural(call.readIds.length, "node")}, highlighted in the drawing`,
      shownCount < call.readIds.length ? ` (${call.readIds.length - shownCount} folded into a capsule)` : "", "."));
}

