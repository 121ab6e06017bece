// Drives headless Chromium over the DevTools protocol, in real time, for scripts/studio-latency.sh:
// opens URL (the studio with #latency=N), waits until the page has written its figures into
// <pre id="latency">, prints them as JSON. Node 20+ (run with --experimental-websocket on 20).
// Usage: node --experimental-websocket scripts/studio-latency.mjs URL TIMEOUT_SECONDS
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, timeoutText] = process.argv.slice(2);
const deadline = Date.now() + 1000 * Number(timeoutText || 300);
const profile = mkdtempSync(join(tmpdir(), "geogen-latency-"));
const chromium = spawn("chromium", [
  "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,800", "--remote-debugging-port=0",
  `--user-data-dir=${profile}`, "--no-first-run", url,
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
let page = null;
while (!page && Date.now() < deadline) {
  const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  page = list.find((t) => t.type === "page" && t.url.startsWith(url.split("#")[0]));
  if (!page) await sleep(200);
}
if (!page) done(1, "the page never opened");
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
let id = 0;
const pending = new Map();
ws.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.id && pending.has(message.id)) { pending.get(message.id)(message); pending.delete(message.id); }
};
const evaluate = (expression) => new Promise((resolve) => {
  const mine = ++id;
  pending.set(mine, (m) => resolve(m.result && m.result.result ? m.result.result.value : null));
  ws.send(JSON.stringify({ id: mine, method: "Runtime.evaluate", params: { expression, returnByValue: true } }));
});
while (Date.now() < deadline) {
  const text = await evaluate("(document.getElementById('latency') || {}).textContent || ''");
  if (text) done(0, text);
  await sleep(500);
}
done(1, "the page never finished its measurement");
