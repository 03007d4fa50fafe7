// The SVG drawing: one markup string built in a single pass over the layout and set once,
// then event delegation on the SVG (no listener per node) and class toggles for state.

import { M, shownAs } from "./layout.js";
import { esc, fits, printable, trim, tokens, shortId } from "./util.js";

const ROLE_LABEL = { SYSTEM: "System", USER: "User", ASSISTANT: "Assistant", TOOL: "Tool", SUMMARY: "Summary",
  CARRY: "Branch summary" };

function edgePath(from, to) {
  const x1 = from.x + from.w / 2;
  const y1 = from.y + from.h;
  const x2 = to.x + to.w / 2;
  const y2 = to.y;
  if (Math.abs(x1 - x2) < 1) return `M${x1},${y1}V${y2}`;
  const mid = y1 + (y2 - y1) / 2;
  const r = Math.min(8, (y2 - y1) / 2, Math.abs(x2 - x1) / 2);
  const dir = x2 > x1 ? 1 : -1;
  return `M${x1},${y1}V${mid - r}Q${x1},${mid} ${x1 + dir * r},${mid}H${x2 - dir * r}Q${x2},${mid} ${x2},${mid + r}V${y2}`;
}

function callerPath(from, to) {
  const fy = from.y + Math.min(from.h, M.cardH) / 2;
  const ty = to.y + to.h / 2;
  if (to.x > from.x + 1) { // to the right: right side to left side
    const x1 = from.x + from.w;
    const x2 = to.x;
    const mid = (x1 + x2) / 2;
    return `M${x1},${fy}C${mid},${fy} ${mid},${ty} ${x2},${ty}`;
  }
  if (to.x < from.x - 1) { // to the left: left side to right side
    const x1 = from.x;
    const x2 = to.x + to.w;
    const mid = (x1 + x2) / 2;
    return `M${x1},${fy}C${mid},${fy} ${mid},${ty} ${x2},${ty}`;
  }
  const x = from.x + from.w; // one column: a loop in the gutter on its right
  const bulge = x + Math.min(22, (M.colW - M.cardW) * 0.7);
  return `M${x},${fy}C${bulge},${fy} ${bulge},${ty} ${x},${ty}`;
}

/** How many tool calls each drawn row answers: a tool message right after a reply that
 * calls tools answers every one of them (the ledger's tool-pair rule), so ids suffice. */
function answeredCount(row, rowsById) {
  const pred = row.predecessorId && rowsById.get(row.predecessorId);
  return row.role === "TOOL" && pred?.toolUseIds?.length ? pred.toolUseIds.length : 0;
}

function answeredCounts(rowsById) {
  const answered = new Map();
  for (const row of rowsById.values()) {
    const count = answeredCount(row, rowsById);
    if (count) answered.set(row.id, count);
  }
  return answered;
}

/** What a row's tool calls say: "2 tool calls", "2 results". */
function toolLine(row, answered) {
  const calls = row.toolUseIds?.length || 0;
  const results = answered.get(row.id) || 0;
  const bits = [];
  if (calls) bits.push(calls === 1 ? "tool call" : `${calls} tool calls`);
  if (results) bits.push(results === 1 ? "result" : `${results} results`);
  return bits;
}

function roleLine(row, tip, answered) {
  const parts = [ROLE_LABEL[row.role] || row.role, ...toolLine(row, answered)];
  if (row.forkOf) parts.push(row.role === "USER" ? "edit" : "retry");
  if (row.sideBranch) parts.push("task");
  else if (row.callerId) parts.push("call");
  if (tip && !row.isHead) parts.push("tip");
  if (row.pinned) parts.push("pinned");
  if (row.outOfContext) parts.push("not sent");
  return parts.join(" · ");
}

// Widths of the card's top line, estimated (no layout is read): the role line is 10.5px
// bold uppercase with letter spacing, the meta 10.5px digits.
const ROLE_CHAR_PX = 8.2;
const META_CHAR_PX = 6.2;

/** The role line and meta of a card's top line, the role line cut to end before the meta. */
function topLine(row, w, x, roleText) {
  const meta = `#${row.seq} · ${tokens(row.tokens)} tok`;
  const room = w - x - 10 - meta.length * META_CHAR_PX - 8;
  const role = trim(roleText, Math.max(4, Math.floor(room / ROLE_CHAR_PX)));
  const title = role === roleText ? "" : `<title>${esc(roleText)}</title>`;
  return `<text class="t-role" x="${x}" y="18">${title}${esc(role)}</text>`
    + `<text class="t-meta" x="${w - 10}" y="18" text-anchor="end">${esc(meta)}</text>`;
}

/** How a capsule's coverage is counted: the turns its summary covers (Summary.coversIds)
 * and the rows of tasks spawned from them that fold in with them (side-branch rows). */
function coverage(row, rowsById) {
  const spawned = row.coversIds.filter((id) => rowsById.get(id)?.sideBranch).length;
  return { turns: row.coversIds.length - spawned, spawned };
}

function nodeClasses(row, kind, { tips, answered }) {
  let c = `n k-${kind} r-${row.role.toLowerCase()}`;
  if (row.label || row.branchName) c += " labeled";
  if (row.toolUseIds?.length) c += " calls-tools";
  if (answered.has(row.id)) c += " answers-tools";
  if (row.isHead) c += " head";
  if (tips.has(row.id)) c += " tip";
  if (row.sideBranch) c += " side";
  if (row.forkOf) c += " fork";
  if (row.callerId) c += " called";
  if (row.deleted) c += " deleted";
  if (row.pinned) c += " pinned";
  if (row.outOfContext) c += " unsent";
  return c;
}

/** A row's label (top left) and, on a named branch's tip, the branch's name (bottom left). */
function tagsMarkup(row, w, h) {
  let s = "";
  if (row.label) {
    const text = trim(row.label, fits(w * 0.6));
    s += `<g class="tag t-label" transform="translate(12,-9)"><title>label: ${esc(row.label)}</title><rect width="${Math.ceil(text.length * 6) + 16}" height="18" rx="9"/><text x="8" y="12.5">${esc(text)}</text></g>`;
  }
  if (row.branchName) {
    const text = trim(`⎇ ${row.branchName}`, fits(w * 0.7));
    s += `<g class="tag t-branch" transform="translate(12,${h - 9})"><title>branch: ${esc(row.branchName)}</title><rect width="${Math.ceil(text.length * 6) + 16}" height="18" rx="9"/><text x="8" y="12.5">${esc(text)}</text></g>`;
  }
  return s;
}

function cardMarkup(item, ctx) {
  const { row, w, h } = item;
  const tip = ctx.tips.has(row.id);
  let s = `<g class="${nodeClasses(row, "node", ctx)}" data-id="${esc(row.id)}" data-kind="node" transform="translate(${item.x},${item.y})">`;
  s += `<rect class="hit card" width="${w}" height="${h}" rx="9"/>`;
  s += `<rect class="stripe" x="6" y="9" width="3" height="${h - 18}" rx="1.5"/>`;
  s += topLine(row, w, 17, roleLine(row, tip, ctx.answered));
  s += `<text class="t-prev" x="17" y="36" clip-path="url(#clip-card)">${esc(trim(printable(row.preview), fits(w - 27)))}</text>`;
  if (row.isHead) s += `<g class="badge b-head" transform="translate(${w - 50},-9)"><rect width="44" height="18" rx="9"/><text x="22" y="12.5">HEAD</text></g>`;
  s += tagsMarkup(row, w, h);
  return `${s}</g>`;
}

function relicMarkup(item, ctx) {
  const { row, w, h } = item;
  const label = row.retired ? "retired" : "relic";
  let s = `<g class="${nodeClasses(row, "relic", ctx)}${row.retired ? " retired" : ""}" data-id="${esc(row.id)}" data-kind="relic" transform="translate(${item.x},${item.y})">`;
  s += `<rect class="hit card" width="${w}" height="${h}" rx="9"/>`;
  s += topLine(row, w, 14, label === "retired" ? "Retired summary" : "Summary · relic");
  s += `<text class="t-prev" x="14" y="36" clip-path="url(#clip-card)">${esc(trim(printable(row.preview), fits(w - 24)))}</text>`;
  s += tagsMarkup(row, w, h);
  return `${s}</g>`;
}

function capsuleMarkup(item, ctx) {
  const { row, w } = item;
  const hh = M.headerH;
  const open = item.expanded;
  const folds = item.folds;
  const { turns, spawned } = coverage(row, ctx.rowsById);
  let s = `<g class="${nodeClasses(row, "capsule", ctx)}${open ? " expanded" : ""}" data-id="${esc(row.id)}" data-kind="capsule" data-folds="${folds}" data-covers="${turns}" data-spawned="${spawned}" transform="translate(${item.x},${item.y})">`;
  if (open) s += `<rect class="capsule-box" width="${w}" height="${item.h}" rx="16"/>`;
  else s += `<rect class="sheet s2" x="10" y="9" width="${w - 20}" height="${hh}" rx="${hh / 2}"/><rect class="sheet s1" x="5" y="4.5" width="${w - 10}" height="${hh}" rx="${hh / 2}"/>`;
  s += `<rect class="hit card" width="${w}" height="${hh}" rx="${hh / 2}"/>`;
  s += `<circle class="sigma" cx="${hh / 2}" cy="${hh / 2}" r="15"/><text class="sigma-t" x="${hh / 2}" y="${hh / 2 + 5}">Σ</text>`;
  s += `<text class="t-role" x="${hh}" y="${hh / 2 - 4}">Summary</text>`;
  s += `<text class="t-meta" x="${w - 40}" y="${hh / 2 - 4}" text-anchor="end">${esc(tokens(row.tokens))} tok</text>`;
  let count = `covers ${turns} ${turns === 1 ? "turn" : "turns"}`;
  if (spawned) count += ` + ${spawned} spawned`;
  if (folds !== row.coversIds.length) count += ` · ${folds} here`;
  s += `<text class="t-count" x="${hh}" y="${hh / 2 + 13}">${count}</text>`;
  s += `<g class="chev" transform="translate(${w - 22},${hh / 2})"><circle r="10"/><path d="${open ? "M-4,-2 L0,2 L4,-2" : "M-2,-4 L2,0 L-2,4"}"/></g>`;
  if (row.isHead) s += `<g class="badge b-head" transform="translate(${w - 50},-9)"><rect width="44" height="18" rx="9"/><text x="22" y="12.5">HEAD</text></g>`;
  s += tagsMarkup(row, w, hh);
  return `${s}</g>`;
}

function innerMarkup(placed, capsuleId, ctx) {
  const { row, w, h } = placed;
  let s = `<g class="${nodeClasses(row, "node", ctx)} inner" data-id="${esc(row.id)}" data-kind="node" data-folded-in="${esc(capsuleId)}" transform="translate(${placed.x},${placed.y})">`;
  s += `<rect class="hit card" width="${w}" height="${h}" rx="7"/>`;
  s += `<circle class="dot" cx="11" cy="${h / 2}" r="4"/>`;
  // A pinned row folds into its capsule like any covered row, and is rendered all the same:
  // right after the summary, wherever the capsule applies.
  const meta = row.pinned ? `pinned · rendered · #${row.seq}` : `#${row.seq}`;
  s += `<text class="t-meta" x="${w - 8}" y="${h / 2 + 4}" text-anchor="end">${meta}</text>`;
  s += `<text class="t-inner" x="21" y="${h / 2 + 4}" clip-path="url(#clip-inner-${w})">${esc(trim(printable(row.preview), fits(w - 56, 6.4)))}</text>`;
  return `${s}</g>`;
}

/** The whole drawing as one SVG markup string. */
export function drawingMarkup(model) {
  const { layout, tips } = model;
  const ctx = { tips, answered: answeredCounts(model.rowsById), rowsById: model.rowsById };
  const out = [];
  // Text clips, one per card width, in each card's own coordinates: a preview longer than
  // its estimate is cut at the card's edge rather than spilling over.
  const inner = [M.cardW - 2 * M.pad, M.cardW - 2 * M.pad - M.indent];
  out.push(`<defs><clipPath id="clip-card" clipPathUnits="userSpaceOnUse"><rect width="${M.cardW - 9}" height="${M.cardH}"/></clipPath>`);
  for (const w of inner) out.push(`<clipPath id="clip-inner-${w}" clipPathUnits="userSpaceOnUse"><rect width="${w - 34}" height="${M.innerH}"/></clipPath>`);
  out.push('</defs><g class="edges">');
  for (const { from, to } of layout.edges) {
    let c = "e";
    const row = to.row;
    if (from.kind === "capsule") c += " e-capsule";
    if (row.sideBranch) c += " e-side";
    else if (row.callerId && row.callerId === row.drawnFromId) c += " e-call";
    if (row.forkOf) c += " e-fork";
    if (ctx.answered.has(row.id) && from.row?.id === row.predecessorId) c += " e-pair";
    out.push(`<path class="${c}" d="${edgePath(from, to)}"/>`);
  }
  for (const { from, to } of layout.callerEdges) out.push(`<path class="e e-caller" d="${callerPath(from, to)}"/>`);
  out.push("</g><g class=\"nodes\">");
  for (const item of layout.items) {
    if (item.kind === "capsule") {
      out.push(capsuleMarkup(item, ctx));
      const inside = layout.members.get(item.row.id);
      if (inside) for (const placed of inside) out.push(innerMarkup(placed, item.row.id, ctx));
    } else if (item.kind === "relic") out.push(relicMarkup(item, ctx));
    else out.push(cardMarkup(item, ctx));
  }
  out.push("</g>");
  return out.join("");
}

export class GraphView {
  /**
   * @param scroller the scrolling element around the SVG
   * @param svg the <svg> element
   * @param tooltip an absolutely positioned element for hover previews
   * @param handlers {onNode(id, kind), onBackground()}
   */
  constructor(scroller, svg, tooltip, handlers) {
    this.scroller = scroller;
    this.svg = svg;
    this.tooltip = tooltip;
    this.handlers = handlers;
    this.model = null;
    this.elements = new Map();
    this.highlightedIds = [];
    this.lit = [];
    this.selectedId = null;
    this.hovered = null;
    this.zoom = 1;
    this.listen();
  }

  /** Scales the drawing (the SVG's size; its viewBox stays the layout's), keeping the point
   * at (clientX, clientY), or the centre of the view, where it is. */
  setZoom(zoom, clientX = null, clientY = null) {
    const next = Math.min(1.6, Math.max(0.3, Math.round(zoom * 100) / 100));
    if (next === this.zoom || !this.model) {
      this.zoom = next;
      return this.zoom;
    }
    const box = this.scroller.getBoundingClientRect();
    const ox = (clientX ?? box.left + box.width / 2) - box.left;
    const oy = (clientY ?? box.top + box.height / 2) - box.top;
    const px = (this.scroller.scrollLeft + ox) / this.zoom;
    const py = (this.scroller.scrollTop + oy) / this.zoom;
    this.zoom = next;
    this.applyZoom();
    this.scroller.scrollLeft = px * next - ox;
    this.scroller.scrollTop = py * next - oy;
    return this.zoom;
  }

  applyZoom() {
    if (!this.model) return;
    const { width, height } = this.model.layout;
    this.svg.setAttribute("width", Math.ceil(width * this.zoom));
    this.svg.setAttribute("height", Math.ceil(height * this.zoom));
  }

  draw(model) {
    this.model = model;
    const { layout } = model;
    const started = performance.now();
    this.svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
    this.applyZoom();
    this.svg.innerHTML = drawingMarkup(model);
    this.elements = new Map();
    for (const el of this.svg.querySelectorAll("[data-id]")) this.elements.set(el.dataset.id, el);
    this.lit = [];
    this.applyHighlight();
    this.applySelection();
    this.hideTooltip();
    this.lastDrawMs = performance.now() - started;
    this.svg.dataset.drawn = String(layout.items.length);
    return this.lastDrawMs;
  }

  /** The element standing for a node: itself, or the collapsed capsule it folds into. */
  shownAs(id) {
    if (!this.model) return null;
    return shownAs(this.model.layout.at, this.model.rowsById, id);
  }

  highlight(ids) {
    this.highlightedIds = ids || [];
    this.applyHighlight();
  }

  applyHighlight() {
    for (const el of this.lit) el.classList.remove("highlighted");
    this.lit = [];
    const seen = new Set();
    for (const id of this.highlightedIds) {
      const shown = this.shownAs(id);
      if (!shown || seen.has(shown)) continue;
      seen.add(shown);
      const el = this.elements.get(shown);
      if (el) {
        el.classList.add("highlighted");
        this.lit.push(el);
      }
    }
    this.svg.classList.toggle("dimmed", this.lit.length > 0);
  }

  select(id) {
    this.selectedId = id;
    this.applySelection();
  }

  applySelection() {
    this.svg.querySelector(".selected")?.classList.remove("selected");
    const el = this.selectedId && this.elements.get(this.shownAs(this.selectedId));
    if (el) el.classList.add("selected");
  }

  /** Scrolls a node (or its capsule) into view, centred, and flashes it. */
  reveal(id, flash = true) {
    const shown = this.shownAs(id);
    const placed = shown && this.model.layout.at.get(shown);
    if (!placed) return;
    const left = (placed.x + placed.w / 2) * this.zoom - this.scroller.clientWidth / 2;
    const top = (placed.y + Math.min(placed.h, 160) / 2) * this.zoom - this.scroller.clientHeight / 2;
    this.scroller.scrollTo({ left: Math.max(0, left), top: Math.max(0, top), behavior: "smooth" });
    if (flash) {
      const el = this.elements.get(shown);
      el?.classList.remove("flash");
      requestAnimationFrame(() => el?.classList.add("flash"));
      setTimeout(() => el?.classList.remove("flash"), 1300);
    }
  }

  listen() {
    const target = (event) => event.target.closest?.("[data-id]");
    this.svg.addEventListener("click", (event) => {
      if (this.dragged) return;
      const el = target(event);
      if (el) this.handlers.onNode?.(el.dataset.id, el.dataset.kind);
      else this.handlers.onBackground?.();
    });
    this.svg.addEventListener("mouseover", (event) => {
      const el = target(event);
      if (el === this.hovered) return;
      this.hovered = el;
      if (el) this.showTooltip(el, event);
      else this.hideTooltip();
    });
    this.svg.addEventListener("mousemove", (event) => {
      if (this.hovered) this.moveTooltip(event);
    });
    this.svg.addEventListener("mouseleave", () => {
      this.hovered = null;
      this.hideTooltip();
    });
    // Zooming: ctrl (or ⌘) + wheel, around the pointer.
    this.scroller.addEventListener("wheel", (event) => {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      const zoom = this.setZoom(this.zoom * Math.exp(-event.deltaY * 0.0015), event.clientX, event.clientY);
      this.handlers.onZoom?.(zoom);
    }, { passive: false });
    // Panning: drag the background.
    let drag = null;
    this.scroller.addEventListener("pointerdown", (event) => {
      if (event.button !== 0 || target(event)) return;
      drag = { x: event.clientX, y: event.clientY, left: this.scroller.scrollLeft, top: this.scroller.scrollTop, moved: false };
      this.dragged = false;
    });
    window.addEventListener("pointermove", (event) => {
      if (!drag) return;
      const dx = event.clientX - drag.x;
      const dy = event.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) {
        drag.moved = true;
        this.scroller.classList.add("panning");
      }
      this.scroller.scrollLeft = drag.left - dx;
      this.scroller.scrollTop = drag.top - dy;
    });
    window.addEventListener("pointerup", () => {
      if (!drag) return;
      this.dragged = drag.moved;
      this.scroller.classList.remove("panning");
      drag = null;
      setTimeout(() => (this.dragged = false), 0);
    });
  }

  showTooltip(el, event) {
    const row = this.model?.rowsById.get(el.dataset.id);
    if (!row) return;
    const kind = el.dataset.kind;
    const bits = [];
    if (row.isHead) bits.push('<span class="pill p-head">HEAD</span>');
    if (this.model.tips.has(row.id)) bits.push('<span class="pill">branch tip</span>');
    if (kind === "capsule") bits.push(`<span class="pill p-summary">capsule · covers ${el.dataset.covers} turns${el.dataset.spawned !== "0" ? ` + ${el.dataset.spawned} spawned rows` : ""} · ${el.dataset.folds} rows folded here</span>`);
    if (kind === "relic") bits.push(`<span class="pill p-relic">${row.retired ? "retired" : "relic"}</span>`);
    if (row.sideBranch) bits.push('<span class="pill">spawned task</span>');
    if (row.forkOf) bits.push(`<span class="pill">${row.role === "USER" ? "edit" : "retry"} of ${esc(shortId(row.forkOf))}</span>`);
    if (row.callerId) bits.push(`<span class="pill">called by ${esc(shortId(row.callerId))}</span>`);
    const answered = new Map([[row.id, answeredCount(row, this.model.rowsById)]]);
    for (const bit of toolLine(row, answered)) bits.push(`<span class="pill p-tool">${esc(bit)}</span>`);
    this.tooltip.innerHTML =
      `<div class="tt-head"><span class="role-chip r-${row.role.toLowerCase()}">${esc(ROLE_LABEL[row.role] || row.role)}</span>` +
      `<span class="tt-id">${esc(row.id)}</span></div>` +
      `<div class="tt-body">${esc(row.preview)}</div>` +
      `<div class="tt-foot">#${row.seq} · ${esc(tokens(row.tokens))} tokens ${bits.join(" ")}</div>`;
    this.tooltip.hidden = false;
    this.moveTooltip(event);
  }

  moveTooltip(event) {
    const x = event.clientX + 16;
    const y = event.clientY + 18;
    const maxX = window.innerWidth - 340;
    this.tooltip.style.transform = `translate(${Math.min(x, maxX)}px, ${Math.min(y, window.innerHeight - 140)}px)`;
  }

  hideTooltip() {
    this.tooltip.hidden = true;
  }
}
