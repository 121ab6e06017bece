// The Debugger pane: runs the script on the server one instruction, one line, over or out of a
// call, to the cursor's line or to the next breakpoint (click the editor's left gutter), showing
// the current line in the editor, the call stack, the variables in scope, the `Print` messages and
// the rendering sequence recorded so far; once the script has finished, steps the renderer one
// step at a time and shows the map each step wrote (docs/studio.md, "Debugger").
import { StateField, StateEffect, RangeSet } from "@codemirror/state";
import { EditorView, Decoration, gutter, GutterMarker } from "@codemirror/view";

// ---- editor extensions: the current line and the breakpoint gutter ---------------------------
const setCurrent = StateEffect.define();
const currentLine = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setCurrent)) continue;
      if (e.value == null) deco = Decoration.none;
      else {
        const line = tr.state.doc.lineAt(Math.min(e.value.pos, tr.state.doc.length));
        deco = Decoration.set([Decoration.line({ class: e.value.fault ? "cm-debug-fault" : "cm-debug-current" }).range(line.from)]);
      }
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

const toggleBreakpoint = StateEffect.define();
class BreakpointMarker extends GutterMarker {
  toDOM() { const span = document.createElement("span"); span.className = "cm-breakpoint"; span.textContent = "●"; return span; }
}
const breakpointMarker = new BreakpointMarker();
const breakpoints = StateField.define({
  create: () => RangeSet.empty,
  update(set, tr) {
    set = set.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(toggleBreakpoint)) continue;
      let has = false;
      set.between(e.value, e.value, () => { has = true; });
      set = has ? set.update({ filter: (from) => from !== e.value }) : set.update({ add: [breakpointMarker.range(e.value)] });
    }
    return set;
  },
});
const breakpointGutter = gutter({
  class: "cm-breakpoint-gutter",
  markers: (view) => view.state.field(breakpoints),
  initialSpacer: () => breakpointMarker,
  domEventHandlers: {
    mousedown(view, line) { view.dispatch({ effects: toggleBreakpoint.of(line.from) }); return true; },
  },
});

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

export class Debugger {
  // `token`: the page's; `editor()`: the CodeMirror view; `request()`: the render settings of the
  // preview (source, seed, parameters, size); `source()`: the editor's text; `logDiagnostics`:
  // the console; `kind()`: the picture the page's "show" selector asks for (colored, hillshade
  // or gray), which the step's map is drawn as too; `palette()`: the colored picture's palette.
  constructor(root, { token, editor, request, source, logDiagnostics, kind = () => "hillshade", palette = () => null }) {
    Object.assign(this, { root, token, editor, request, source, logDiagnostics, kind, palette });
    this.id = null;
    this.state = null;
    this.startedSource = null;
    this.busy = false;
    this.stepImages = 0;
    this.build();
    const view = editor();
    view.dispatch({ effects: StateEffect.appendConfig.of([currentLine, breakpoints, breakpointGutter]) });
  }

  build() {
    const bar = el("div", "dbg-toolbar");
    const buttons = [
      ["start", "Start", "Start the script from its first instruction, with the preview's settings", () => this.start()],
      ["instruction", "Step", "Run one instruction", () => this.step({ kind: "instruction" })],
      ["line", "Step line", "Run to the next line (entering calls) · F11", () => this.step({ kind: "line" })],
      ["over", "Step over", "Run to the next line of this function (over calls) · F10", () => this.step({ kind: "over" })],
      ["out", "Step out", "Run until this function returns · Shift-F11", () => this.step({ kind: "out" })],
      ["cursor", "Run to cursor", "Run to the line the editor's cursor is on", () => this.runToCursor()],
      ["continue", "Continue", "Run to the next breakpoint (click the gutter left of the line numbers) or the end · F8", () => this.continue()],
      ["render", "Step renderer", "Once the script has finished: run the next rendering step and show its map", () => this.renderStep()],
      ["stop", "Stop", "End the session", () => this.stop()],
    ];
    this.buttons = {};
    for (const [key, label, title, action] of buttons) {
      const b = el("button", null, label);
      b.title = title;
      b.dataset.debug = key;
      b.addEventListener("click", () => { if (!this.busy) action(); });
      bar.appendChild(b);
      this.buttons[key] = b;
    }
    this.statusLine = el("span", "dbg-status", "not started");
    bar.appendChild(this.statusLine);
    const body = el("div", "dbg-body");
    const left = el("div", "dbg-col");
    const right = el("div", "dbg-col");
    left.append(el("h3", null, "Call stack"), this.stack = el("ol", "dbg-stack"),
      el("h3", null, "Variables"), this.vars = el("table", "dbg-vars"),
      el("h3", null, "Messages"), this.messages = el("div", "dbg-messages"));
    right.append(el("h3", null, "Rendering sequence"), this.sequence = el("ol", "dbg-sequence"),
      el("h3", null, "Map written by the step"), this.stepInfo = el("div", "dbg-stepinfo"), this.image = el("img", "dbg-image"));
    this.image.alt = "";
    body.append(left, right);
    this.root.append(bar, body);
    this.updateButtons();
    // The usual debugger keys, while a session is live: F8 continue, F10 over, F11 line,
    // Shift-F11 out.
    document.addEventListener("keydown", (e) => {
      const key = { F8: "continue", F10: "over", F11: e.shiftKey ? "out" : "line" }[e.key];
      if (!key || !this.id || this.buttons[key].disabled) return;
      e.preventDefault();
      this.buttons[key].click();
    });
  }

  updateButtons() {
    const status = this.state ? this.state.status : null;
    const stepping = !!this.id && (status === "ready" || status === "running");
    for (const k of ["instruction", "line", "over", "out", "cursor", "continue"]) this.buttons[k].disabled = !stepping;
    const render = this.state && this.state.render;
    this.buttons.render.disabled = !(this.id && status === "finished" && render && !render.failed && render.done < render.total);
    this.buttons.stop.disabled = !this.id;
  }

  toggleBreakpointLine(number) {
    const view = this.editor();
    view.dispatch({ effects: toggleBreakpoint.of(view.state.doc.line(number).from) });
  }

  breakpointLines() {
    const view = this.editor();
    const lines = [];
    view.state.field(breakpoints).between(0, view.state.doc.length, (from) => { lines.push(view.state.doc.lineAt(from).number); });
    return lines;
  }

  async call(path, body, method) {
    this.busy = true;
    try {
      const response = await fetch(path, {
        method: method || (body === undefined ? "GET" : "POST"),
        headers: { "X-Geogen-Token": this.token, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      let json;
      try { json = await response.json(); } catch (e) { json = { diagnostics: [{ code: String(response.status), message: response.statusText }] }; }
      return { ok: response.ok, status: response.status, json };
    } catch (e) {
      return { ok: false, status: 0, json: { diagnostics: [{ code: "network", message: String(e) }] } };
    } finally { this.busy = false; }
  }

  async start() {
    if (this.id) await this.stop();
    const body = this.request();
    this.startedSource = body.source;
    this.stepImages = 0;
    this.lastStep = null;
    this.stepImage = null;
    this.image.removeAttribute("src");
    this.stepInfo.textContent = "";
    const { ok, json } = await this.call("/api/debug/start", body);
    if (!ok) { this.failed(json); return; }
    this.id = json.id;
    this.show(json);
  }

  async step(body) {
    if (!this.id) return;
    body.breakpoints = this.breakpointLines();
    const { ok, status, json } = await this.call(`/api/debug/${this.id}/step`, body);
    if (!ok) { this.refused(status, json); return; }
    this.show(json);
  }

  runToCursor() {
    const view = this.editor();
    const line = view.state.doc.lineAt(view.state.selection.main.head).number;
    return this.step({ kind: "to_line", line });
  }

  async continue() {
    if (!this.id) return;
    const { ok, status, json } = await this.call(`/api/debug/${this.id}/continue`, { breakpoints: this.breakpointLines() });
    if (!ok) { this.refused(status, json); return; }
    this.show(json);
  }

  async renderStep() {
    if (!this.id) return;
    const { ok, status, json } = await this.call(`/api/debug/${this.id}/render-step`, {});
    if (!ok) { this.refused(status, json); return; }
    this.show(json);
    const last = json.last_step;
    this.lastStep = last.index;
    this.stepInfo.textContent = `#${last.index + 1} ${last.operation || ""}  bounds ${last.bounds || "-"}${last.note ? `  (${last.note})` : ""}`;
    this.stepImage = last.image;
    this.showStepImage();
    this.highlightStep(last.index);
  }

  // The last step's map as the picture the "show" selector asks for (again when it changes).
  showStepImage() {
    if (this.stepImage) {
      const kind = ["colored", "hillshade", "gray"].includes(this.kind()) ? this.kind() : "hillshade";
      this.image.onload = () => { this.stepImages++; };
      const palette = kind === "colored" && this.palette() ? `&palette=${encodeURIComponent(this.palette())}` : "";
      this.image.src = `${this.stepImage}?token=${encodeURIComponent(this.token)}&kind=${kind}${palette}`;
      this.image.dataset.kind = kind;
    } else this.image.removeAttribute("src");
  }

  async stop() {
    if (!this.id) return;
    const id = this.id;
    this.id = null;
    await this.call(`/api/debug/${id}`, undefined, "DELETE");
    this.editor().dispatch({ effects: setCurrent.of(null) });
    this.statusLine.textContent = "stopped";
    this.updateButtons();
  }

  refused(status, json) {
    if (status === 404) { this.id = null; this.editor().dispatch({ effects: setCurrent.of(null) }); }
    this.failed(json);
  }

  failed(json) {
    this.logDiagnostics((json && json.diagnostics) || []);
    const d = json && json.diagnostics && json.diagnostics[0];
    this.statusLine.textContent = d ? `${d.code}: ${d.message}` : "refused";
    this.updateButtons();
  }

  show(state) {
    this.state = state;
    const stale = this.source() !== this.startedSource;
    const at = state.at;
    const where = at ? `line ${at.line}:${at.column}` : "";
    const render = state.render;
    let text = `${state.status} ${where} · ${state.instructions} instructions`;
    if (state.status === "finished") text += ` · rendering ${render.done}/${render.total}`;
    if (stale) text += " · the script changed since Start";
    this.statusLine.textContent = text;
    const view = this.editor();
    if (at && !stale) {
      const pos = Math.min(at.from, view.state.doc.length);
      view.dispatch({ effects: [setCurrent.of({ pos, fault: state.status === "faulted" }), EditorView.scrollIntoView(pos, { y: "nearest" })] });
    } else view.dispatch({ effects: setCurrent.of(null) });
    if (state.diagnostics.length) this.logDiagnostics(state.diagnostics);
    if (render.diagnostics && render.diagnostics.length) this.logDiagnostics(render.diagnostics);

    this.stack.innerHTML = "";
    for (const frame of state.call_stack) {
      const li = el("li", null, `${frame.function}${frame.at ? `  line ${frame.at.line}:${frame.at.column}` : ""}`);
      if (frame.at) li.addEventListener("click", () => this.reveal(frame.at.from));
      this.stack.appendChild(li);
    }
    this.vars.innerHTML = "";
    for (const scope of state.scopes) {
      const head = el("tr", "dbg-scope");
      const th = el("th", null, scope.label + (scope.total > scope.variables.length ? ` (first ${scope.variables.length} of ${scope.total})` : ""));
      th.colSpan = 3;
      head.appendChild(th);
      this.vars.appendChild(head);
      for (const v of scope.variables) {
        const tr = el("tr");
        tr.dataset.name = v.name;
        tr.append(el("td", "dbg-name", v.name), el("td", "dbg-kind", v.kind), el("td", "dbg-value", v.value));
        this.vars.appendChild(tr);
      }
    }
    this.messages.innerHTML = "";
    if (state.messages_skipped) this.messages.appendChild(el("div", "dbg-note", `… ${state.messages_skipped} earlier messages`));
    for (const m of state.messages) this.messages.appendChild(el("div", null, `${m.line}: ${m.text}`));

    this.sequence.innerHTML = "";
    for (const s of state.sequence) {
      const li = el("li", null, `#${s.index + 1} ${s.text}${s.line != null ? `   line ${s.line}` : ""}`);
      li.dataset.index = s.index;
      li.title = li.textContent;
      if (render.started && s.index < render.done) li.classList.add("done");
      if (s.line != null) li.addEventListener("click", () => this.revealLine(s.line));
      this.sequence.appendChild(li);
    }
    if (state.sequence_length > state.sequence.length) {
      this.sequence.appendChild(el("li", "dbg-note", `… ${state.sequence_length - state.sequence.length} more steps`));
    }
    if (this.lastStep != null && render.started) this.highlightStep(this.lastStep);
    this.updateButtons();
    window.__debugState = state;
  }

  highlightStep(index) {
    for (const li of this.sequence.querySelectorAll("li")) li.classList.toggle("current", li.dataset.index === String(index));
    const current = this.sequence.querySelector("li.current");
    if (current) current.scrollIntoView({ block: "nearest" });
  }

  reveal(pos) {
    const view = this.editor();
    pos = Math.min(pos, view.state.doc.length);
    view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: "center" }) });
  }

  revealLine(number) {
    const doc = this.editor().state.doc;
    if (number >= 1 && number <= doc.lines) this.reveal(doc.line(number).from);
  }
}
