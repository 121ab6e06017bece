// Latency to screen, run when the URL ends in #latency or #latency=N (by
// scripts/studio-latency.sh in headless Chromium, in real time): N edits of the island example's
// line 19 (the noise factor), each timed from the editor transaction to the frame after the
// full-size preview was read, painted from its heights and drawn on the canvas (two requestAnimationFrames after the
// draw). The time includes everything a user waits for: the editor's 200 ms debounce, the small
// first render, the full-size render over HTTP, reading the heights and painting the picture. The figures are
// written into the page as JSON (<pre id="latency">).

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, test, timeout = 30000) {
  const end = Date.now() + timeout;
  while (Date.now() < end) { const v = test(); if (v) return v; await sleep(5); }
  throw new Error(`timed out waiting for ${what}`);
}

function percentile(sorted, p) {
  return sorted[Math.round((sorted.length - 1) * p)];
}

export async function latency(studio) {
  const n = Math.max(1, Math.min(200, Number(location.hash.split("=")[1]) || 30));
  const out = { edits: n, preview: studio.state.preview, times_ms: [] };
  try {
    const view = await until("the editor", () => studio.view);
    await until("the first render", () => window.__painted >= 1);
    const line = view.state.doc.line(19);
    if (!line.text.includes("noise.Multiply(")) throw new Error(`line 19 is not the island's noise line: ${line.text}`);
    // One edit to warm up, then n measured ones.
    for (let i = 0; i <= n; i++) {
      const painted = window.__painted;
      const at = view.state.doc.line(19);
      const factor = (0.3 + 0.01 * (i % 40)).toFixed(2);
      const started = performance.now();
      view.dispatch({ changes: { from: at.from, to: at.to, insert: `island.Add(noise.Multiply(${factor}));` } });
      await until(`the preview of edit ${i}`, () => window.__painted > painted);
      if (i > 0) out.times_ms.push(window.__paintedAt - started);
      await sleep(50);
    }
    const sorted = [...out.times_ms].sort((a, b) => a - b);
    out.median_ms = percentile(sorted, 0.5);
    out.p95_ms = percentile(sorted, 0.95);
    out.min_ms = sorted[0];
    out.max_ms = sorted[sorted.length - 1];
    out.server_render_ms = window.__lastRenderMs;
  } catch (e) {
    out.error = e.message;
  }
  const pre = document.createElement("pre");
  pre.id = "latency";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
