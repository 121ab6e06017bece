// The studio's latency figures, measured in the page when the URL ends in #latency or #latency=N
// (by scripts/studio-latency.sh in headless Chromium, in real time). Written into the page as JSON
// (<pre id="latency">):
//
// - edit → preview painted at 512²: N edits of the island example's line 19 (the noise factor),
//   each timed from the editor transaction to the frame after the 512² preview was read, painted
//   from its heights and drawn (two requestAnimationFrames after the draw). Everything a user waits
//   for: the editor's debounce, the coarse first render, the full render over HTTP, reading the
//   heights and painting;
// - the bytes of a 512² preview answer;
// - a slider drag at a 256² preview: the Size slider moved every 16 ms (a 60 Hz pointer) for
//   4 s; previews painted per second, of any size (the coarse 128² pass included) and at 256².

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
    out.preview_bytes = window.__lastPreviewBytes;

    // The drag, at a 256² preview.
    const size = document.querySelector("#render-settings select");
    size.value = "256";
    size.dispatchEvent(new Event("change"));
    await until("a 256² preview", () => window.__lastScale && Math.abs(window.__lastScale - 256 / studio.state.mapWidth) < 1e-9);
    await sleep(300);
    const slider = document.querySelector('input[data-param="Size"]');
    const lo = Number(slider.min), hi = Number(slider.max);
    const passes = window.__passes || 0, painted = window.__painted || 0;
    const seconds = 4, started = performance.now();
    for (let t = 0; performance.now() - started < seconds * 1000; t++) {
      // Back and forth over the slider's range, a full sweep a second.
      const phase = (t * 16) / 1000 % 2;
      slider.value = String(lo + (hi - lo) * (phase < 1 ? phase : 2 - phase));
      slider.dispatchEvent(new Event("input"));
      await sleep(16);
    }
    const elapsed = (performance.now() - started) / 1000;
    out.drag = {
      preview: 256, seconds: elapsed,
      painted_per_s: ((window.__passes || 0) - passes) / elapsed,
      full_size_per_s: ((window.__painted || 0) - painted) / elapsed,
    };
  } catch (e) {
    out.error = e.message;
  }
  const pre = document.createElement("pre");
  pre.id = "latency";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
