// Opens a page in headless Chromium in real time (web workers, timers and the network as in a real
// browser, which --virtual-time-budget does not give), waits until the page writes its result into
// the element with the given id, and prints JSON: {"result": that text, "console": the errors and
// warnings the console showed (the page's own, uncaught exceptions, failed or blocked loads)};
// optionally it saves a screenshot then.
// Node 20+ (run with --experimental-websocket on 20). Extra Chromium flags: CHROMIUM_FLAGS.
// Usage: node --experimental-websocket scripts/chromium-wait.mjs URL ELEMENT_ID TIMEOUT_SECONDS [SCREENSHOT.png]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, elementId, timeoutText, screenshot] = process.argv.slice(2);
const deadline = Date.now() + 1000 * Number(timeoutText || 120);
const profile = mkdtempSync(join(tmpdir(), "geogen-chromium-"));
const extra = (process.env.CHROMIUM_FLAGS || "").split(/\s+/).filter(Boolean);
const chromium = spawn("chromium", [
  "--headless", "--no-sandbox", "--window-size=1200,800", "--remote-debugging-port=0",
  `--user-data-dir=${profile}`, "--no-first-run", ...extra, "about:blank",
], { stdio: ["ignore", "ignore", "pipe"] });
const done = (code, text) => {
  if (text) (code ? console.error : console.log)(text);
  chromium.kill();
  try { rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
  process.exit(code);
};
let stderr = "";
const port = await new Promise((resolve) => {
  chromium.stderr.on("data", (chunk) => {
    stderr += chunk;
    const m = stderr.match(/DevTools listening on ws:\/\/[^:]+:(\d+)\//);
    if (m) resolve(m[1]);
  });
  setTimeout(() => resolve(null), 20000);
});
if (!port) done(1, `chromium did not start its DevTools endpoint:\n${stderr.slice(-2000)}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const page = list.find((t) => t.type === "page");
if (!page) done(1, "chromium opened no page");
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
let id = 0;
const pending = new Map();
const consoleEntries = [];
ws.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.id && pending.has(message.id)) { pending.get(message.id)(message); pending.delete(message.id); }
  const p = message.params || {};
  if (message.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "warning")) {
    consoleEntries.push({ level: p.type, text: (p.args || []).map((a) => a.value ?? a.description ?? "").join(" ") });
  } else if (message.method === "Runtime.exceptionThrown") {
    const d = p.exceptionDetails || {};
    consoleEntries.push({ level: "error", text: (d.exception && d.exception.description) || d.text || "exception" });
  } else if (message.method === "Log.entryAdded" && (p.entry.level === "error" || p.entry.level === "warning")) {
    consoleEntries.push({ level: p.entry.level, text: `${p.entry.text}${p.entry.url ? ` (${p.entry.url})` : ""}` });
  }
};
const call = (method, params = {}) => new Promise((resolve) => {
  const mine = ++id;
  pending.set(mine, (m) => resolve(m.result || {}));
  ws.send(JSON.stringify({ id: mine, method, params }));
});
const evaluate = async (expression) => {
  const result = await call("Runtime.evaluate", { expression, returnByValue: true });
  return result.result ? result.result.value : null;
};
await call("Runtime.enable");
await call("Log.enable");
await call("Page.navigate", { url });
const read = `(document.getElementById(${JSON.stringify(elementId)}) || {}).textContent || ''`;
while (Date.now() < deadline) {
  const text = await evaluate(read);
  if (text) {
    if (screenshot) {
      const shot = await call("Page.captureScreenshot", { format: "png" });
      if (shot.data) writeFileSync(screenshot, Buffer.from(shot.data, "base64"));
    }
    done(0, JSON.stringify({ result: text, console: consoleEntries }));
  }
  await sleep(250);
}
done(1, `the page never wrote #${elementId} within ${timeoutText} s`);
