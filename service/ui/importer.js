// Importing an agent transcript from the page: a .jsonl file dropped anywhere on the page,
// or picked with "Import transcript…", goes through the importTranscript mutation; the
// imported session then opens. The request is bounded by the service's body limit: a file
// too big for it is refused here, saying the CLI can import it.

import { ApiError, gql } from "./api.js";
import { IMPORT_TRANSCRIPT } from "./queries.js";

// The service's default request body limit (CTXDAG_MAX_REQUEST_BYTES). A service set to a
// lower one answers HTTP 413, which is reported the same way.
export const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

const CLI = "ctxdag import-transcript FILE";

function megabytes(bytes) {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function tooBig(name, bytes, limit) {
  return `${name} is too big to import from the page (${megabytes(bytes)}; a request may hold ` +
    `${megabytes(limit)}). The CLI can import it: ${CLI}`;
}

/** Imports `file`; resolves to the session id, or throws an Error whose message says why. */
export async function importFile(file, limit = MAX_REQUEST_BYTES) {
  if (file.size > limit) throw new Error(tooBig(file.name, file.size, limit));
  const content = await file.text();
  const variables = { content, fileName: file.name };
  const bytes = new TextEncoder().encode(JSON.stringify({ query: IMPORT_TRANSCRIPT, variables })).length;
  if (bytes > limit) throw new Error(tooBig(file.name, bytes, limit));
  try {
    const data = await gql(IMPORT_TRANSCRIPT, variables);
    return data.importTranscript;
  } catch (error) {
    if (error instanceof ApiError && error.status === 413) throw new Error(tooBig(file.name, bytes, limit));
    if (error instanceof ApiError && error.code) throw new ApiError(`${error.code}: ${error.message}`, error.code);
    throw error;
  }
}

/**
 * Wires the picker (`button` opening `input`) and drops on `target`; `status` shows what
 * happens; `onImported(sessionId)` opens the session.
 */
export function wireImport({ target, button, input, status, onImported, onError }) {
  const say = (text, kind = "") => {
    status.textContent = text;
    status.className = `import-status ${kind}`.trim();
    status.hidden = !text;
  };
  const run = async (file) => {
    if (!file) return;
    say(`Importing ${file.name}…`, "busy");
    try {
      const imported = await importFile(file);
      const outcome = imported.outcome === "NEW" ? "imported" :
        imported.outcome === "EXTENDED" ? `extended by ${imported.written} nodes` : "unchanged";
      say(`${file.name}: ${outcome}`, "done");
      onImported(imported.session.id);
    } catch (error) {
      if (onError?.(error)) return say("");
      say(error.message, "error");
    }
  };
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    const [file] = input.files;
    input.value = "";
    run(file);
  });
  const carriesFiles = (event) => [...(event.dataTransfer?.types || [])].includes("Files");
  target.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    target.classList.add("dropping");
  });
  target.addEventListener("dragleave", (event) => {
    if (event.relatedTarget === null) target.classList.remove("dropping");
  });
  target.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    target.classList.remove("dropping");
    run(event.dataTransfer.files[0]);
  });
}
