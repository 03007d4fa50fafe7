// The search box across sessions: GraphQL `search`, its hits listed with their snippet,
// where each stands in the model's context and how many calls read it. A hit opens its
// session at the node (app.js lights it). Every text from the service is set as text:
// the snippet's highlights become <mark> elements built here, never markup.

import { SEARCH } from "./queries.js";
import { fill, h, plural, shortId } from "./util.js";

const PAGE = 20;

/** The badge of a hit's state at its head: [text, class, title]. */
export function stateBadge(context) {
  const by = context.summaryId ? shortId(context.summaryId) : null;
  switch (context.state) {
    case "IN_CONTEXT":
      return ["in context", "in-context", "the model reads it verbatim at this head"];
    case "PINNED":
      return ["pinned", "pinned", `covered by ${by ?? "a summary"} and rendered after it, verbatim`];
    case "SUMMARIZED":
      return [`summarized by ${by}`, "summarized", context.summaryRendered === false
        ? "the summary covering it is not rendered either" : "the model reads the summary instead"];
    case "NOT_RENDERED":
      return ["not rendered", "not-rendered", "a summary the head's render does not show"];
    case "OTHER_BRANCH":
      return ["other branch", "other-branch", by ? `off the head's path; summarized there by ${by}` : "off the head's path"];
    case "DELETED":
      return ["deleted", "deleted", "removed with its branch, kept for provenance"];
    default:
      return [context.state.toLowerCase(), "unknown", ""];
  }
}

/** The snippet as text nodes and <mark>s; highlight offsets count code points (as the
 * service's strings do), so characters beyond the BMP do not shift them. */
export function snippetNodes(snippet, highlights) {
  const chars = Array.from(snippet);
  const out = [];
  let at = 0;
  for (const { start, end } of [...highlights].sort((a, b) => a.start - b.start)) {
    if (start < at || end <= start) continue;
    if (start > at) out.push(chars.slice(at, start).join(""));
    out.push(h("mark", {}, chars.slice(start, end).join("")));
    at = end;
  }
  if (at < chars.length) out.push(chars.slice(at).join(""));
  return out;
}

function hitItem(hit) {
  const [badge, kind, why] = stateBadge(hit.context);
  const reads = hit.node.readBy.totalCount;
  return h("li", {},
    h("button", {
      type: "button", class: "search-hit", "data-node-id": hit.node.id, "data-hit-session": hit.sessionId,
      "data-state": hit.context.state,
    },
    h("span", { class: "sh-line" },
      h("span", { class: "sh-session" }, hit.sessionTitle || "Untitled session"),
      h("span", { class: `sh-role r-${hit.node.role.toLowerCase()}` }, hit.node.role.toLowerCase())),
    h("span", { class: "sh-snippet" }, snippetNodes(hit.snippet, hit.highlights)),
    h("span", { class: "sh-line" },
      h("span", { class: `sh-state s-${kind}`, title: why }, badge),
      h("span", { class: "sh-reads muted", title: "model calls that read it" },
        reads ? `read by ${plural(reads, "call")}` : "read by no call"))));
}

/**
 * Wires the box: Enter (or the form's submit) searches; ArrowDown/ArrowUp move through the
 * hits (Tab does too: each is a button); a click or Enter on a hit calls onOpen(hit).
 * `gql(query, variables)` sends a document; `guarded(work, onError)` is the page's error
 * handling (a token asked for, a message shown).
 */
export function wireSearch({ form, input, list, status, more, gql, guarded, onOpen }) {
  let ticket = 0;
  let query = "";
  let cursor = null;
  const hits = new Map(); // node id -> hit, for the open handler

  async function run(next = false) {
    const text = next ? query : input.value.trim();
    if (!text) {
      clear();
      return;
    }
    const mine = ++ticket;
    query = text;
    status.hidden = false;
    status.textContent = "Searching…";
    status.classList.remove("error");
    const data = await guarded(() => gql(SEARCH, { query: text, first: PAGE, after: next ? cursor : null }),
      (e) => {
        if (mine !== ticket) return;
        status.textContent = e.message;
        status.classList.add("error");
      });
    if (!data || mine !== ticket) return;
    const page = data.search;
    if (!next) {
      hits.clear();
      fill(list);
    }
    for (const hit of page.nodes) hits.set(hit.node.id, hit);
    list.append(...page.nodes.map(hitItem));
    cursor = page.pageInfo.endCursor;
    more.hidden = !page.pageInfo.hasNextPage;
    list.hidden = hits.size === 0;
    status.textContent = hits.size ? `${plural(hits.size, "hit")}${page.pageInfo.hasNextPage ? " so far" : ""}` : "No hits.";
  }

  function clear() {
    ticket += 1;
    hits.clear();
    fill(list);
    list.hidden = true;
    more.hidden = true;
    status.hidden = true;
  }

  function buttons() {
    return [...list.querySelectorAll(".search-hit")];
  }

  function open(button) {
    for (const b of buttons()) b.classList.toggle("active", b === button);
    const hit = hits.get(button.dataset.nodeId);
    if (hit) onOpen(hit);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  input.addEventListener("search", () => !input.value && clear()); // the field's own ✕
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" && buttons().length) {
      event.preventDefault();
      buttons()[0].focus();
    }
  });
  list.addEventListener("click", (event) => {
    const button = event.target.closest(".search-hit");
    if (button) open(button);
  });
  list.addEventListener("keydown", (event) => {
    const all = buttons();
    const at = all.indexOf(event.target.closest(".search-hit"));
    if (at < 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const to = at + (event.key === "ArrowDown" ? 1 : -1);
      if (to < 0) input.focus();
      else all[Math.min(to, all.length - 1)].focus();
    } else if (event.key === "Escape") {
      event.stopPropagation();
      input.focus();
    }
  });
  more.addEventListener("click", () => run(true));
  return { run, clear };
}
