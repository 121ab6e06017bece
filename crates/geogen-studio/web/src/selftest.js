// A scripted walk through the page, run when the URL ends in #selftest (by
// scripts/studio-browser-test.sh in headless Chromium): break the script and see the marker at
// the right line with its code, fix it and see the preview change, move a slider and see the
// render follow, pan the infinite map and see its tiles load, export two formats and see them listed. The result is written into the
// page as JSON (<pre id="selftest">), which the script reads from the dumped DOM.
import { diagnosticCount, forEachDiagnostic } from "@codemirror/lint";
import { exportSelftest } from "./export.js";

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
    // Export through the pane.
    const exported = await exportSelftest();
    check("export wrote and listed the files", exported.files.join() === "main.png,main_colored.png" && exported.listed.length === 2, exported.listed.join(" | "));
  } catch (e) {
    check("no exception", false, e.message);
  }
  const pre = document.createElement("pre");
  pre.id = "selftest";
  pre.textContent = JSON.stringify({ passed: steps.every((s) => s.ok), steps });
  document.body.appendChild(pre);
}
