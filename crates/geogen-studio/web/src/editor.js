// The editor: CodeMirror 6 with GeoGen Script highlighting, the compiler's diagnostics,
// completion and hover documentation of library names.
import { EditorState, Compartment, Transaction } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, hoverTooltip } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { StreamLanguage, syntaxHighlighting, HighlightStyle, bracketMatching, indentOnInput } from "@codemirror/language";
import { linter, lintGutter, forceLinting } from "@codemirror/lint";
import { autocompletion, closeBrackets } from "@codemirror/autocomplete";
import { tags as t } from "@lezer/highlight";

const KEYWORDS = new Set(["metadata", "enum", "function", "var", "global", "return", "yield", "as", "switch",
  "default", "case", "if", "else", "for", "while", "break", "continue", "is"]);
const ATOMS = new Set(["true", "false", "null", "Infinite", "Finite"]);

// A tokenizer for GeoGen Script (C-like): comments, strings, numbers, keywords, names.
const geogenScript = StreamLanguage.define({
  name: "geogen",
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo("*/")) { stream.next(); stream.next(); state.inComment = false; } else stream.skipToEnd();
      return "comment";
    }
    if (stream.eatSpace()) return null;
    if (stream.match("//")) { stream.skipToEnd(); return "comment"; }
    if (stream.match("/*")) { state.inComment = true; return "comment"; }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
    if (stream.match(/^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/)) return "number";
    if (stream.match(/^@/)) return "operator";
    const word = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/);
    if (word) {
      const w = word[0];
      if (KEYWORDS.has(w)) return "keyword";
      if (ATOMS.has(w)) return "atom";
      if (/^[A-Z]/.test(w)) return stream.peek() === "(" ? "function" : "typeName";
      return stream.peek() === "(" ? "function" : "variableName";
    }
    if (stream.match(/^[+\-*/%=<>!&|^?:]+/)) return "operator";
    stream.next();
    return "punctuation";
  },
  languageData: { commentTokens: { line: "//", block: { open: "/*", close: "*/" } } },
  tokenTable: { function: t.function(t.variableName) },
});

const highlight = HighlightStyle.define([
  { tag: t.keyword, color: "#ff7b72" },
  { tag: t.atom, color: "#79c0ff" },
  { tag: t.number, color: "#79c0ff" },
  { tag: t.string, color: "#a5d6ff" },
  { tag: t.comment, color: "#8b949e", fontStyle: "italic" },
  { tag: t.typeName, color: "#ffa657" },
  { tag: t.function(t.variableName), color: "#d2a8ff" },
  { tag: t.operator, color: "#ff7b72" },
]);

const theme = EditorView.theme({
  "&": { color: "#d7dae0", backgroundColor: "#1e2227", fontSize: "13px" },
  ".cm-content": { fontFamily: "ui-monospace, monospace", caretColor: "#fff" },
  ".cm-gutters": { backgroundColor: "#1a1d21", color: "#636d78", border: "none" },
  ".cm-activeLine": { backgroundColor: "#ffffff08" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "#3d5a80 !important" },
  ".cm-tooltip": { backgroundColor: "#2b3038", border: "1px solid #444", color: "#d7dae0" },
  ".cm-tooltip-autocomplete ul li[aria-selected]": { backgroundColor: "#3d5a80" },
}, { dark: true });

function escapeHtml(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// Re-runs the linter, e.g. when a render reported runtime errors for the current text.
export function relint(view) {
  forceLinting(view);
}

// `library`: [{label, kind, owner, detail, info}] from the server; `scriptInfo()`: the last
// compiled metadata (for `Parameters.` completion); `check(text)`: the server's diagnostics;
// `runtime()`: `{source, diagnostics}` of the last render that failed, shown while the text is
// the one that failed.
// Undo history per document: reconfiguring it away and back starts a fresh one.
const historySlot = new Compartment();

// Puts another document's text in the editor, with an undo history of its own (an undo never
// brings back the previous document's text).
export function replaceDocument(view, text) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, annotations: Transaction.addToHistory.of(false) });
  view.dispatch({ effects: historySlot.reconfigure([]) });
  view.dispatch({ effects: historySlot.reconfigure(history()) });
}

export function createEditor(parent, { doc, library, scriptInfo, check, runtime, onChange, onSave }) {
  const types = new Set(library.filter((e) => e.kind === "type").map((e) => e.label));
  const option = (e) => ({ label: e.label, type: e.kind === "type" ? "class" : e.kind, detail: e.detail || undefined, info: e.info || undefined });
  const globals = library.filter((e) => e.owner === null).map(option);
  const methods = dedupe(library.filter((e) => e.owner === ".").map(option));

  function complete(context) {
    const dotted = context.matchBefore(/([A-Za-z_][A-Za-z0-9_]*)?\.[A-Za-z_0-9]*$/);
    if (dotted) {
      const dot = dotted.text.lastIndexOf(".");
      const owner = dotted.text.slice(0, dot);
      const from = dotted.from + dot + 1;
      if (owner === "Parameters") {
        const info = scriptInfo();
        const names = (info ? info.parameters.map((p) => ({ label: p.name, type: "property", detail: p.type })) : [])
          .concat(["RenderOriginX", "RenderOriginY", "RenderWidth", "RenderHeight", "RenderScale", "MapWidth", "MapHeight", "Seed"]
            .map((label) => ({ label, type: "property" })));
        return { from, options: names };
      }
      if (types.has(owner)) {
        return { from, options: library.filter((e) => e.owner === owner).map(option) };
      }
      return { from, options: methods };
    }
    const word = context.matchBefore(/[A-Za-z_][A-Za-z0-9_]*$/);
    if (!word && !context.explicit) return null;
    return { from: word ? word.from : context.pos, options: globals };
  }

  const hover = hoverTooltip((view, pos) => {
    const line = view.state.doc.lineAt(pos);
    const text = line.text;
    let start = pos - line.from, end = start;
    while (start > 0 && /\w/.test(text[start - 1])) start--;
    while (end < text.length && /\w/.test(text[end])) end++;
    if (start === end) return null;
    const word = text.slice(start, end);
    const before = text.slice(0, start);
    const owner = (before.match(/([A-Za-z_]\w*)\.$/) || [])[1];
    let entries = library.filter((e) => e.label === word && e.kind !== "keyword");
    if (owner && types.has(owner)) entries = entries.filter((e) => e.owner === owner);
    else if (before.endsWith(".")) entries = entries.filter((e) => e.owner === ".");
    else entries = entries.filter((e) => e.owner === null);
    entries = entries.filter((e) => e.detail || e.info);
    if (entries.length === 0) return null;
    return {
      pos: line.from + start, end: line.from + end, above: true,
      create() {
        const dom = document.createElement("div");
        dom.className = "cm-tooltip-hover";
        dom.innerHTML = dedupeBy(entries, (e) => e.detail).slice(0, 4)
          .map((e) => `<div><code>${escapeHtml(e.detail || e.label)}</code>${e.info ? `<div>${escapeHtml(e.info)}</div>` : ""}</div>`).join("");
        return { dom };
      },
    };
  });

  const lint = linter(async (view) => {
    const text = view.state.doc.toString();
    const result = await check(text);
    if (!result) return [];
    const length = view.state.doc.length;
    const failed = runtime && runtime();
    // A runtime error (a render that failed) is shown until the text changes.
    const extra = result.ok && failed && failed.source === text ? failed.diagnostics : [];
    return result.diagnostics.concat(extra).map((d) => {
      let from = d.from == null ? 0 : Math.min(d.from, length);
      let to = d.to == null ? from : Math.min(d.to, length);
      if (to <= from) to = Math.min(from + 1, length);
      if (to <= from && from > 0) from = to - 1;
      return { from, to, severity: "error", source: d.code, message: d.message + (d.hint ? `\nhint: ${d.hint}` : "") };
    });
  }, { delay: 250 });

  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(), historySlot.of(history()), drawSelection(), highlightActiveLine(), bracketMatching(), closeBrackets(), indentOnInput(),
        geogenScript, syntaxHighlighting(highlight), theme,
        EditorView.lineWrapping, lint, lintGutter(), autocompletion({ override: [complete] }), hover,
        keymap.of([{ key: "Mod-s", preventDefault: true, run: () => { onSave(); return true; } }, indentWithTab, ...defaultKeymap, ...historyKeymap]),
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u.state.doc.toString()); }),
      ],
    }),
  });
  return view;
}

function dedupe(options) {
  return dedupeBy(options, (o) => o.label);
}

function dedupeBy(items, key) {
  const seen = new Set();
  return items.filter((o) => (seen.has(key(o)) ? false : (seen.add(key(o)), true)));
}
