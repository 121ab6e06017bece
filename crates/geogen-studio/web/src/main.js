// geogen studio's page: the editor, the parameters panel, the live preview, the 3D view and the
// infinite-map view, all talking to the local server (docs/studio.md).
import { createEditor, relint, replaceDocument } from "./editor.js";
import { View3D } from "./view3d.js";
import { Slippy } from "./slippy.js";
import { selftest, debugDemo, layoutCheck, shot, newFileWalk } from "./selftest.js";
import { Debugger } from "./debugger.js";
import { setupExport } from "./export.js";
import { latency } from "./latency.js";
import { setupFiles } from "./files.js";

const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const response = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-Geogen-Token": token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = null;
  try { json = await response.json(); } catch (e) { json = { diagnostics: [{ code: String(response.status), message: response.statusText }] }; }
  return { status: response.status, ok: response.ok, json };
}

// ---- console -------------------------------------------------------------------------------
function log(text, cls = "") {
  const line = document.createElement("div");
  if (cls) line.className = cls;
  line.textContent = text;
  $("console").appendChild(line);
  while ($("console").childNodes.length > 500) $("console").firstChild.remove();
  $("console").scrollTop = $("console").scrollHeight;
}
function logDiagnostics(diagnostics) {
  for (const d of diagnostics) {
    const at = d.line != null ? `${d.line}:${d.column}: ` : "";
    log(`${at}${d.code}: ${d.message}`, "error");
    if (d.hint) log(`  hint: ${d.hint}`, "hint");
  }
}
function clearConsole() { $("console").replaceChildren(); }
function status(text) { $("status").textContent = text; }

// ---- state ---------------------------------------------------------------------------------
const state = {
  source: "", version: "", info: null, infoKey: "", values: {}, seed: "0",
  preview: 512, mapWidth: null, mapHeight: null, scale: 1,
  maps: [], selected: "main", kind: "colored", scriptVersion: 0,
  // The text last saved (or opened): the editor's differs when there is unsaved work.
  saved: "",
  // The last render's runtime errors, for the editor: {source, diagnostics}.
  runtime: null,
  // The document is a built-in example with no file yet: Save asks for a name.
  example: null,
};

// ---- unsaved work and kept settings ------------------------------------------------------------
function dirty() { return state.source !== state.saved; }
function markDirty() {
  $("file-name").classList.toggle("dirty", dirty());
  $("file-name").title = dirty() ? "unsaved changes" : "";
}
window.addEventListener("beforeunload", (event) => {
  if (!dirty()) return;
  // Unsaved text is kept for the next load too, but the browser asks before leaving.
  event.preventDefault();
  event.returnValue = "";
});
// The parameter values and seed of a script survive a reload (per file, in this browser).
const keptKey = () => `geogen-studio:${$("file-name").textContent}`;
function keepSettings() {
  try { localStorage.setItem(keptKey(), JSON.stringify({ values: state.values, seed: state.seed })); } catch (e) { /* private mode */ }
}
function restoreSettings() {
  try {
    const kept = JSON.parse(localStorage.getItem(keptKey()) || "null");
    if (kept && typeof kept === "object") {
      if (kept.values && typeof kept.values === "object") Object.assign(state.values, kept.values);
      if (typeof kept.seed === "string") state.seed = kept.seed;
    }
  } catch (e) { /* nothing kept */ }
}

// ---- check ---------------------------------------------------------------------------------
let lastCheck = null;
async function check(text) {
  const { json, ok } = await api("/api/check", { source: text });
  if (!ok) { logDiagnostics(json.diagnostics || []); return null; }
  lastCheck = json;
  if (json.ok) setInfo(json.info);
  return json;
}

function setInfo(info) {
  const key = JSON.stringify(info);
  if (key === state.infoKey) return;
  state.infoKey = key;
  state.info = info;
  state.scriptVersion++;
  for (const p of info.parameters) if (!(p.name in state.values)) state.values[p.name] = p.default;
  for (const name of Object.keys(state.values)) if (!info.parameters.some((p) => p.name === name)) delete state.values[name];
  buildParams();
  buildRenderSettings();
  if (exportPane) exportPane.update();
}

// ---- parameters panel ----------------------------------------------------------------------
function field(labelText, input, valueText) {
  const div = document.createElement("div");
  div.className = "param";
  const label = document.createElement("label");
  const name = document.createElement("span");
  name.textContent = labelText;
  label.appendChild(name);
  if (valueText) label.appendChild(valueText);
  div.appendChild(label);
  div.appendChild(input);
  return div;
}

function buildParams() {
  const box = $("script-params");
  box.innerHTML = "";
  const params = state.info ? state.info.parameters : [];
  if (params.length === 0) { box.textContent = "This script declares no parameters."; return; }
  for (const p of params) {
    let input, shown = null;
    if (p.kind === "boolean") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = !!state.values[p.name];
      input.addEventListener("change", () => { state.values[p.name] = input.checked; keepSettings(); scheduleRender(); });
    } else if (p.kind === "enum") {
      input = document.createElement("select");
      for (const item of p.items) { const o = document.createElement("option"); o.value = item.name; o.textContent = item.name; input.appendChild(o); }
      input.value = state.values[p.name];
      input.addEventListener("change", () => { state.values[p.name] = input.value; keepSettings(); scheduleRender(); });
    } else {
      input = document.createElement("input");
      input.type = "range";
      const scale = sliderScale(p);
      input.min = scale.to(p.min); input.max = scale.to(p.max); input.step = scale.step;
      input.value = scale.to(state.values[p.name]);
      input.dataset.scale = scale.name;
      shown = document.createElement("span");
      shown.textContent = state.values[p.name];
      input.addEventListener("input", () => {
        const v = scale.from(Number(input.value));
        state.values[p.name] = v;
        shown.textContent = v;
        keepSettings();
        // While dragging: a render now, or right after the one in flight (never two at once).
        renderNow();
      });
    }
    input.dataset.param = p.name;
    const div = field(p.label || p.name, input, shown);
    if (p.description) div.title = p.description;
    box.appendChild(div);
  }
}

// How a numeric parameter maps onto its slider: powers of two and of ten step through their
// exponents, a positive range over more than two decades is logarithmic, others are linear.
function sliderScale(p) {
  const linear = (step) => ({ name: "linear", step, to: (v) => v, from: (x) => x });
  if (p.restriction === "PowersOf2" && p.min > 0) {
    return { name: "powers of 2", step: 1, to: (v) => Math.round(Math.log2(v)), from: (x) => Math.pow(2, Math.round(x)) };
  }
  if (p.restriction === "PowersOf10" && p.min > 0) {
    return { name: "powers of 10", step: 1, to: (v) => Math.round(Math.log10(v)), from: (x) => Math.pow(10, Math.round(x)) };
  }
  if (p.restriction === "Integers") return linear(1);
  if (p.min > 0 && p.max / p.min > 100) {
    const round = (v) => Math.min(p.max, Math.max(p.min, Number(v.toPrecision(3))));
    return { name: "logarithmic", step: "any", to: (v) => Math.log(v), from: (x) => round(Math.exp(x)) };
  }
  return linear((p.max - p.min) / 200 || 0.01);
}

function buildRenderSettings() {
  const box = $("render-settings");
  box.innerHTML = "";
  const seed = document.createElement("input");
  seed.type = "text"; seed.value = state.seed; seed.id = "seed";
  seed.addEventListener("change", () => { state.seed = seed.value; keepSettings(); scheduleRender(); });
  const reroll = document.createElement("button");
  reroll.textContent = "re-roll"; reroll.title = "a new random seed"; reroll.id = "reroll";
  reroll.addEventListener("click", () => { state.seed = String(Math.floor(Math.random() * 4294967296)); seed.value = state.seed; keepSettings(); scheduleRender(); });
  const row = document.createElement("div");
  row.className = "row";
  row.append(seed, reroll);
  box.appendChild(field("seed", row));
  const size = document.createElement("select");
  for (const s of [256, 512, 1024]) { const o = document.createElement("option"); o.value = s; o.textContent = `${s} px`; size.appendChild(o); }
  size.value = state.preview;
  size.addEventListener("change", () => { state.preview = Number(size.value); scheduleRender(); });
  box.appendChild(field("preview size", size));
  const info = state.info;
  if (!info) return;
  for (const [axis, dim] of [["mapWidth", info.width], ["mapHeight", info.height]]) {
    if (!dim.finite) continue;
    const input = document.createElement("input");
    input.type = "number"; input.min = dim.min; input.max = dim.max;
    if (state[axis] == null || state[axis] < dim.min || state[axis] > dim.max) state[axis] = dim.default ?? Math.min(dim.max, Math.max(dim.min, 1000));
    input.value = state[axis];
    input.addEventListener("change", () => { state[axis] = Math.min(dim.max, Math.max(dim.min, Number(input.value) || dim.min)); input.value = state[axis]; scheduleRender(); });
    box.appendChild(field(axis === "mapWidth" ? "map width" : "map height", input));
  }
  if (!info.width.finite || !info.height.finite) {
    const scale = document.createElement("input");
    scale.type = "number"; scale.min = 0.001; scale.max = 10; scale.step = "any"; scale.value = state.scale;
    scale.addEventListener("change", () => { state.scale = Math.min(10, Math.max(0.001, Number(scale.value) || 1)); scheduleRender(); });
    box.appendChild(field("scale (infinite axes)", scale));
  }
}

// The render for a preview of `side` pixels: a finite map is shown whole (scaled to fit), an
// infinite one from its origin at the chosen scale.
function renderRequest(side) {
  const info = state.info;
  const body = { source: state.source, seed: state.seed, parameters: state.values };
  if (info && info.width.finite && info.height.finite) {
    const scale = Math.min(side / state.mapWidth, side / state.mapHeight);
    Object.assign(body, {
      scale, map_width: state.mapWidth, map_height: state.mapHeight,
      width: Math.max(1, Math.floor(state.mapWidth * scale)), height: Math.max(1, Math.floor(state.mapHeight * scale)),
    });
  } else {
    Object.assign(body, { scale: state.scale * side / state.preview, width: side, height: side });
    if (info && info.width.finite) body.map_width = state.mapWidth;
    if (info && info.height.finite) body.map_height = state.mapHeight;
  }
  return body;
}

// ---- rendering -----------------------------------------------------------------------------
// Edits in the editor wait for a pause in typing (200 ms); sliders render at once. Either way at
// most one render is in flight: a change during one is rendered right after it, coarse first.
let renderTimer = null, lastResult = null, inFlight = false, pending = false;
function scheduleRender() {
  clearTimeout(renderTimer);
  renderTimer = setTimeout(renderNow, 200);
}

async function renderNow() {
  clearTimeout(renderTimer);
  if (inFlight) { pending = true; return; }
  inFlight = true;
  try {
    do {
      pending = false;
      await renderPasses();
    } while (pending);
  } finally {
    inFlight = false;
  }
}

// A 128-pixel pass, then the preview size unless a newer change is waiting.
async function renderPasses() {
  for (const side of [Math.min(128, state.preview), state.preview]) {
    const started = performance.now();
    const request = renderRequest(side);
    const { status: code, json } = await api("/api/render", request);
    if (code === 409) return; // superseded on the server
    const final = side === state.preview;
    if (code !== 200) {
      clearConsole();
      logDiagnostics(json.diagnostics || []);
      for (const m of json.messages || []) log(m);
      status("error");
      setRuntime({ source: request.source, diagnostics: json.diagnostics || [] });
      window.__renders = (window.__renders || 0) + 1;
      return;
    }
    setRuntime(null);
    await showResult(json);
    const ms = performance.now() - started;
    status(`${json.maps.length} map${json.maps.length === 1 ? "" : "s"} · ${json.geometry.render_width}×${json.geometry.render_height} · ${ms.toFixed(0)} ms`);
    window.__lastRenderMs = ms;
    window.__passes = (window.__passes || 0) + 1;
    if (final) {
      window.__renderedSource = request.source;
      clearConsole();
      for (const m of json.messages) log(m);
      // Painted: the frame after the one that drew the full-size preview (the latency measurement).
      requestAnimationFrame(() => requestAnimationFrame(() => { window.__paintedAt = performance.now(); window.__painted = (window.__painted || 0) + 1; }));
    }
    if (final || pending) break;
  }
  window.__renders = (window.__renders || 0) + 1;
}

// The runtime errors of the last render, underlined in the editor while its text is unchanged.
function setRuntime(runtime) {
  const had = state.runtime;
  state.runtime = runtime && runtime.diagnostics.some((d) => d.from != null) ? runtime : null;
  if ((had || state.runtime) && editorView) relint(editorView);
}

async function showResult(result) {
  lastResult = result;
  state.maps = result.maps.map((m) => m.name);
  const select = $("map-select");
  if (select.dataset.maps !== state.maps.join(",")) {
    select.innerHTML = "";
    for (const name of state.maps) { const o = document.createElement("option"); o.value = name; o.textContent = name; select.appendChild(o); }
    select.dataset.maps = state.maps.join(",");
  }
  if (!state.maps.includes(state.selected)) state.selected = state.maps[0];
  select.value = state.selected;
  await drawPreview();
  if (activeTab === "view3d") await update3D();
  if (activeTab === "slippy") slippy.refresh();
}

function selectedMap() {
  return lastResult && lastResult.maps.find((m) => m.name === state.selected);
}

function loadImage(src) {
  return new Promise((resolve) => { const img = new Image(); img.onload = () => resolve(img); img.onerror = () => resolve(null); img.src = src; });
}

let heightsCache = { key: null, data: null };
function heightsOf(map) {
  if (!map || !map.heights) return null;
  if (heightsCache.key !== map.heights) {
    const bytes = Uint8Array.from(atob(map.heights), (c) => c.charCodeAt(0));
    heightsCache = { key: map.heights, data: new Float32Array(bytes.buffer) };
  }
  return heightsCache.data;
}

async function drawPreview() {
  const map = selectedMap();
  const canvas = $("preview-canvas");
  if (!map || !map.width) { canvas.width = 1; canvas.height = 1; return; }
  const img = await loadImage(map[state.kind]);
  canvas.width = map.width; canvas.height = map.height;
  // Shown at the preview size, however small the first render.
  const box = $("preview");
  const side = Math.min(state.preview, box.clientWidth || state.preview, box.clientHeight || state.preview);
  const f = side / Math.max(map.width, map.height);
  canvas.style.width = `${Math.round(map.width * f)}px`;
  canvas.style.height = `${Math.round(map.height * f)}px`;
  if (img) canvas.getContext("2d").drawImage(img, 0, 0);
}

$("preview-canvas").addEventListener("mousemove", (e) => {
  const map = selectedMap();
  if (!map || !map.width) return;
  const rect = e.target.getBoundingClientRect();
  const x = Math.floor((e.clientX - rect.left) / rect.width * map.width), y = Math.floor((e.clientY - rect.top) / rect.height * map.height);
  const heights = heightsOf(map);
  const scale = lastResult.geometry.scale;
  const mx = ((map.x + x) / scale).toFixed(1), my = ((map.y + y) / scale).toFixed(1);
  const h = heights && x >= 0 && y >= 0 && x < map.width && y < map.height ? heights[y * map.width + x] : null;
  $("cursor").textContent = `x ${mx}  y ${my}  height ${h == null ? "?" : h.toFixed(4)}`;
});

// ---- tabs, 3D, map -------------------------------------------------------------------------
let activeTab = "preview";
const view3d = new View3D($("gl-canvas"));
let slippy = null;

async function update3D() {
  const map = selectedMap();
  if (!map || !map.width) return;
  const img = await loadImage(map.colored);
  view3d.setMap(heightsOf(map), map.width, map.height, img);
}

// The 3D view's settings: relief exaggeration (a power of two, ×¼ to ×4) and the sun.
function setup3DControls() {
  const relief = $("view3d-relief"), azimuth = $("view3d-azimuth"), elevation = $("view3d-elevation");
  const apply = () => {
    view3d.exaggeration = 2 ** Number(relief.value);
    view3d.sun = { azimuth: Number(azimuth.value), elevation: Number(elevation.value) };
    $("view3d-relief-value").textContent = `×${view3d.exaggeration.toFixed(2)}`;
    $("view3d-sun-value").textContent = `${azimuth.value}°/${elevation.value}°`;
    view3d.draw();
  };
  for (const input of [relief, azimuth, elevation]) input.addEventListener("input", apply);
  $("view3d-reset").addEventListener("click", () => { view3d.resetCamera(); view3d.draw(); });
}
setup3DControls();

for (const button of document.querySelectorAll("#tabs button[data-tab]")) {
  button.addEventListener("click", async () => {
    activeTab = button.dataset.tab;
    for (const b of document.querySelectorAll("#tabs button[data-tab]")) b.classList.toggle("active", b === button);
    for (const v of document.querySelectorAll(".view")) v.classList.toggle("active", v.id === activeTab);
    if (activeTab === "view3d") { await update3D(); view3d.draw(); }
    if (activeTab === "slippy") slippy.refresh();
  });
}
$("map-select").addEventListener("change", async (e) => { state.selected = e.target.value; await drawPreview(); if (activeTab === "view3d") await update3D(); if (activeTab === "slippy") slippy.refresh(); });
$("kind-select").addEventListener("change", async (e) => { state.kind = e.target.value; await drawPreview(); if (activeTab === "slippy") slippy.refresh(); });
window.addEventListener("resize", () => { if (activeTab === "view3d") view3d.draw(); if (activeTab === "slippy") slippy.update(); });

function tileUrl(z, x, y) {
  const q = new URLSearchParams({ token, kind: state.kind, seed: state.seed, v: String(state.scriptVersion) });
  if (state.info && state.info.width.finite && state.info.height.finite) q.set("map", `${state.mapWidth}x${state.mapHeight}`);
  for (const [name, value] of Object.entries(state.values)) q.set(`p.${name}`, String(value));
  return `/tiles/${encodeURIComponent(state.selected || "main")}/${z}/${x}/${y}.png?${q}`;
}

// ---- save ----------------------------------------------------------------------------------
async function save() {
  if (state.example) {
    const created = await files.saveAs(state.source, state.example.replace(/\.ggs$/, ""));
    if (!created) return;
    // The example's parameter values and seed go with it into its file.
    try { localStorage.setItem(`geogen-studio:${created.name}`, JSON.stringify({ values: state.values, seed: state.seed })); } catch (e) { /* private mode */ }
    loadDocument(created);
    return;
  }
  const { ok, status: code, json } = await api("/api/save", { source: state.source, version: state.version });
  if (ok) { state.version = json.version; state.saved = state.source; markDirty(); log("saved", "info"); status("saved"); }
  else if (code === 409 && json.disk) resolveConflict(json.disk);
  else logDiagnostics(json.diagnostics || []);
}

// The file changed on disk since this page read it: show both texts and let the user keep
// theirs (saved over the file's version) or take the file's. Nothing is overwritten unseen.
function resolveConflict(disk) {
  const dialog = document.createElement("dialog");
  dialog.className = "conflict";
  dialog.innerHTML = `<h3>The file changed on disk</h3>
    <p>Another program changed it since this page read it. Keep your text (it replaces the file) or take the file's (it replaces your text).</p>
    <div class="both"><label>Your text<textarea readonly spellcheck="false"></textarea></label>
    <label>The file<textarea readonly spellcheck="false"></textarea></label></div>
    <div class="buttons"><button data-choice="mine">Keep mine</button><button data-choice="theirs">Take the file's</button><button data-choice="later">Decide later</button></div>`;
  const [mine, theirs] = dialog.querySelectorAll("textarea");
  mine.value = state.source;
  theirs.value = disk.source;
  document.body.append(dialog);
  dialog.addEventListener("click", async (event) => {
    const choice = event.target.dataset && event.target.dataset.choice;
    if (!choice) return;
    dialog.close();
    dialog.remove();
    if (choice === "mine") { state.version = disk.version; await save(); }
    if (choice === "theirs") {
      state.version = disk.version;
      editorView.dispatch({ changes: { from: 0, to: editorView.state.doc.length, insert: disk.source } });
      log("took the file's text", "info");
      status("file's text");
    }
  });
  dialog.showModal();
}
$("save").addEventListener("click", save);

// ---- help ----------------------------------------------------------------------------------
function setupHelp() {
  const dialog = document.createElement("dialog");
  dialog.id = "help";
  dialog.innerHTML = `<h3>geogen studio</h3>
    <table>
      <tr><td><kbd>Ctrl</kbd>-<kbd>S</kbd></td><td>save the script</td></tr>
      <tr><td><kbd>Ctrl</kbd>-<kbd>Space</kbd></td><td>complete a name (after <code>HeightMap.</code>, <code>Parameters.</code>, …)</td></tr>
      <tr><td><kbd>Ctrl</kbd>-<kbd>Z</kbd> / <kbd>Ctrl</kbd>-<kbd>Shift</kbd>-<kbd>Z</kbd></td><td>undo / redo</td></tr>
      <tr><td><kbd>Tab</kbd></td><td>indent the selection</td></tr>
      <tr><td>hover a name</td><td>its signature and what it does</td></tr>
      <tr><td><kbd>?</kbd> or <kbd>F1</kbd></td><td>this help</td></tr>
    </table>
    <p>Errors are underlined where they are, compile errors as you type and runtime errors after a
    render; the console shows the last run's messages. Sliders render while you drag. Parameter
    values and the seed are kept for this script in this browser. The reference of every operation
    is in <code>docs/library.md</code>.</p>
    <div class="buttons"><button>Close</button></div>`;
  dialog.querySelector("button").addEventListener("click", () => dialog.close());
  document.body.append(dialog);
  const open = () => { if (!dialog.open) dialog.showModal(); };
  $("help-button").addEventListener("click", open);
  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest && e.target.closest(".cm-editor, input, select, textarea");
    if (e.key === "F1" || (e.key === "?" && !typing)) { e.preventDefault(); open(); }
  });
}

// ---- documents -----------------------------------------------------------------------------
// Makes another document the editor's: a script of the directory (opened or just created), or a
// built-in example (`example`: no file yet). Its parameter values and seed are the ones kept for
// it; a new script's template or an example counts as unsaved work.
function loadDocument(doc) {
  state.example = doc.example ? doc.name : null;
  const shown = doc.example ? `${doc.name} (example)` : doc.name;
  $("file-name").textContent = shown;
  document.title = `${shown} · geogen studio`;
  $("save").disabled = !(doc.example ? session.directory : doc.savable);
  state.version = doc.version;
  state.saved = doc.new || doc.example ? "" : doc.source;
  state.values = {};
  state.seed = "0";
  state.mapWidth = null;
  state.mapHeight = null;
  state.infoKey = "";
  state.runtime = null;
  // Until the new text is checked, no parameters of the previous document are offered.
  state.info = null;
  buildParams();
  restoreSettings();
  if (editorView && editorView.state.doc.toString() !== doc.source) replaceDocument(editorView, doc.source);
  state.source = doc.source;
  markDirty();
  check(doc.source).then(() => {
    buildRenderSettings();
    // The map view shows the new map whole when it is finite, as on opening the page.
    if (state.info && state.info.width.finite && state.info.height.finite) slippy.centreOn(state.mapWidth / 2, state.mapHeight / 2);
    renderNow();
  });
  window.__documents = (window.__documents || 0) + 1;
}

// ---- start ---------------------------------------------------------------------------------
let exportPane = null;
let files = null;
let session = null;
let editorView = null;
async function start() {
  const answer = await api("/api/session");
  session = answer.json;
  if (!answer.ok) { logDiagnostics(session.diagnostics || []); status("not connected"); return; }
  document.title = `${session.name} · geogen studio`;
  $("file-name").textContent = session.name;
  $("save").disabled = !session.savable;
  state.source = session.source;
  // A script not written yet opens with the starter template, unsaved until the first save.
  state.saved = session.new ? "" : session.source;
  state.version = session.version;
  markDirty();
  restoreSettings();
  exportPane = setupExport($("export"), { api, state, session, log, logDiagnostics });
  slippy = new Slippy($("slippy"), {
    tileUrl, maxZoom: session.tiles.max_zoom, zoomScale1: session.tiles.zoom_scale_1,
    bounds: () => ({
      width: state.info && state.info.width.finite ? state.mapWidth : null,
      height: state.info && state.info.height.finite ? state.mapHeight : null,
    }),
    onCursor: (x, y) => { $("cursor").textContent = `x ${x.toFixed(1)}  y ${y.toFixed(1)}`; },
  });
  window.__studio = { state, slippy, view3d, get view() { return editor; }, lastHeights: () => heightsOf(selectedMap()) };
  const editor = createEditor($("editor"), {
    doc: session.source, library: session.library, scriptInfo: () => state.info,
    check, onSave: save, runtime: () => state.runtime,
    onChange: (text) => { state.source = text; markDirty(); scheduleRender(); },
  });
  const debug = new Debugger($("debugger"), {
    token, editor: () => editor, request: () => renderRequest(state.preview), source: () => state.source, logDiagnostics,
  });
  window.__studio.debugger = debug;
  window.__studio.resolveConflict = resolveConflict;
  editorView = editor;
  files = setupFiles({ api, dirty, name: () => $("file-name").textContent, load: loadDocument, directory: session.directory });
  window.__studio.files = files;
  const first = await check(session.source);
  if (first && !first.ok) logDiagnostics(first.diagnostics);
  setupHelp();
  buildRenderSettings();
  if (state.info) {
    const { width, height } = state.info;
    if (width.finite && height.finite) slippy.centreOn(state.mapWidth / 2, state.mapHeight / 2);
  }
  await renderNow();
  const tab = { "#3d": "view3d", "#map": "slippy", "#debug": "debugger" }[location.hash];
  if (tab) document.querySelector(`#tabs button[data-tab=${tab}]`).click();
  if (location.hash === "#selftest") selftest(window.__studio);
  if (location.hash === "#debug-demo") debugDemo(window.__studio);
  if (location.hash === "#layout") layoutCheck();
  if (location.hash === "#new-file") newFileWalk(window.__studio);
  if (location.hash.startsWith("#shot-")) shot(window.__studio, location.hash.slice(6));
  if (location.hash.startsWith("#latency")) latency(window.__studio);
}
start();
