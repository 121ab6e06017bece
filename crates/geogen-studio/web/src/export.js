// The Export pane: the render settings and formats of `geogen render`, written by the server
// into its export directory (POST /api/export, docs/studio.md). A full-size render of the text
// being edited with the parameters and seed of the preview; the files written are listed with
// their sizes. Files already in the directory are replaced only after the user agrees.

const DERIVED = new Set(["normal", "slope", "curvature", "splat", "glb", "obj"]);

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function human(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1 << 20) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

// `host`: { api, state, session, log, logDiagnostics }.
export function setupExport(box, host) {
  const { api, state, session } = host;
  const info = session.export || { dir: "", formats: ["png16"] };
  const chosen = new Set(["png16"]);
  const formats = el("div", { className: "formats" });
  for (const name of info.formats) {
    const input = el("input", { type: "checkbox", checked: chosen.has(name), value: name });
    input.dataset.format = name;
    input.addEventListener("change", () => { input.checked ? chosen.add(name) : chosen.delete(name); showDerived(); });
    formats.append(el("label", {}, input, name));
  }
  const number = (id, value, step = "any") => el("input", { type: "number", id, value, step });
  const width = number("export-width", "", 1), height = number("export-height", "", 1);
  const scale = number("export-scale", 1), ox = number("export-ox", 0, 1), oy = number("export-oy", 0, 1);
  const pixelSize = number("export-pixel-size", 1), heightScale = number("export-height-scale", 100);
  const derived = el("div", { className: "derived" },
    el("label", {}, "pixel size (m) ", pixelSize), el("label", {}, "height scale (m) ", heightScale));
  // As `--preset`: the engine's sizes, its normal convention and a sidecar JSON per map.
  const preset = el("select", { id: "export-preset" },
    ...["", "unity", "unreal", "godot"].map((p) => el("option", { value: p, textContent: p || "no engine preset" })));
  // As `--mesh-triangles` / `--mesh-error` (one of them) and `--splat`.
  const meshMode = el("select", { id: "export-mesh-mode" },
    el("option", { value: "", textContent: "every pixel a vertex" }),
    el("option", { value: "triangles", textContent: "at most N triangles" }),
    el("option", { value: "error", textContent: "at most E metres off" }));
  const meshValue = number("export-mesh-value", "", "any");
  const mesh = el("div", { className: "param row mesh" }, el("label", {}, "mesh ", meshMode), meshValue);
  const splat = el("input", { type: "text", id: "export-splat", placeholder: "-1..0; 0..0.5/0..30; @rock" });
  const splatRow = el("div", { className: "param row splat", title: "up to 4 layers: heights/slope degrees or @MAP (a mask the script yields)" },
    el("label", {}, "splat layers ", splat));
  const button = el("button", { id: "export-run", textContent: "Export" });
  const progress = el("span", { id: "export-progress" });
  const result = el("ul", { id: "export-result" });
  box.append(
    el("div", { className: "param", title: "the files go into this directory" }, el("span", { className: "dir", textContent: info.dir })),
    el("div", { className: "param row" }, el("label", {}, "engine ", preset)),
    el("div", { className: "param" }, el("span", { textContent: "formats" }), formats),
    el("div", { className: "param row" }, el("label", {}, "width ", width), el("label", {}, "height ", height)),
    el("div", { className: "param row" }, el("label", {}, "scale ", scale)),
    el("div", { className: "param row" }, el("label", {}, "origin x ", ox), el("label", {}, "y ", oy)),
    derived, mesh, splatRow,
    el("div", { className: "param row" }, button, progress),
    result,
  );
  function showDerived() {
    derived.style.display = [...chosen].some((f) => DERIVED.has(f)) || preset.value ? "" : "none";
    mesh.style.display = chosen.has("glb") || chosen.has("obj") ? "" : "none";
    splatRow.style.display = chosen.has("splat") ? "" : "none";
  }
  // A preset ticks the height format its engine imports (the server adds it too when none is).
  const HEIGHT_FORMAT = { unity: "r16", unreal: "png16", godot: "exr" };
  preset.addEventListener("change", () => {
    const wanted = HEIGHT_FORMAT[preset.value];
    const box = wanted && formats.querySelector(`input[data-format="${wanted}"]`);
    if (box && !box.checked) box.click();
    showDerived();
  });
  showDerived();

  // The size follows the map's until the user types one: a finite map exports whole at scale 1.
  let typed = false;
  for (const input of [width, height]) input.addEventListener("input", () => { typed = true; });
  function defaults() {
    if (typed) return;
    const finite = state.info && state.info.width.finite && state.info.height.finite;
    const s = Number(scale.value) || 1;
    width.value = finite ? Math.round(state.mapWidth * s) : 1024;
    height.value = finite ? Math.round(state.mapHeight * s) : 1024;
  }
  scale.addEventListener("change", defaults);

  async function run(replace) {
    const body = {
      source: state.source, seed: state.seed, parameters: state.values,
      width: Number(width.value), height: Number(height.value), scale: Number(scale.value) || 1,
      origin: [Number(ox.value) || 0, Number(oy.value) || 0],
      formats: [...chosen], replace,
    };
    if (state.info && state.info.width.finite) body.map_width = state.mapWidth;
    if (state.info && state.info.height.finite) body.map_height = state.mapHeight;
    if ([...chosen].some((f) => DERIVED.has(f)) || preset.value) {
      body.pixel_size = Number(pixelSize.value);
      body.height_scale = Number(heightScale.value);
    }
    if (preset.value) body.preset = preset.value;
    if ((chosen.has("glb") || chosen.has("obj")) && meshMode.value && meshValue.value !== "") {
      body[meshMode.value === "triangles" ? "mesh_triangles" : "mesh_error"] = Number(meshValue.value);
    }
    if (chosen.has("splat") && splat.value.trim()) body.splat = splat.value.trim();
    button.disabled = true;
    result.innerHTML = "";
    progress.textContent = "rendering…";
    const poll = setInterval(async () => {
      const { ok, json } = await api("/api/export/progress");
      if (ok && json.running && json.total) progress.textContent = `rendering ${json.done}/${json.total} steps`;
    }, 500);
    try {
      const { status, ok, json } = await api("/api/export", body);
      if (status === 409 && json.existing && !replace) {
        progress.textContent = "";
        if (window.confirm(`Replace ${json.existing.join(", ")} in ${info.dir}?`)) return await run(true);
        host.log("export cancelled: nothing was replaced", "info");
        return;
      }
      if (!ok) { progress.textContent = "failed"; host.logDiagnostics(json.diagnostics || []); return; }
      for (const f of json.files) {
        result.append(el("li", { textContent: `${f.name} · ${human(f.bytes)}${f.replaced ? " (replaced)" : ""}` }));
      }
      for (const m of json.skipped || []) result.append(el("li", { textContent: `${m}: no pixels here, skipped` }));
      for (const m of json.messages || []) host.log(m);
      progress.textContent = `${json.files.length} file${json.files.length === 1 ? "" : "s"} in ${(json.total_ms / 1000).toFixed(1)} s`;
      host.log(`exported ${json.files.map((f) => f.name).join(", ")} into ${json.dir}`, "info");
      window.__lastExport = json;
    } finally {
      clearInterval(poll);
      button.disabled = false;
    }
  }
  button.addEventListener("click", () => { defaults(); run(false); });
  return { update: defaults };
}

// For the page's self-test (#selftest): export png16 and colored through the pane, as a user
// would, and answer what the server wrote and what the pane lists.
export async function exportSelftest() {
  for (const box of document.querySelectorAll("#export input[data-format]")) {
    if (box.checked !== ["png16", "colored"].includes(box.dataset.format)) box.click();
  }
  window.__lastExport = null;
  document.getElementById("export-run").click();
  const end = Date.now() + 30000;
  while (!window.__lastExport && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  const listed = [...document.querySelectorAll("#export-result li")].map((li) => li.textContent);
  return { files: window.__lastExport ? window.__lastExport.files.map((f) => f.name) : [], listed };
}

// Then with the Godot preset and nothing else ticked: the preset ticks its EXR, and the server
// writes the sidecar beside it.
export async function presetSelftest() {
  for (const box of document.querySelectorAll("#export input[data-format]")) if (box.checked) box.click();
  const preset = document.getElementById("export-preset");
  preset.value = "godot";
  preset.dispatchEvent(new Event("change"));
  window.__lastExport = null;
  document.getElementById("export-run").click();
  const end = Date.now() + 30000;
  while (!window.__lastExport && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  preset.value = "";
  preset.dispatchEvent(new Event("change"));
  return { files: window.__lastExport ? window.__lastExport.files.map((f) => f.name) : [] };
}
