// The session graph laid out as a tree, top-down, in one pass over the rows.
//
// Folding is the server's (the capsule contract): a row is drawn when `foldedInto` is null,
// and the edge into it starts at `drawnFromId`. This module never re-derives either; it
// only places what the server says is drawn:
//
// - depth is the distance from ROOT along drawnFromId; a row sits one gap below the row it
//   is drawn from, so every edge spans exactly one gap (down, across, down);
// - each row's heaviest child (most drawn descendants; the earliest by seq among equals)
//   continues its column, so a conversation's main line is straight; the other children
//   branch to the right, in seq order. A branch that forks no further (a retry, a relic, a
//   short task) moves into the nearest column to the right where it and its edge are clear
//   (looking at most PACK columns away); any other branch opens a new column. Edges run
//   across in the gaps between rows, so they never cross a card;
// - an expanded capsule is taller: it lists the rows folding into it (its coversIds, in
//   that order, those whose foldedInto names it) under its header.
//
// Cost: a constant amount of work per row, plus a scan of a few columns per branch.

export const M = {
  margin: 28, // around the drawing
  colW: 244, // column pitch
  cardW: 216,
  cardH: 46,
  gap: 26, // between a row and the rows drawn from it
  headerH: 50, // a capsule's header
  innerH: 30, // a folded row inside an expanded capsule
  innerGap: 4,
  pad: 10,
  indent: 14, // folded rows on a caller's subtree
};

function kindOf(row) {
  if (row.coversIds) return "capsule";
  if (row.role === "SUMMARY") return "relic";
  return "node";
}

/**
 * @param rows GraphNode rows (Session.graph.nodes)
 * @param expanded Set of capsule ids shown open
 * @returns {{items, edges, callerEdges, width, height, at: Map, members: Map}}
 *   items: drawn rows {row, kind, x, y, w, h, col, depth, expanded}, in preorder;
 *   members: capsule id -> folded rows placed inside it (only for expanded capsules);
 *   at: id -> placed item for every visible row (drawn or inside an expanded capsule).
 */
export function layout(rows, expanded = new Set()) {
  const byId = new Map();
  let sorted = true;
  for (let i = 0; i < rows.length; i++) {
    byId.set(rows[i].id, rows[i]);
    if (i && rows[i].seq < rows[i - 1].seq) sorted = false;
  }
  const ordered = sorted ? rows : rows.slice().sort((a, b) => a.seq - b.seq);

  // The drawn tree (children in seq order), and what each capsule folds.
  const children = new Map();
  const roots = [];
  const folded = new Map(); // capsule id -> count of rows folding into it
  for (const row of ordered) {
    if (row.foldedInto) {
      folded.set(row.foldedInto, (folded.get(row.foldedInto) || 0) + 1);
      continue;
    }
    children.set(row.id, []);
  }
  for (const row of ordered) {
    if (row.foldedInto) continue;
    const parent = row.drawnFromId && children.get(row.drawnFromId);
    if (parent) parent.push(row);
    else roots.push(row);
  }

  // Heights (an open capsule lists its rows), then, bottom-up over a preorder: subtree
  // sizes, and for a subtree that is one chain (no fork below its top) its height.
  const height = new Map();
  const inside = new Map();
  for (const row of ordered) {
    if (row.foldedInto) continue;
    if (!row.coversIds) {
      height.set(row.id, M.cardH);
      continue;
    }
    if (!expanded.has(row.id)) {
      height.set(row.id, M.headerH);
      continue;
    }
    const list = [];
    for (const id of row.coversIds) {
      const member = byId.get(id);
      if (member && member.foldedInto === row.id) list.push(member);
    }
    inside.set(row.id, list);
    height.set(row.id, M.headerH + 2 * M.pad + list.length * (M.innerH + M.innerGap) - (list.length ? M.innerGap : 0));
  }
  const pre = [];
  const stack = roots.slice().reverse();
  while (stack.length) {
    const row = stack.pop();
    pre.push(row);
    const kids = children.get(row.id);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  const size = new Map();
  const chain = new Map(); // id -> the chain's height from this row down, when it is one
  for (let i = pre.length - 1; i >= 0; i--) {
    const row = pre[i];
    const kids = children.get(row.id);
    let total = 1;
    for (const kid of kids) total += size.get(kid.id);
    size.set(row.id, total);
    if (!kids.length) chain.set(row.id, height.get(row.id));
    else if (kids.length === 1 && chain.has(kids[0].id)) chain.set(row.id, height.get(row.id) + M.gap + chain.get(kids[0].id));
  }

  // What each column holds: [top, bottom] spans of its cards (with the edge into each) and
  // of the horizontal edge runs crossing it. A branch that is one chain may move into an
  // existing column to the right (at most PACK columns away) where its span and its edge
  // are clear; any other branch opens a new column.
  const PACK = 8;
  const spans = [];
  const occupy = (col, top, bottom) => {
    const list = spans[col] || (spans[col] = []);
    const last = list[list.length - 1];
    if (last && top >= last[0] && top <= last[1] + 0.5) last[1] = Math.max(last[1], bottom);
    else list.push([top, bottom]);
  };
  const clear = (col, top, bottom) => {
    for (const [a, b] of spans[col] || []) if (a < bottom && b > top) return false;
    return true;
  };

  const items = [];
  const at = new Map();
  const members = new Map();
  const edges = [];
  let maxCol = -1;
  let bottom = 0;
  const work = [];
  for (let i = roots.length - 1; i >= 0; i--) work.push([roots[i], null, M.margin, 0, null]);
  while (work.length) {
    const [row, inherited, y, depth, parent] = work.pop();
    let col = inherited;
    if (col === null) {
      const run = y - M.gap / 2;
      if (parent && chain.has(row.id)) {
        // Clear down to a gap below its last card too: an edge turning down into that
        // column just below would look as if it left the chain.
        const span = [y - M.gap, y + chain.get(row.id) + M.gap];
        for (let k = parent.col + 1; k <= Math.min(maxCol, parent.col + PACK); k++) {
          if (clear(k, span[0], span[1])) {
            col = k;
            break;
          }
          if (!clear(k, run - 1, run + 1)) break; // the edge could not pass this column
        }
      }
      if (col === null) col = ++maxCol;
      if (parent) for (let j = parent.col + 1; j < col; j++) occupy(j, run - 1, run + 1);
    }
    const kind = kindOf(row);
    const open = kind === "capsule" && expanded.has(row.id);
    const item = { row, kind, col, depth, x: M.margin + col * M.colW, y, w: M.cardW, h: height.get(row.id), expanded: open, folds: folded.get(row.id) || 0 };
    if (open) {
      let innerY = y + M.headerH + M.pad;
      const placed = [];
      for (const member of inside.get(row.id)) {
        const indent = member.callerId || member.sideBranch ? M.indent : 0;
        const entry = { row: member, kind: "node", inner: true, capsule: row.id, x: item.x + M.pad + indent, y: innerY, w: M.cardW - 2 * M.pad - indent, h: M.innerH };
        at.set(member.id, entry);
        placed.push(entry);
        innerY += M.innerH + M.innerGap;
      }
      members.set(row.id, placed);
    }
    items.push(item);
    at.set(row.id, item);
    occupy(col, parent ? y - M.gap : y, y + item.h);
    if (parent) edges.push({ from: parent, to: item });
    bottom = Math.max(bottom, y + item.h);

    const kids = children.get(row.id);
    if (kids.length) {
      let heavy = 0;
      for (let i = 1; i < kids.length; i++) if (size.get(kids[i].id) > size.get(kids[heavy].id)) heavy = i;
      const next = y + item.h + M.gap;
      for (let i = kids.length - 1; i >= 0; i--) if (i !== heavy) work.push([kids[i], null, next, depth + 1, item]);
      work.push([kids[heavy], col, next, depth + 1, item]);
    }
  }

  // A caller's edge, where it is not the edge the row is drawn along, and only into the
  // first row of what the caller started (a spawned task's later turns share its caller).
  const callerEdges = [];
  for (const [id, placed] of at) {
    const caller = placed.row.callerId;
    if (!caller || placed.inner || caller === placed.row.drawnFromId) continue;
    const from = at.get(caller);
    const predecessor = byId.get(placed.row.predecessorId);
    if (!from || (predecessor && predecessor.callerId === caller)) continue;
    callerEdges.push({ from, to: placed, id });
  }

  return {
    items,
    edges,
    callerEdges,
    members,
    at,
    width: M.margin * 2 + (maxCol + 1) * M.colW - (M.colW - M.cardW),
    height: bottom + M.margin,
  };
}

/** Where a node is seen: itself when visible, else the capsule it folds into. */
export function shownAs(at, rowsById, id) {
  if (at.has(id)) return id;
  const row = rowsById.get(id);
  if (row && row.foldedInto && at.has(row.foldedInto)) return row.foldedInto;
  return null;
}
