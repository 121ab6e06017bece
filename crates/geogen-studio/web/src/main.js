// geogen studio's page: the editor, the parameters panel, the live preview, the 3D view and the
// infinite-map view, all talking to the local server (docs/studio.md).
import { createEditor, relint, replaceDocument } from "./editor.js";
import { View3D } from "./view3d.js";
import { Slippy } from "./slippy.js";
import { selftest, debugDemo, layoutCheck, shot, newFileWalk } from "./selftest.js";
import { Debugger } from "./debugger.js";
import { setupExport } from "./export.js";
import { latency } from "./latency.js";
import { decodePreview, paint, histogram, paletteGradient, setPalettes, PALETTES, DEFAULT_PALETTE } from "./picture.js";
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

// A render: the binary preview answer (picture.js reads it), or a refusal's JSON.
async function renderApi(body) {
  const response = await fetch("/api/render", {
    method: "POST",
    headers: { "X-Geogen-Token": token, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.ok && response.headers.get("Content-Type") === "application/vnd.geogen.preview") {
    return { status: response.status, ok: true, json: decodePreview(await response.arrayBuffer()) };
  }
  let json = null;
  try { json = await response.json(); } catch (e) { json = { diagnostics: [{ code: String(response.status), message: response.statusText }] }; }
  return { status: response.status, ok: false, json };
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
  palette: DEFAULT_PALETTE, stretch: false,
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

// The palette and its stretch are the viewer's taste, not the script's: kept for every script.
const paletteKey = "geogen-studio:palette";
function keepPalette() {
  try { localStorage.setItem(paletteKey, JSON.stringify({ palette: state.palette, stretch: state.stretch })); } catch (e) { /* private mode */ }
}
function restorePalette() {
  try {
    const kept = JSON.parse(localStorage.getItem(paletteKey) || "null");
    if (kept && typeof kept.palette === "string" && kept.palette in PALETTES) state.palette = kept.palette;
    if (kept && typeof kept.stretch === "boolean") state.stretch = kept.stretch;
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
  const palette = document.createElement("select");
  palette.id = "palette-select";
  for (const name of Object.keys(PALETTES)) { const o = document.createElement("option"); o.value = name; o.textContent = name; palette.appendChild(o); }
  palette.value = state.palette;
  palette.title = "the colored picture's palette (no new render)";
  palette.addEventListener("change", () => setPalette(palette.value, state.stretch));
  const stretch = document.createElement("input");
  stretch.type = "checkbox"; stretch.id = "stretch"; stretch.checked = state.stretch;
  stretch.title = "spread the palette over the map's own height range (sea level stays at 0)";
  stretch.addEventListener("change", () => setPalette(state.palette, stretch.checked));
  const stretchLabel = document.createElement("label");
  stretchLabel.className = "inline";
  stretchLabel.append(stretch, "stretch to range");
  const paletteBox = document.createElement("div");
  paletteBox.append(palette, stretchLabel);
  box.appendChild(field("palette", paletteBox));
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

// ---- zoom and pan of the preview ---------------------------------------------------------------
// The view is the window of map coordinates shown: its top-left (x0, y0) and its zoom. At zoom 1
// it is the whole of a finite map, or the preview size at the chosen scale from the origin of an
// infinite one; the wheel zooms about the cursor, a drag pans, a double click or the button
// resets. The picture shown keeps the window it was rendered for and is scaled and moved to the
// current one until the render of that window arrives.
const view = { zoom: 1, x0: 0, y0: 0 };
const MAX_VIEW_ZOOM = 64;

function finiteMap() {
  return !!(state.info && state.info.width.finite && state.info.height.finite);
}

// The window at zoom 1, in map units, and the render scale that fills a preview of `side` with it.
function baseWindow(side = state.preview) {
  if (finiteMap()) return { w: state.mapWidth, h: state.mapHeight, scale: Math.min(side / state.mapWidth, side / state.mapHeight) };
  const span = state.preview / state.scale;
  return { w: span, h: span, scale: (state.scale * side) / state.preview };
}

// Keeps the zoom within 1..64 and a render scale the renderer takes (at most 10), and a finite
// map's window within the map.
function clampView() {
  const base = baseWindow();
  view.zoom = Math.min(MAX_VIEW_ZOOM, 10 / base.scale, Math.max(1, view.zoom));
  if (finiteMap()) {
    view.x0 = Math.min(base.w - base.w / view.zoom, Math.max(0, view.x0));
    view.y0 = Math.min(base.h - base.h / view.zoom, Math.max(0, view.y0));
  }
}

function viewIsReset() {
  return view.zoom === 1 && view.x0 === 0 && view.y0 === 0;
}

// Where the window lies on the screen: the box of the preview size (or less) centred in the
// area, and `k`, screen pixels per map unit.
function displayBox() {
  const area = $("preview-area");
  const areaWidth = area.clientWidth || state.preview, areaHeight = area.clientHeight || state.preview;
  const base = baseWindow();
  // The picture fills the area (a 4K screen shows a 512² preview large, not a postage stamp);
  // the preview size sets how many pixels are rendered, not how large they are shown.
  const side = Math.min(areaWidth, areaHeight);
  const k0 = side / Math.max(base.w, base.h);
  const width = base.w * k0, height = base.h * k0;
  return { left: (areaWidth - width) / 2, top: (areaHeight - height) / 2, width, height, k: k0 * view.zoom };
}

// The map coordinate under a point of the screen.
function mapPointAt(clientX, clientY) {
  const area = $("preview-area").getBoundingClientRect();
  const box = displayBox();
  return [view.x0 + (clientX - area.left - box.left) / box.k, view.y0 + (clientY - area.top - box.top) / box.k];
}

let viewTimer = null, viewOnlyRender = false;
function viewChanged() {
  clampView();
  placePreview();
  $("view-reset").textContent = `×${view.zoom < 10 ? view.zoom.toFixed(1) : Math.round(view.zoom)}`;
  $("view-reset").disabled = viewIsReset();
  // Rendered once the view settles: the picture stays scaled in the meantime.
  clearTimeout(viewTimer);
  viewTimer = setTimeout(() => { viewOnlyRender = true; renderNow(); }, 250);
}

function resetView() {
  Object.assign(view, { zoom: 1, x0: 0, y0: 0 });
  viewChanged();
}

function setupViewControls() {
  const area = $("preview-area");
  area.addEventListener("wheel", (e) => {
    e.preventDefault();
    const before = mapPointAt(e.clientX, e.clientY);
    view.zoom *= Math.exp(-e.deltaY * 0.002);
    clampView();
    // The map point under the cursor stays under it.
    const after = mapPointAt(e.clientX, e.clientY);
    view.x0 += before[0] - after[0];
    view.y0 += before[1] - after[1];
    viewChanged();
  }, { passive: false });
  let drag = null;
  area.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || e.target.closest("button")) return;
    drag = { x: e.clientX, y: e.clientY };
    area.setPointerCapture(e.pointerId);
    area.classList.add("dragging");
  });
  area.addEventListener("pointermove", (e) => {
    showCursor(e);
    if (!drag) return;
    const k = displayBox().k;
    view.x0 -= (e.clientX - drag.x) / k;
    view.y0 -= (e.clientY - drag.y) / k;
    drag = { x: e.clientX, y: e.clientY };
    viewChanged();
  });
  const end = () => { drag = null; area.classList.remove("dragging"); };
  area.addEventListener("pointerup", end);
  area.addEventListener("pointercancel", end);
  area.addEventListener("dblclick", (e) => { if (!e.target.closest("button")) resetView(); });
  $("view-reset").addEventListener("click", resetView);
}

// The render for a preview of `side` pixels: the view's window (a finite map is shown whole at
// zoom 1, scaled to fit; an infinite one from its origin), with as many pixels as at zoom 1.
function renderRequest(side) {
  const info = state.info;
  const body = { source: state.source, seed: state.seed, parameters: state.values };
  const base = baseWindow(side);
  if (finiteMap()) {
    Object.assign(body, {
      scale: base.scale, map_width: state.mapWidth, map_height: state.mapHeight,
      width: Math.max(1, Math.floor(state.mapWidth * base.scale)), height: Math.max(1, Math.floor(state.mapHeight * base.scale)),
    });
  } else {
    Object.assign(body, { scale: base.scale, width: side, height: side });
    if (info && info.width.finite) body.map_width = state.mapWidth;
    if (info && info.height.finite) body.map_height = state.mapHeight;
  }
  if (!viewIsReset()) {
    clampView();
    body.scale = base.scale * view.zoom;
    let x = Math.round(view.x0 * body.scale), y = Math.round(view.y0 * body.scale);
    if (finiteMap()) {
      x = Math.min(Math.floor(state.mapWidth * body.scale) - body.width, Math.max(0, x));
      y = Math.min(Math.floor(state.mapHeight * body.scale) - body.height, Math.max(0, y));
    }
    body.origin = [x, y];
  }
  return body;
}

// ---- rendering -----------------------------------------------------------------------------
// Edits in the editor wait for a pause in typing (80 ms: short, so that an edit shows within
// about 150 ms; a render of half-typed text is cheap, being at most one at a time and stopped by
// the next); sliders render at once. Either way at most one render is in flight: a change during
// one is rendered right after it.
const EDIT_PAUSE_MS = 80;
// A script whose preview-size render took longer than this gets a coarse 128² pass first, to show
// something soon; a faster one goes straight to the preview size, which is then the sooner.
const COARSE_FIRST_AFTER_MS = 120;
let renderTimer = null, lastResult = null, inFlight = false, pending = false, lastFullMs = Infinity;
function scheduleRender() {
  clearTimeout(renderTimer);
  renderTimer = setTimeout(renderNow, EDIT_PAUSE_MS);
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

// A 128-pixel pass when renders are slow, then the preview size unless a newer change is waiting.
async function renderPasses() {
  // A new view of the same map goes straight to the preview size: the picture shown, scaled, is
  // better than a coarse pass.
  const coarse = !viewOnlyRender && lastFullMs > COARSE_FIRST_AFTER_MS && state.preview > 128;
  const sides = coarse ? [128, state.preview] : [state.preview];
  viewOnlyRender = false;
  for (const side of sides) {
    const started = performance.now();
    const request = renderRequest(side);
    const { status: code, json } = await renderApi(request);
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
    if (final) lastFullMs = ms;
    window.__lastPreviewBytes = json.bytes;
    window.__lastScale = json.geometry.scale;
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

function heightsOf(map) {
  return map ? map.heights : null;
}

// The selected map's picture of the kind shown, painted from its heights (kept until the map,
// kind or palette changes, so a tab switch or a cursor move does not repaint).
let pictureCache = { key: null, canvas: null };
function pictureOf(map, kind = state.kind) {
  const key = [kind, state.palette, state.stretch].join("|");
  if (pictureCache.map === map && pictureCache.key === key) return pictureCache.canvas;
  const canvas = document.createElement("canvas");
  canvas.width = map.width; canvas.height = map.height;
  const context = canvas.getContext("2d");
  const image = context.createImageData(map.width, map.height);
  paint(image, map.heights, map.width, map.height, {
    kind, palette: state.palette, stretch: state.stretch, min: map.min, max: map.max, scale: lastResult.geometry.scale,
  });
  context.putImageData(image, 0, 0);
  if (kind === state.kind) pictureCache = { map, key, canvas };
  return canvas;
}

// A palette (and stretch) chosen: repainted from the heights, kept for the next visit.
async function setPalette(name, stretch) {
  state.palette = name in PALETTES ? name : DEFAULT_PALETTE;
  state.stretch = !!stretch;
  keepPalette();
  if ($("palette-select")) $("palette-select").value = state.palette;
  if ($("stretch")) $("stretch").checked = state.stretch;
  await drawPreview();
  if (activeTab === "view3d") await update3D();
  // The server draws the Map tab's tiles and the step pictures in the palette too.
  if (activeTab === "slippy" && state.kind === "colored") slippy.refresh();
  if (debugView && state.kind === "colored") debugView.showStepImage();
}

// The histogram of the map's heights (bars in the palette's colours, the square root of the
// counts so that small classes show), its range, and sea level when the range holds it.
function drawLegend(map) {
  const legend = $("legend");
  legend.classList.toggle("empty", !map || !map.width);
  if (!map || !map.width) return;
  const canvas = $("histogram");
  const context = canvas.getContext("2d");
  const bins = canvas.width / 4;
  const counts = histogram(map.heights, map.min, map.max, bins);
  const top = Math.sqrt(Math.max(1, ...counts));
  const image = context.createImageData(1, 1);
  context.clearRect(0, 0, canvas.width, canvas.height);
  for (let k = 0; k < bins; k++) {
    const h = map.max > map.min ? map.min + ((k + 0.5) / bins) * (map.max - map.min) : map.min;
    paint(image, [h], 1, 1, { kind: "colored", palette: state.palette, stretch: state.stretch, min: map.min, max: map.max });
    context.fillStyle = `rgb(${image.data[0]},${image.data[1]},${image.data[2]})`;
    const bar = Math.round((Math.sqrt(counts[k]) / top) * canvas.height);
    context.fillRect(k * 4, canvas.height - bar, 3, bar);
  }
  const sea = map.max > map.min && map.min < 0 && map.max > 0 ? (-map.min / (map.max - map.min)) * canvas.width : null;
  if (sea != null) { context.fillStyle = "#79c0ff"; context.fillRect(Math.round(sea), 0, 1, canvas.height); }
  // The colour bar under the bars: the palette over the map's range (as painted).
  const stops = [];
  for (let i = 0; i <= 16; i++) {
    const h = map.min + (i / 16) * (map.max - map.min);
    paint(image, [h], 1, 1, { kind: "colored", palette: state.palette, stretch: state.stretch, min: map.min, max: map.max });
    stops.push(`rgb(${image.data[0]},${image.data[1]},${image.data[2]}) ${(i / 16) * 100}%`);
  }
  $("palette-bar").style.background = map.max > map.min ? `linear-gradient(to right, ${stops.join(", ")})` : paletteGradient(state.palette);
  $("range-min").textContent = `min ${map.min.toFixed(4)}`;
  $("range-max").textContent = `max ${map.max.toFixed(4)}`;
  $("range-sea").textContent = sea != null ? "sea 0" : "";
  // At the sea line, but never over the min and max labels at the ends.
  $("range-sea").style.left = sea != null ? `${Math.min(canvas.width - 105, Math.max(105, sea))}px` : "";
  legend.dataset.total = String(counts.reduce((a, b) => a + b, 0));
  legend.dataset.min = String(map.min);
  legend.dataset.max = String(map.max);
}

async function drawPreview() {
  const map = selectedMap();
  const canvas = $("preview-canvas");
  drawLegend(map);
  if (!map || !map.width) { canvas.width = 1; canvas.height = 1; return; }
  const picture = pictureOf(map);
  canvas.width = map.width; canvas.height = map.height;
  canvas.getContext("2d").drawImage(picture, 0, 0);
  placePreview();
  window.__previewPaints = (window.__previewPaints || 0) + 1;
}

// The picture over the part of the view it was rendered for (however small the render, or
// whichever window it was rendered for while the view moved on).
function placePreview() {
  const map = selectedMap();
  const canvas = $("preview-canvas");
  if (!map || !map.width) return;
  const scale = lastResult.geometry.scale;
  const box = displayBox();
  canvas.style.left = `${box.left + (map.x / scale - view.x0) * box.k}px`;
  canvas.style.top = `${box.top + (map.y / scale - view.y0) * box.k}px`;
  canvas.style.width = `${(map.width / scale) * box.k}px`;
  canvas.style.height = `${(map.height / scale) * box.k}px`;
}

// The map coordinate under the cursor and the height there, in the picture shown.
function showCursor(e) {
  const map = selectedMap();
  if (!map || !map.width) return;
  const [mx, my] = mapPointAt(e.clientX, e.clientY);
  const scale = lastResult.geometry.scale;
  const x = Math.floor(mx * scale - map.x), y = Math.floor(my * scale - map.y);
  const h = x >= 0 && y >= 0 && x < map.width && y < map.height ? map.heights[y * map.width + x] : null;
  $("cursor").textContent = `x ${mx.toFixed(1)}  y ${my.toFixed(1)}  height ${h == null ? "?" : h.toFixed(4)}`;
}

// ---- tabs, 3D, map -------------------------------------------------------------------------
let activeTab = "preview";
const view3d = new View3D($("gl-canvas"));
let slippy = null;

async function update3D() {
  const map = selectedMap();
  if (!map || !map.width) return;
  view3d.setMap(heightsOf(map), map.width, map.height, pictureOf(map, "colored"));
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
async function setKind(kind) {
  state.kind = kind;
  $("kind-select").value = kind;
  if (debugView) debugView.showStepImage();
  await drawPreview();
  if (activeTab === "slippy") slippy.refresh();
}
$("kind-select").addEventListener("change", (e) => setKind(e.target.value));
window.addEventListener("resize", () => { placePreview(); if (activeTab === "view3d") view3d.draw(); if (activeTab === "slippy") slippy.update(); });

function tileUrl(z, x, y) {
  const q = new URLSearchParams({ token, kind: state.kind, seed: state.seed, v: String(state.scriptVersion) });
  if (state.kind === "colored") q.set("palette", state.palette);
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
      <tr><td>wheel / drag / double-click on the preview</td><td>zoom about the cursor / pan / the whole map again</td></tr>
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
let debugView = null;
async function start() {
  const answer = await api("/api/session");
  session = answer.json;
  if (!answer.ok) { logDiagnostics(session.diagnostics || []); status("not connected"); return; }
  // The server's palettes, which its tiles and step pictures are drawn in too.
  setPalettes(session.palettes);
  document.title = `${session.name} · geogen studio`;
  $("file-name").textContent = session.name;
  $("save").disabled = !session.savable;
  state.source = session.source;
  // A script not written yet opens with the starter template, unsaved until the first save.
  state.saved = session.new ? "" : session.source;
  state.version = session.version;
  markDirty();
  restoreSettings();
  restorePalette();
  exportPane = setupExport($("export"), { api, state, session, log, logDiagnostics });
  slippy = new Slippy($("slippy"), {
    tileUrl, maxZoom: session.tiles.max_zoom, zoomScale1: session.tiles.zoom_scale_1,
    bounds: () => ({
      width: state.info && state.info.width.finite ? state.mapWidth : null,
      height: state.info && state.info.height.finite ? state.mapHeight : null,
    }),
    onCursor: (x, y) => { $("cursor").textContent = `x ${x.toFixed(1)}  y ${y.toFixed(1)}`; },
  });
  window.__studio = { state, slippy, view3d, setKind, setPalette, previewView: view, mapPointAt, get view() { return editor; }, lastHeights: () => heightsOf(selectedMap()), lastMap: () => selectedMap() };
  const editor = createEditor($("editor"), {
    doc: session.source, library: session.library, scriptInfo: () => state.info,
    check, onSave: save, runtime: () => state.runtime,
    onChange: (text) => { state.source = text; markDirty(); scheduleRender(); },
  });
  const debug = new Debugger($("debugger"), {
    token, editor: () => editor, request: () => renderRequest(state.preview), source: () => state.source, logDiagnostics,
    kind: () => state.kind, palette: () => state.palette,
  });
  window.__studio.debugger = debug;
  debugView = debug;
  window.__studio.resolveConflict = resolveConflict;
  editorView = editor;
  files = setupFiles({ api, dirty, name: () => $("file-name").textContent, load: loadDocument, directory: session.directory });
  window.__studio.files = files;
  const first = await check(session.source);
  if (first && !first.ok) logDiagnostics(first.diagnostics);
  setupHelp();
  setupViewControls();
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
