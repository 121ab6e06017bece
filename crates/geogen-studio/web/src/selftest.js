// A scripted walk through the page, run when the URL ends in #selftest (by
// scripts/studio-browser-test.sh in headless Chromium): break the script and see the marker at
// the right line with its code, fix it and see the preview change, move a slider and see the
// render follow, pan the infinite map and see its tiles load, step the debugger through the
// script and the renderer, export two formats and see them listed, resolve a save conflict. The result is written into the
// page as JSON (<pre id="selftest">), which the script reads from the dumped DOM.
import { diagnosticCount, forEachDiagnostic } from "@codemirror/lint";
import { exportSelftest, presetSelftest } from "./export.js";
import { triangulate } from "./view3d.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, test, timeout = 15000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) { const v = test(); if (v) return v; await sleep(50); }
  throw new Error(`timed out waiting for ${what}`);
}

// The steps of a walk, and `check` to add one.
function recorder() {
  const steps = [];
  return { steps, check: (name, ok, detail = "") => { steps.push({ name, ok: !!ok, detail: String(detail) }); } };
}

// A walk's result, where scripts/studio-browser-test.sh reads it (<pre id="selftest">).
function publish(steps) {
  const pre = document.createElement("pre");
  pre.id = "selftest";
  pre.textContent = JSON.stringify({ passed: steps.every((s) => s.ok), steps });
  document.body.appendChild(pre);
}

export async function selftest(studio) {
  const { steps, check } = recorder();
  try {
    const view = await until("the editor", () => studio.view);
    await until("the first render", () => window.__renders >= 1);
    const heights = () => studio.lastHeights();
    const before = heights();
    check("first render has heights", before && before.length > 0);
    check("the 512² preview answer is binary and at most 1 MB", studio.state.preview === 512 && window.__lastPreviewBytes > 512 * 512 * 2 && window.__lastPreviewBytes <= 1e6, `${window.__lastPreviewBytes} bytes`);
    // The pictures are painted in the page: hillshade and colored differ, without a new render.
    const pixels = () => { const c = document.getElementById("preview-canvas"); return c.getContext("2d").getImageData(0, 0, c.width, c.height).data; };
    const rendersBeforeKinds = window.__renders;
    const colored = pixels();
    await studio.setKind("hillshade");
    const shaded = pixels();
    const gray = shaded.every((v, i) => i % 4 === 3 || v === shaded[i - (i % 4)]);
    check("hillshade painted from the heights, without a render", window.__renders === rendersBeforeKinds && gray && shaded.some((v, i) => v !== colored[i]), `renders ${window.__renders - rendersBeforeKinds}`);
    await studio.setKind("colored");
    // Another palette, and stretched to the map's range: repainted, not rendered, and remembered.
    await studio.setPalette("viridis", false);
    const viridis = pixels();
    await studio.setPalette("viridis", true);
    const stretched = pixels();
    let keptPalette = null;
    try { keptPalette = JSON.parse(localStorage.getItem("geogen-studio:palette")); } catch (e) { /* none */ }
    check("a palette and its stretch repaint the preview without a render and are kept",
      window.__renders === rendersBeforeKinds && viridis.some((v, i) => v !== colored[i]) && stretched.some((v, i) => v !== viridis[i]) && keptPalette && keptPalette.palette === "viridis" && keptPalette.stretch === true,
      JSON.stringify(keptPalette));
    const legend = document.getElementById("legend");
    const shown = studio.lastMap();
    check("the histogram counts every pixel and shows the range and sea level",
      Number(legend.dataset.total) === shown.width * shown.height && document.getElementById("range-min").textContent === `min ${shown.min.toFixed(4)}` && document.getElementById("range-sea").textContent === "sea 0",
      `${legend.dataset.total} of ${shown.width}×${shown.height}, ${document.getElementById("range").textContent}`);
    await studio.setPalette("land and water", false);
    // Zoom about a point with the wheel: the old picture stays, scaled, until the render of the
    // window arrives at the higher scale; the readout reports the same map point under the cursor.
    const previewArea = document.getElementById("preview-area");
    const canvas = document.getElementById("preview-canvas");
    const spot = (() => { const b = canvas.getBoundingClientRect(); return { clientX: Math.round(b.left + b.width * 0.6), clientY: Math.round(b.top + b.height * 0.4) }; })();
    const readout = () => {
      previewArea.dispatchEvent(new PointerEvent("pointermove", { ...spot, bubbles: true }));
      const m = document.getElementById("cursor").textContent.match(/x (-?[\d.]+)\s+y (-?[\d.]+)\s+height (\S+)/);
      return m ? { x: Number(m[1]), y: Number(m[2]), h: m[3] } : null;
    };
    const here = readout();
    const scaleBefore = window.__lastScale, widthBefore = canvas.getBoundingClientRect().width, rendersBeforeZoom = window.__renders;
    previewArea.dispatchEvent(new WheelEvent("wheel", { ...spot, deltaY: -700, bubbles: true, cancelable: true }));
    const widthScaled = canvas.getBoundingClientRect().width;
    check("the wheel zooms at once, the old picture scaled until the render", studio.previewView.zoom > 3 && widthScaled > widthBefore * 3 && window.__renders === rendersBeforeZoom,
      `zoom ${studio.previewView.zoom.toFixed(2)}, picture ${Math.round(widthBefore)} -> ${Math.round(widthScaled)} px`);
    await until("the zoomed render", () => window.__renders > rendersBeforeZoom && window.__lastScale > scaleBefore * 3);
    const there = readout();
    check("after the zoomed render the readout gives the same map point under the cursor",
      here && there && Math.abs(here.x - there.x) <= 0.2 && Math.abs(here.y - there.y) <= 0.2 && there.h !== "?" && Math.abs(Number(there.h) - Number(here.h)) < 0.05,
      `${JSON.stringify(here)} -> ${JSON.stringify(there)} at scale ${window.__lastScale.toFixed(3)}`);
    // Drag pans; a double click resets to the whole map at its first scale.
    const x0 = studio.previewView.x0;
    previewArea.dispatchEvent(new PointerEvent("pointerdown", { ...spot, button: 0, pointerId: 1, bubbles: true }));
    previewArea.dispatchEvent(new PointerEvent("pointermove", { clientX: spot.clientX - 60, clientY: spot.clientY, pointerId: 1, bubbles: true }));
    previewArea.dispatchEvent(new PointerEvent("pointerup", { pointerId: 1, bubbles: true }));
    const panned = studio.previewView.x0 - x0;
    const rendersBeforeReset = window.__renders;
    previewArea.dispatchEvent(new MouseEvent("dblclick", { ...spot, bubbles: true }));
    await until("the reset render", () => window.__renders > rendersBeforeReset && Math.abs(window.__lastScale - scaleBefore) < 1e-9);
    check("a drag pans and a double click resets the view", panned > 0 && studio.previewView.zoom === 1 && studio.previewView.x0 === 0 && document.getElementById("view-reset").disabled,
      `panned ${panned.toFixed(1)} map units`);
    // Break line 19: `island.Add(noise.Multiply(0.5));` loses its closing parenthesis.
    const line = view.state.doc.line(19);
    const broken = line.text.replace("));", ");");
    view.dispatch({ changes: { from: line.from, to: line.to, insert: broken } });
    await until("a diagnostic", () => diagnosticCount(view.state) > 0);
    let marker = null;
    forEachDiagnostic(view.state, (d, from) => { if (!marker) marker = { line: view.state.doc.lineAt(from).number, code: d.source, message: d.message }; });
    check("syntax error marked", marker && marker.code && marker.code.startsWith("GGE1"), JSON.stringify(marker));
    check("marker on line 19, the broken line", marker && marker.line === 19, JSON.stringify(marker));
    // Fix it, with another factor: the preview must change.
    const renders = window.__renders;
    const fixed = view.state.doc.line(19);
    view.dispatch({ changes: { from: fixed.from, to: fixed.to, insert: "island.Add(noise.Multiply(0.9));" } });
    await until("the diagnostic to go", () => diagnosticCount(view.state) === 0);
    await until("a render after the fix", () => window.__renders > renders);
    const after = heights();
    check("preview changed after the fix", after && before && after.some((h, i) => h !== before[i]));
    // Move a slider.
    const slider = document.querySelector('input[data-param="Size"]');
    const rendersBefore = window.__renders;
    slider.value = String(Number(slider.min));
    slider.dispatchEvent(new Event("input"));
    await until("a render after the slider", () => window.__renders > rendersBefore);
    const slid = heights();
    check("render follows the slider", slid && slid.some((h, i) => h !== after[i]), `Size=${studio.state.values.Size}`);
    // Drag the slider for 1.5 s (an input event every 50 ms, no release): previews arrive while
    // dragging, at most one render in flight.
    const passesBefore = window.__passes || 0;
    const lo = Number(slider.min), hi = Number(slider.max);
    for (let i = 0; i <= 30; i++) {
      slider.value = String(lo + (hi - lo) * (i / 30));
      slider.dispatchEvent(new Event("input"));
      await sleep(50);
    }
    const during = (window.__passes || 0) - passesBefore;
    check("a slider drag renders while dragging", during >= 3, `${during} previews during the drag`);
    await sleep(1000);
    // A runtime error is underlined at the argument that caused it, and the console shows only it.
    const good = view.state.doc.line(19);
    const goodText = good.text;
    view.dispatch({ changes: { from: good.from, to: good.to, insert: 'island.Add(noise.Multiply("big"));' } });
    const runtime = await until("the runtime error underlined", () => {
      let found = null;
      forEachDiagnostic(view.state, (d, from, to) => { if (d.source === "GGE2101") found = view.state.doc.sliceString(from, to); });
      return found;
    });
    check("a runtime error is underlined at its argument", runtime === '"big"', runtime);
    const consoleLines = [...document.querySelectorAll("#console .error")].map((e) => e.textContent);
    check("the console holds the failed run's error once", consoleLines.length === 1 && consoleLines[0].includes("GGE2101"), consoleLines.join(" | "));
    check("unsaved changes are marked", document.getElementById("file-name").classList.contains("dirty"));
    const fixedAgain = view.state.doc.line(19);
    view.dispatch({ changes: { from: fixedAgain.from, to: fixedAgain.to, insert: goodText } });
    await until("the runtime error to go", () => diagnosticCount(view.state) === 0);
    // The help panel opens with F1.
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "F1", bubbles: true }));
    const help = await until("the help panel", () => document.querySelector("dialog#help[open]"));
    check("F1 opens the help with the shortcuts", help.textContent.includes("Ctrl") && help.textContent.includes("save"));
    help.querySelector("button").click();
    // Pan the map view (the island is a finite 1000² map: 500² pixels at zoom 7, tiles 0 and 1).
    document.querySelector('#tabs button[data-tab="slippy"]').click();
    await sleep(100);
    const slippy = studio.slippy;
    const centre = [...slippy.center];
    slippy.center = [centre[0] + 150, centre[1] + 90];
    slippy.update();
    const imgs = () => [...document.querySelectorAll("#slippy .tiles:not(.previous) img")];
    const names = () => imgs().map((i) => i.src.split("?")[0].split("/tiles/")[1]);
    await until("tiles to load", () => imgs().length > 0 && imgs().every((i) => i.complete && i.naturalWidth === 256));
    check("panned tiles loaded, only over the finite map", imgs().length > 0 && names().every((n) => /^main\/7\/[01]\/[01]\.png$/.test(n)), names().join(" "));
    // Zoom in about a point: the old tiles stay, scaled, until the new ones are there.
    const area = document.getElementById("slippy").getBoundingClientRect();
    document.getElementById("slippy").dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: area.left + 100, clientY: area.top + 80, bubbles: true, cancelable: true }));
    const kept = document.querySelector("#slippy .tiles.previous img");
    check("on a zoom the old tiles stay, scaled, under the new", slippy.zoom === 8 && kept && document.querySelector("#slippy .tiles.previous").style.transform.includes("scale(2)"), `zoom ${slippy.zoom}`);
    await until("the zoomed tiles to load", () => imgs().length > 0 && imgs().every((i) => i.complete) && !document.querySelector("#slippy .tiles.previous"));
    check("the scaled tiles go once the new ones loaded", names().every((n) => /^main\/8\/[0-3]\/[0-3]\.png$/.test(n)), names().join(" "));
    // The tiles follow the palette: the server draws them in it.
    const tilePixel = (img) => { const c = document.createElement("canvas"); c.width = c.height = 256; const g = c.getContext("2d"); g.drawImage(img, 0, 0); return [...g.getImageData(0, 0, 256, 256).data]; };
    const tilesBefore = imgs().map(tilePixel);
    await studio.setPalette("arid", false);
    await until("the arid tiles to load", () => imgs().length > 0 && imgs().every((i) => i.complete && i.src.includes("palette=arid")));
    const tilesAfter = imgs().map(tilePixel);
    check("the Map tab's tiles are drawn in the chosen palette", tilesAfter.length === tilesBefore.length && tilesAfter.some((t, k) => t.some((v, i) => v !== tilesBefore[k][i])), imgs()[0].src.split("?")[1].split("&").filter((p) => p.startsWith("palette")).join());
    await studio.setPalette("land and water", false);
    // Step the debugger: start, a few instructions, a line (a variable appears), continue to the
    // end, then step the renderer and see the step's map load.
    document.querySelector('#tabs button[data-tab="debugger"]').click();
    const dbg = studio.debugger;
    const press = async (key) => {
      const before = window.__debugState;
      document.querySelector(`#debugger button[data-debug="${key}"]`).click();
      await until(`the debugger to answer ${key}`, () => window.__debugState !== before && !dbg.busy);
      return window.__debugState;
    };
    let s = await press("start");
    check("debugger started at the first instruction", s.status === "ready" && s.at && s.at.line === 14, JSON.stringify(s.at));
    for (let i = 0; i < 3; i++) s = await press("instruction");
    check("three instructions stepped", s.instructions === 3, s.instructions);
    const highlighted = () => document.querySelector("#editor .cm-debug-current");
    check("current line highlighted in the editor", highlighted() && highlighted().textContent.includes("radius"), highlighted() && highlighted().textContent);
    const hasVar = (st, name) => st.scopes.some((sc) => sc.variables.some((v) => v.name === name));
    const hadRadius = hasVar(s, "radius");
    s = await press("line");
    const radius = [...document.querySelectorAll("#debugger tr[data-name=radius] .dbg-value")].map((e) => e.textContent)[0];
    check("a line later: line 15 and `radius` set", s.at.line === 15 && !hadRadius && radius && Number(radius) > 0, `line ${s.at.line}, radius ${radius}`);
    s = await press("continue");
    const listed = document.querySelectorAll("#debugger .dbg-sequence li").length;
    check("continued to the end with the rendering sequence", s.status === "finished" && listed >= 5 && listed === s.sequence_length, `${s.status}, ${listed} steps`);
    s = await press("render");
    const img = document.querySelector("#debugger .dbg-image");
    await until("the step's map", () => img.complete && img.naturalWidth > 0);
    const current = document.querySelector("#debugger .dbg-sequence li.current");
    check("renderer stepped: the step's map loaded and the step highlighted", img.naturalWidth > 0 && current && current.dataset.index === "0", `${img.naturalWidth}x${img.naturalHeight} ${current && current.textContent}`);
    // The "show" selector draws the step's map as it draws the preview: each kind a different picture.
    const stepPixels = async (kind) => {
      const kindSelect = document.getElementById("kind-select");
      kindSelect.value = kind;
      kindSelect.dispatchEvent(new Event("change"));
      await until(`the step's ${kind} picture`, () => img.dataset.kind === kind && img.src.includes(`kind=${kind}`) && img.complete && img.naturalWidth > 0);
      const c = document.createElement("canvas");
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      const context = c.getContext("2d");
      context.drawImage(img, 0, 0);
      return context.getImageData(0, 0, c.width, c.height).data;
    };
    const stepColored = await stepPixels("colored"), stepGray = await stepPixels("gray"), stepShade = await stepPixels("hillshade");
    const tinted = stepColored.some((v, i) => i % 4 === 0 && (v !== stepColored[i + 1] || v !== stepColored[i + 2]));
    const differs = (a, b) => a.length !== b.length || a.some((v, i) => v !== b[i]);
    check("the show selector changes the step's picture (colored, grayscale, hillshade)", tinted && differs(stepGray, stepShade) && differs(stepColored, stepGray), `colored tinted ${tinted}`);
    // Export through the pane.
    const exported = await exportSelftest();
    check("export wrote and listed the files", exported.files.join() === "main.png,main_colored.png" && exported.listed.length === 2, exported.listed.join(" | "));
    const preset = await presetSelftest();
    check("a Godot preset export wrote the EXR and its sidecar", preset.files.join() === "main.exr,main.godot.json", preset.files.join(" | "));
    // A save conflict (the file changed on disk): both texts shown, the file's taken.
    const mine = view.state.doc.toString();
    const disk = { source: "// changed on disk\n" + mine, version: "selftest-version" };
    studio.resolveConflict(disk);
    const dialog = await until("the conflict dialog", () => document.querySelector("dialog.conflict[open]"));
    const texts = [...dialog.querySelectorAll("textarea")].map((t) => t.value);
    check("a save conflict shows both texts", texts.length === 2 && texts[0] === mine && texts[1] === disk.source);
    dialog.querySelector('button[data-choice="theirs"]').click();
    check("taking the file's text puts it in the editor", view.state.doc.toString() === disk.source && studio.state.version === disk.version && !document.querySelector("dialog.conflict"));
    await filesSelftest(studio, check);
    await view3dSelftest(studio, check);
  } catch (e) {
    check("no exception", false, e.message);
  }
  publish(steps);
}

// The header's file actions on the walk's directory (a copy of the island example): Open lists
// it, New makes a script from the template (asking first about the walk's unsaved edits) and
// refuses a taken name with its code, opening switches the document and each script keeps its
// own parameter values, an example opens unsaved and saving it asks for a name.
async function filesSelftest(studio, check) {
  const $ = (id) => document.getElementById(id);
  const view = studio.view;
  const name = () => $("file-name").textContent;
  const dirty = () => $("file-name").classList.contains("dirty");
  const shown = (what, selector) => until(what, () => document.querySelector(selector));
  const switched = async (action) => {
    const before = window.__documents || 0;
    await action();
    await until("the document to switch", () => (window.__documents || 0) > before);
    await until("the document's render", () => window.__renderedSource === view.state.doc.toString());
  };
  const openMenu = async (buttonId, menuId) => {
    const filled = Number($(menuId).dataset.filled || 0);
    $(buttonId).click();
    return until(`the ${menuId}`, () => Number($(menuId).dataset.filled || 0) > filled && $(menuId));
  };
  let menu = await openMenu("open-button", "open-menu");
  const listed = [...menu.querySelectorAll("button[data-file]")].map((b) => b.dataset.file);
  const current = menu.querySelector("button.current");
  check("Open lists the directory's scripts, the current one marked", listed.join() === "island.ggs" && current && current.dataset.file === "island.ggs", listed.join(" "));
  document.body.click();
  // New, over the walk's unsaved edits: asked to discard them first, then for a name.
  const hadEdits = dirty();
  $("new-button").click();
  const discard = await shown("the unsaved-changes question", 'dialog.ask[open] button[data-choice="discard"]');
  discard.click();
  let named = await shown("the name dialog", "dialog.ask.name[open]");
  named.querySelector("input").value = "walk-new";
  await switched(() => named.querySelector('button[value="create"]').click());
  const heights = studio.lastHeights();
  const land = heights ? heights.filter((h) => h > 0).length / heights.length : 0;
  check("New asks before leaving unsaved edits", hadEdits);
  check("New makes walk-new.ggs from the template: it renders land and sea, with its sliders", name() === "walk-new.ggs" && !dirty() && view.state.doc.toString().includes("yield") && land > 0.1 && land < 0.9 && document.querySelector('input[data-param="Hilliness"]'), `${name()}, land ${(land * 100).toFixed(0)}%`);
  $("new-button").click();
  named = await shown("the name dialog", "dialog.ask.name[open]");
  named.querySelector("input").value = "walk-new.ggs";
  named.querySelector('button[value="create"]').click();
  await until("the refusal", () => named.dataset.refused);
  check("New refuses a taken name with its code, in the dialog", named.dataset.refused === "GGE4027" && named.querySelector(".refusal").textContent.includes("already exists"), named.dataset.refused);
  named.querySelector('button[value="cancel"]').click();
  // Each script keeps its own parameter values.
  const slider = document.querySelector('input[data-param="Hilliness"]');
  slider.value = slider.min;
  slider.dispatchEvent(new Event("input"));
  const kept = studio.state.values.Hilliness;
  const openFile = async (file) => {
    menu = await openMenu("open-button", "open-menu");
    await switched(() => menu.querySelector(`button[data-file="${file}"]`).click());
  };
  await openFile("island.ggs");
  check("Open switches to island.ggs with its own parameters", name() === "island.ggs" && !dirty() && view.state.doc.toString().includes("Island") && document.querySelector('input[data-param="Size"]') && !document.querySelector('input[data-param="Hilliness"]'), name());
  await openFile("walk-new.ggs");
  check("walk-new.ggs opens again with its Hilliness kept", studio.state.values.Hilliness === kept && Number(document.querySelector('input[data-param="Hilliness"]').value) === Number(slider.min), `${studio.state.values.Hilliness} (kept ${kept})`);
  // An example opens unsaved; saving asks for a name, and a taken one is refused.
  const openExample = async () => {
    menu = await openMenu("examples-button", "examples-menu");
    await switched(() => menu.querySelector('button[data-example="dunes.ggs"]').click());
  };
  await openExample();
  check("an example opens as an unsaved document and renders", name() === "dunes.ggs (example)" && dirty() && view.state.doc.toString().includes("Dunes") && studio.lastHeights(), name());
  $("seed").value = "77";
  $("seed").dispatchEvent(new Event("change"));
  $("save").click();
  named = await shown("the save-as dialog", "dialog.ask.name[open]");
  const suggested = named.querySelector("input").value;
  const before = window.__documents;
  named.querySelector('button[value="create"]').click();
  await until("the saved example", () => window.__documents > before);
  check("saving the example asks for a name and creates the script, its seed kept", suggested === "dunes" && name() === "dunes.ggs" && !dirty() && studio.state.seed === "77", `${suggested} → ${name()}, seed ${studio.state.seed}`);
  await openExample();
  $("save").click();
  named = await shown("the save-as dialog", "dialog.ask.name[open]");
  named.querySelector('button[value="create"]').click();
  await until("the refusal", () => named.dataset.refused);
  check("saving an example under a taken name is refused, nothing replaced", named.dataset.refused === "GGE4027", named.dataset.refused);
  named.querySelector('button[value="cancel"]').click();
}

// The 3D view: the relief and the sun change the picture, Shift-drag pans, reset view brings the
// first view back exactly, and a terrace edge running diagonally across the mesh is cut along
// its line (two thin triangles a row), not into a sawtooth (four a row).
async function view3dSelftest(studio, check) {
  const $ = (id) => document.getElementById(id);
  document.querySelector('#tabs button[data-tab="view3d"]').click();
  const view = studio.view3d;
  await until("the 3D mesh", () => view.mesh);
  const first = view.digest();
  check("the 3D view draws the map", first && first.brightness > 5, JSON.stringify(first));
  const set = (id, value) => { $(id).value = String(value); $(id).dispatchEvent(new Event("input")); };
  set("view3d-relief", 1);
  const raised = view.digest();
  check("relief ×2 changes the picture", view.exaggeration === 2 && raised.hash !== first.hash && $("view3d-relief-value").textContent === "×2.00", $("view3d-relief-value").textContent);
  set("view3d-azimuth", 135);
  set("view3d-elevation", 20);
  const lit = view.digest();
  check("moving the sun changes the shading", lit.hash !== raised.hash && Math.abs(lit.brightness - raised.brightness) > 0.5, `${raised.brightness.toFixed(1)} → ${lit.brightness.toFixed(1)}`);
  const canvas = $("gl-canvas");
  const box = canvas.getBoundingClientRect();
  const at = (dx) => ({ clientX: box.left + 200 + dx, clientY: box.top + 200, pointerId: 1, shiftKey: true, button: 0, bubbles: true });
  canvas.dispatchEvent(new PointerEvent("pointerdown", at(0)));
  canvas.dispatchEvent(new PointerEvent("pointermove", at(80)));
  canvas.dispatchEvent(new PointerEvent("pointerup", at(80)));
  const panned = view.digest();
  check("Shift-drag pans the view", view.target.some((v) => v !== 0) && view.yaw === 0.7 && panned.hash !== lit.hash, view.target.map((v) => v.toFixed(2)).join(","));
  $("view3d-reset").click();
  check("reset view brings the first view back", view.target.every((v) => v === 0) && view.digest().hash === lit.hash);
  // A diagonal terrace edge (high where x ≥ y) on a 64² grid.
  const side = 64, heights = new Float32Array(side * side);
  for (let y = 0; y < side; y++) for (let x = 0; x < side; x++) heights[y * side + x] = x >= y ? 0.5 : 0;
  const indices = triangulate(heights, side, side);
  let cliff = 0;
  for (let i = 0; i < indices.length; i += 3) {
    const levels = new Set([indices[i], indices[i + 1], indices[i + 2]].map((v) => heights[v]));
    if (levels.size > 1) cliff++;
  }
  // Two triangles a row at most along a straight edge; a fixed diagonal across it makes four.
  check("a diagonal terrace edge is cut along its line, not into a sawtooth", cliff > 0 && cliff <= 2 * (side - 1), `${cliff} triangles span the edge (a sawtooth: about ${4 * (side - 1)})`);
  document.querySelector('#tabs button[data-tab="preview"]').click();
}

// The studio started on a script that does not exist yet (URL ending in #new-file): the editor
// holds the starter template, marked unsaved, which renders land and sea without an error, and
// the first Save writes it (scripts/studio-browser-test.sh then reads the file).
export async function newFileWalk(studio) {
  const { steps, check } = recorder();
  try {
    const view = await until("the editor", () => studio.view);
    await until("the first render", () => window.__renderedSource === view.state.doc.toString());
    const name = document.getElementById("file-name");
    const text = view.state.doc.toString();
    check("a missing script opens with the starter template, marked unsaved", name.textContent === "new.ggs" && name.classList.contains("dirty") && text.includes("metadata") && text.includes("yield"), name.textContent);
    const heights = studio.lastHeights();
    const land = heights ? heights.filter((h) => h > 0).length / heights.length : 0;
    const errors = document.querySelectorAll("#console .error").length;
    check("the template renders land and sea without an error", land > 0.1 && land < 0.9 && errors === 0 && document.querySelector('input[data-param="Hilliness"]'), `land ${(land * 100).toFixed(0)}%, ${errors} errors`);
    document.getElementById("save").click();
    await until("the save", () => !name.classList.contains("dirty"));
    check("the first save writes it", document.getElementById("status").textContent === "saved");
  } catch (e) {
    check("no exception", false, e.message);
  }
  publish(steps);
}

// A state to take a picture of (URL ending in #shot-3d, #shot-open, #shot-examples or
// #shot-new): the 3D view with relief ×2 and a low southern sun, or a menu or the New dialog open.
export async function shot(studio, name) {
  const $ = (id) => document.getElementById(id);
  await until("the first render", () => window.__renders >= 1);
  if (name === "3d") {
    // The dry plain of the mesa reads as one in the arid palette.
    await studio.setPalette("arid");
    document.querySelector('#tabs button[data-tab="view3d"]').click();
    await until("the 3D mesh", () => studio.view3d.mesh);
    for (const [id, value] of [["view3d-relief", 1], ["view3d-azimuth", 200], ["view3d-elevation", 25]]) {
      $(id).value = String(value);
      $(id).dispatchEvent(new Event("input"));
    }
  }
  if (name === "open" || name === "examples") $(`${name}-button`).click();
  if (name === "new") {
    $("new-button").click();
    const discard = await until("a question", () => document.querySelector("dialog.ask[open]"));
    if (discard.querySelector('button[data-choice="discard"]')) discard.querySelector('button[data-choice="discard"]').click();
    const input = await until("the name dialog", () => document.querySelector("dialog.ask.name[open] input"));
    input.value = "hills";
  }
}

// The page at the window's size (URL ending in #layout; the browser test opens it at 1024×768):
// the header's controls, the three columns and the panels inside them lie within the window and
// overlap nothing they should not.
export async function layoutCheck() {
  await until("the first render", () => window.__renders >= 1);
  const box = (el) => el.getBoundingClientRect();
  const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const named = (selector) => [...document.querySelectorAll(selector)].filter((e) => e.offsetParent !== null);
  const problems = [];
  const pairs = (elements, what) => {
    for (let i = 0; i < elements.length; i++) {
      for (let j = i + 1; j < elements.length; j++) {
        if (overlap(box(elements[i]), box(elements[j]))) problems.push(`${what}: ${label(elements[i])} overlaps ${label(elements[j])}`);
      }
    }
  };
  const label = (e) => e.id ? `#${e.id}` : `${e.tagName.toLowerCase()}${e.textContent ? ` "${e.textContent.trim().slice(0, 20)}"` : ""}`;
  pairs(named("header > *"), "header");
  pairs(named("#left, #middle, #params"), "columns");
  pairs(named("#tabs > *"), "toolbar");
  pairs([document.getElementById("preview-canvas"), ...named("#params .param, #params h2")], "preview and panel");
  pairs(named("#params .param"), "panel");
  const width = window.innerWidth, height = window.innerHeight;
  for (const e of named("header > *, #tabs > *, #left, #middle, #params")) {
    const b = box(e);
    if (b.right > width + 1 || b.bottom > height + 1) problems.push(`${label(e)} leaves the window (${Math.round(b.right)}×${Math.round(b.bottom)})`);
  }
  // No column scrolls sideways (something in it wider than the column).
  for (const e of named("#left, #params")) {
    if (e.scrollWidth > e.clientWidth + 1) problems.push(`${label(e)} scrolls sideways (${e.scrollWidth} in ${e.clientWidth})`);
  }
  // Nothing of the toolbar is cut off by its column.
  const bar = box(document.getElementById("tabs"));
  for (const e of named("#tabs > *")) {
    const b = box(e);
    if (b.left < bar.left - 1 || b.right > bar.right + 1 || b.bottom > bar.bottom + 1) problems.push(`${label(e)} is cut off by the toolbar`);
  }
  // The 3D view's controls: inside the view, none over another.
  document.querySelector('#tabs button[data-tab="view3d"]').click();
  pairs(named(".view3d-controls > *, .view3d-hint"), "3D controls");
  const views = box(document.getElementById("views"));
  for (const e of named(".view3d-controls > *, .view3d-hint")) {
    const b = box(e);
    if (b.left < views.left - 1 || b.right > views.right + 1 || b.top < views.top - 1 || b.bottom > views.bottom + 1) problems.push(`${label(e)} leaves the 3D view`);
  }
  document.querySelector('#tabs button[data-tab="preview"]').click();
  // The cursor readout must not change the toolbar's height (it used to make it jump).
  const before = bar.height;
  document.getElementById("cursor").textContent = "x 1000.0  y 1000.0  height -0.1234";
  if (Math.abs(box(document.getElementById("tabs")).height - before) > 1) problems.push("the cursor readout moves the toolbar");
  publish([{ name: `layout at ${width}×${height}: nothing overlaps or leaves the window`, ok: problems.length === 0, detail: problems.join("; ") }]);
}

// The debugger as docs/pictures/studio_debugger.png shows it (URL ending in #debug-demo): stopped
// on line 19 of the island example by a breakpoint, with line 20's breakpoint set too.
export async function debugDemo(studio) {
  document.querySelector('#tabs button[data-tab="debugger"]').click();
  await until("the editor", () => studio.view);
  const dbg = studio.debugger;
  for (const n of [19, 20]) dbg.toggleBreakpointLine(n);
  await dbg.start();
  await dbg.continue();
}
