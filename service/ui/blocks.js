// A message's content blocks, drawn: text as text, thinking collapsed, tool calls and their
// results as cards that name each other (data-tool-use on both), images as thumbnails and
// documents as chips. The render panel and the detail card both use it.

import { h, plural, printable, shortId, trim } from "./util.js";

const JSON_CHARS = 1200;
const RESULT_CHARS = 900;

/** Whether the blocks are one text block: the message is then drawn as plain text. */
export function isPlain(blocks) {
  return !blocks?.length || (blocks.length === 1 && blocks[0].__typename === "TextBlock");
}

/** toolUseId → tool name, over the tool calls of the given messages. */
export function toolNames(messages) {
  const names = new Map();
  for (const message of messages) {
    for (const block of message.blocks || []) {
      if (block.__typename === "ToolUseBlock") names.set(block.id, block.name);
    }
  }
  return names;
}

function bytes(n) {
  if (n == null) return null;
  if (n < 1024) return `${n} B`;
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function clip(text, max, full) {
  const value = printable(text);
  return full || value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

function image(source) {
  const facts = [source.mediaType, source.width && source.height ? `${source.width}×${source.height}` : null,
    bytes(source.bytes)].filter(Boolean).join(" · ");
  if (source.url) {
    // A URL is the provider's to fetch; the viewer does not load third-party addresses.
    return h("figure", { class: "blk image" },
      h("div", { class: "thumb url" }, "URL"), h("figcaption", {}, trim(source.url, 80)));
  }
  const img = source.data
    ? h("img", { class: "thumb", src: `data:${source.mediaType};base64,${source.data}`, alt: facts, loading: "lazy" })
    : h("div", { class: "thumb" }, "image");
  return h("figure", { class: "blk image", title: source.sha256 || "" }, img, h("figcaption", {}, facts));
}

function toolUse(block, { full, answered }) {
  return h("div", { class: "blk tool-use", "data-tool-use": block.id },
    h("div", { class: "blk-head" },
      h("span", { class: "blk-kind" }, "tool call"),
      h("code", { class: "blk-name" }, block.name),
      h("code", { class: "blk-id", title: block.id }, shortId(block.id)),
      answered === false ? h("span", { class: "pill p-open" }, "open") : null),
    h("pre", { class: "blk-json" }, clip(prettyJson(block.input), JSON_CHARS, full)));
}

function toolResult(block, { full, names }) {
  const name = names?.get(block.toolUseId);
  const parts = block.content.map((part) => (part.__typename === "ImageBlock"
    ? image(part.source)
    : h("div", { class: "blk-text" }, clip(part.text, RESULT_CHARS, full))));
  return h("div", { class: `blk tool-result${block.isError ? " is-error" : ""}`, "data-tool-use": block.toolUseId },
    h("div", { class: "blk-head" },
      h("span", { class: "blk-kind" }, block.isError ? "error" : "result"),
      name ? h("code", { class: "blk-name" }, name) : null,
      h("code", { class: "blk-id", title: block.toolUseId }, `↳ ${shortId(block.toolUseId)}`)),
    parts.length ? parts : h("div", { class: "blk-text muted" }, "(empty)"));
}

/**
 * The blocks as elements. `names` maps tool use ids to tool names (so a result says which
 * tool answered), `open` holds the tool uses nothing answers yet, `full` shows long
 * inputs and results whole.
 */
export function blocksView(blocks, { names = null, open = null, full = false } = {}) {
  return h("div", { class: "blocks" }, ...blocks.map((block) => {
    switch (block.__typename) {
      case "TextBlock":
        return h("div", { class: "blk-text" }, clip(block.text, RESULT_CHARS * 2, full));
      case "ThinkingBlock":
        return h("details", { class: "blk thinking" },
          h("summary", {}, `Thinking · ${plural(block.thinking.length, "character")}`),
          h("div", { class: "blk-text" }, block.thinking));
      case "RedactedThinkingBlock":
        return h("div", { class: "blk thinking redacted" },
          `Redacted thinking · ${bytes(block.data.length)}, sent back as stored`);
      case "ToolUseBlock":
        return toolUse(block, { full, answered: open ? !open.has(block.id) : null });
      case "ToolResultBlock":
        return toolResult(block, { full, names });
      case "ImageBlock":
        return image(block.source);
      case "DocumentBlock": {
        const s = block.source;
        const facts = [s.mediaType, s.pages ? plural(s.pages, "page") : null, bytes(s.bytes)].filter(Boolean);
        return h("div", { class: "blk document", title: s.sha256 || s.url || "" },
          h("span", { class: "blk-kind" }, "document"), block.title || (s.url ? trim(s.url, 60) : "untitled"),
          h("span", { class: "muted" }, facts.join(" · ")));
      }
      default:
        return h("div", { class: "blk-text muted" }, `(${block.__typename})`);
    }
  }));
}

/** Gives class `cls` to the cards of tool use `id` in `root` (the call and its result)
 * and takes it from every other card; `id` null clears it. Returns the cards marked. */
export function markPair(root, id, cls = "paired") {
  for (const el of root.querySelectorAll(`.${cls}`)) el.classList.remove(cls);
  if (!id) return [];
  const cards = [...root.querySelectorAll(`[data-tool-use="${CSS.escape(id)}"]`)];
  for (const el of cards) el.classList.add(cls);
  return cards;
}
