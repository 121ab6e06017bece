// A scripted walk through the page, run when the URL ends in #selftest (by
// scripts/studio-browser-test.sh in headless Chromium): break the script and see the marker at
// the right line with its code, fix it and see the preview change, move a slider and see the
// render follow, pan the infinite map and see its tiles load, step the debugger through the
// script and the renderer, export two formats and see them listed, resolve a save conflict. The result is written into the
// page as JSON (<pre id="selftest">), which the script reads from the dumped DOM.
import { diagnosticCount, forEachDiagnostic } from "@codemirror/lint";
import { exportSelftest, presetSelftest } from "./export.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, test, timeout = 15000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) { const v = test(); if (v) return v; await sleep(50); }
  throw new Error(`timed out waiting for ${what}`);
}

export async function selftest(studio) {
  const steps = [];
  const check = (name, ok, detail = "") => { steps.push({ name, ok: !!ok, detail: String(detail) }); };
  try {
    const view = await until("the editor", () => studio.view);
    await until("the first render", () => window.__renders >= 1);
    const heights = () => studio.lastHeights();
    const before = heights();
    check("first render has heights", before && before.length > 0);
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
    // Pan the map view.
    document.querySelector('#tabs button[data-tab="slippy"]').click();
    await sleep(100);
    const slippy = studio.slippy;
    const centre = [...slippy.center];
    slippy.center = [centre[0] + 700, centre[1] + 300];
    slippy.update();
    const imgs = () => [...document.querySelectorAll("#slippy img")];
    await until("tiles to load", () => imgs().length > 0 && imgs().every((i) => i.complete && i.naturalWidth === 256));
    check("panned tiles loaded", imgs().length > 0, imgs().map((i) => i.src.split("?")[0].split("/tiles/")[1]).join(" "));
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
  } catch (e) {
    check("no exception", false, e.message);
  }
  const pre = document.createElement("pre");
  pre.id = "selftest";
  pre.textContent = JSON.stringify({ passed: steps.every((s) => s.ok), steps });
  document.body.appendChild(pre);
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
