// The header's file actions: New (a script of the studio's directory from the starter template),
// Open (another script of that directory), Examples (a built-in example as an unsaved document)
// and the name a saved example takes. The server takes plain file names only and never replaces
// a file (docs/studio.md); the page asks before unsaved work is left.

// `api(path, body)`: the page's request helper; `dirty()`: whether there is unsaved work;
// `name()`: the document's name; `load(document)`: makes a document the editor's.
export function setupFiles({ api, dirty, name, load, directory }) {
  const $ = (id) => document.getElementById(id);
  const menus = [["open-button", "open-menu", fillOpen], ["examples-button", "examples-menu", fillExamples]];
  if (!directory) {
    for (const id of ["new-button", "open-button"]) {
      $(id).disabled = true;
      $(id).title = "The built-in example has no directory: start the studio with a script file";
    }
  }

  // Unsaved work is left only when the user says so.
  async function mayLeave() {
    if (!dirty()) return true;
    const choice = await ask(`Discard the unsaved changes to ${name()}?`, "They are lost unless you save them first.",
      [["discard", "Discard them"], ["cancel", "Cancel"]]);
    return choice === "discard";
  }

  async function newScript() {
    closeMenus();
    if (!(await mayLeave())) return;
    const created = await askName("New script", "A script from the starter template, in the studio's directory.", "",
      (chosen) => api("/api/new", { name: chosen }));
    if (created) load(created);
  }

  // Saves an example (a document with no file yet) under a name the user gives, in the
  // directory: a taken name is refused and asked again. Resolves to the created document (for the
  // page to load), or null.
  async function saveAs(source, suggested) {
    if (!directory) return null;
    return askName("Save the example as", "A new script in the studio's directory (an existing file is never replaced).",
      suggested, (chosen) => api("/api/new", { name: chosen, source }));
  }

  async function fillOpen(menu) {
    const { ok, json } = await api("/api/files");
    menu.replaceChildren();
    if (!ok) { menu.append(note((json.diagnostics || [])[0]?.message || "cannot list the directory")); return; }
    if (json.dir) menu.append(note(json.dir, "dir"));
    for (const file of json.files) {
      const item = button(file, async () => {
        closeMenus();
        if (!(await mayLeave())) return;
        const answer = await api("/api/open", { name: file });
        if (answer.ok) load(answer.json);
        else await ask("Cannot open it", describe(answer.json), [["ok", "OK"]]);
      });
      item.dataset.file = file;
      if (file === json.current) item.classList.add("current");
      menu.append(item);
    }
    if (json.files.length === 0) menu.append(note("no .ggs files"));
  }

  let examples = null;
  async function fillExamples(menu) {
    if (!examples) {
      const { ok, json } = await api("/api/examples");
      examples = ok ? json : [];
    }
    menu.replaceChildren();
    for (const example of examples) {
      const item = button(example.title, async () => {
        closeMenus();
        if (!(await mayLeave())) return;
        load({ name: example.name, source: example.source, version: null, example: true });
      });
      item.dataset.example = example.name;
      menu.append(item);
    }
  }

  function closeMenus() { for (const [, id] of menus) $(id).hidden = true; }
  for (const [buttonId, menuId, fill] of menus) {
    $(buttonId).addEventListener("click", async (event) => {
      event.stopPropagation();
      const menu = $(menuId);
      const opening = menu.hidden;
      closeMenus();
      if (!opening) return;
      const box = $(buttonId).getBoundingClientRect();
      menu.style.left = `${Math.round(box.left)}px`;
      menu.style.top = `${Math.round(box.bottom + 2)}px`;
      menu.hidden = false;
      await fill(menu);
      menu.dataset.filled = String(Number(menu.dataset.filled || 0) + 1);
    });
  }
  document.addEventListener("click", (event) => { if (!event.target.closest(".menu")) closeMenus(); });
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeMenus(); });
  $("new-button").addEventListener("click", newScript);
  return { saveAs, newScript };
}

function button(text, onClick) {
  const item = document.createElement("button");
  item.type = "button";
  item.textContent = text;
  item.addEventListener("click", onClick);
  return item;
}

function note(text, cls = "note") {
  const div = document.createElement("div");
  div.className = cls;
  div.textContent = text;
  return div;
}

function describe(json) {
  return (json.diagnostics || []).map((d) => `${d.code}: ${d.message}${d.hint ? ` (${d.hint})` : ""}`).join("\n");
}

// A modal question; resolves to the chosen button's key.
function ask(title, text, choices) {
  return new Promise((resolve) => {
    const dialog = document.createElement("dialog");
    dialog.className = "ask";
    const heading = document.createElement("h3");
    heading.textContent = title;
    const body = document.createElement("p");
    body.textContent = text;
    const buttons = document.createElement("div");
    buttons.className = "buttons";
    for (const [key, label] of choices) {
      const b = button(label, () => { dialog.close(); dialog.remove(); resolve(key); });
      b.dataset.choice = key;
      buttons.append(b);
    }
    dialog.append(heading, body, buttons);
    dialog.addEventListener("cancel", () => { dialog.remove(); resolve("cancel"); });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// Asks for a file name and tries `attempt(name)` until the server takes one (resolving to its
// answer) or the user cancels (null). A refusal (a taken or invalid name) is shown in the dialog.
function askName(title, text, suggested, attempt) {
  return new Promise((resolve) => {
    const dialog = document.createElement("dialog");
    dialog.className = "ask name";
    dialog.innerHTML = `<form method="dialog"><h3></h3><p></p>
      <label>file name <input name="file" required spellcheck="false" autocomplete="off" placeholder="hills.ggs"></label>
      <p class="refusal" aria-live="polite"></p>
      <div class="buttons"><button value="create">Create</button><button value="cancel" formnovalidate>Cancel</button></div></form>`;
    dialog.querySelector("h3").textContent = title;
    dialog.querySelector("p").textContent = text;
    const input = dialog.querySelector("input");
    const refusal = dialog.querySelector(".refusal");
    input.value = suggested;
    const finish = (value) => { dialog.close(); dialog.remove(); resolve(value); };
    dialog.querySelector("form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (event.submitter && event.submitter.value === "cancel") { finish(null); return; }
      const answer = await attempt(input.value.trim());
      if (answer.ok) { finish(answer.json); return; }
      refusal.textContent = describe(answer.json);
      dialog.dataset.refused = (answer.json.diagnostics || [])[0]?.code || String(answer.status);
      input.select();
    });
    dialog.addEventListener("cancel", () => { dialog.remove(); resolve(null); });
    document.body.append(dialog);
    dialog.showModal();
    input.select();
  });
}
