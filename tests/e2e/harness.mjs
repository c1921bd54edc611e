// The e2e harness (issue 12, issue 26): the real hookrelay binary, a scripted local sink and
// Debian's headless Chromium driven by playwright-core, with the checks every page gets (axe-core,
// leaked values, hidden elements, nothing sticking out). dashboard.test.mjs starts it once
// (start() in a before hook, stop() in an after hook) and runs one test per page on it.
// Configured from the environment: HOOKRELAY_BINARY (required), HOOKRELAY_E2E_SCREENSHOTS (where
// the screenshots go; default ./e2e-screenshots), HOOKRELAY_CHROMIUM (default /usr/bin/chromium).
// Fails (never skips) when Chromium or node_modules is missing: run scripts/install-deps.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const binary = process.env.HOOKRELAY_BINARY;
export const outDir = process.env.HOOKRELAY_E2E_SCREENSHOTS || join(process.cwd(), "e2e-screenshots");
const CHROMIUM = process.env.HOOKRELAY_CHROMIUM || "/usr/bin/chromium";
export const TOKEN = "e2e-admin-token-0123456789abcdef";
export const started = Date.now();

// A failed check: the running test fails with `msg` (the others still run).
export function fail(msg) { throw new Error(msg); }
export function log(msg) { console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`); }

// Set by start().
export let base = "";     // the server's URL
export let sinkUrl = "";
export let browser = null;
let server = null;
let serverOutput = () => "";  // what the server printed (serveHookrelay)
let dir = "";
let chromium = null;
let axeSource = "";

// ---- the scripted sink: /billing fails (503 + Retry-After) until told to succeed, then answers
// after 40 ms (so its latency is not a few milliseconds); /legacy and /orders always fail;
// anything else answers 200. sinkHits has every request's path, body and headers.
export const sinkMode = { billing: "fail" };
export const sinkHits = [];
const sink = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => { body += c; });
  req.on("end", () => {
    sinkHits.push({ path: req.url, body, headers: req.headers });
    if (req.url === "/billing" && sinkMode.billing === "fail") {
      res.writeHead(503, { "Content-Type": "text/plain", "Retry-After": "600" });
      res.end("billing database is down (scripted)");
    } else if (req.url === "/orders") {
      res.writeHead(503, { "Content-Type": "text/plain" });
      res.end("orders service is down (scripted)");
    } else if (req.url === "/legacy") {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end('{"error":"legacy endpoint always fails"}');
    } else if (req.url === "/billing") {
      setTimeout(() => { res.writeHead(200, { "Content-Type": "text/plain" }); res.end("ok"); }, 40);
    } else {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
    }
  });
});
// Starts the sink, the server (on a fresh data directory) and the browser.
export async function start() {
  if (!binary || !existsSync(binary)) fail(`no hookrelay binary at ${binary} (set HOOKRELAY_BINARY)`);
  if (!existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing: run scripts/install-deps (installs Debian's chromium)`);
  if (!existsSync(join(here, "node_modules/playwright-core")) || !existsSync(join(here, "node_modules/axe-core"))) {
    fail("tests/e2e/node_modules is missing: run scripts/install-deps (npm ci for playwright-core and axe-core)");
  }
  ({ chromium } = await import("playwright-core"));
  axeSource = readFileSync(join(here, "node_modules/axe-core/axe.min.js"), "utf8");
  await new Promise((r) => sink.listen(0, "127.0.0.1", r));
  sinkUrl = `http://127.0.0.1:${sink.address().port}`;

  // ---- the real binary
  dir = mkdtempSync(join(tmpdir(), "hookrelay-e2e-"));
  writeFileSync(join(dir, "hookrelay.toml"), `
[[sources]]
name = "shop"

[[sources]]
name = "signed"
verify = { scheme = "github", secrets = ["e2e-github-secret-never-shown"] }

[[destinations]]
name = "billing"
url = "${sinkUrl}/billing"
policy = { strategy = "ladder", delays = ["10m"], max_attempts = 5 }

[[destinations]]
name = "legacy"
url = "${sinkUrl}/legacy"
policy = { strategy = "ladder", delays = ["1s"], max_attempts = 1 }

[[sources]]
name = "orders"

[[destinations]]
name = "orders"
url = "${sinkUrl}/orders"
order_key = { json = "customer" }
policy = { strategy = "ladder", delays = ["10m"], max_attempts = 10 }

[[routes]]
source = "orders"
destination = "orders"

[[routes]]
source = "shop"
destination = "billing"

[[routes]]
source = "signed"
destination = "billing"

[[routes]]
source = "shop"
destination = "legacy"
`);
  ({ child: server, base, output: serverOutput } = await serveHookrelay(dir));
  log(`hookrelay at ${base}, sink at ${sinkUrl}`);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  mkdirSync(outDir, { recursive: true });
}

// Starts `hookrelay serve` on `dir`/hookrelay.toml and `dir`/data, on a free port of 127.0.0.1,
// with TOKEN as the admin token and private destinations allowed (the receivers are local).
// Resolves to {child, base, output} once it says "listening on" (output() is all it printed, still
// growing); rejects with what it printed when it exits first or stays silent for 30 s.
export async function serveHookrelay(dir) {
  if (!binary || !existsSync(binary)) fail(`no hookrelay binary at ${binary} (set HOOKRELAY_BINARY)`);
  let out = "";
  const child = spawn(binary, ["serve", "--config", join(dir, "hookrelay.toml"), "--data", join(dir, "data"),
    "--listen", "127.0.0.1:0", "--allow-private-destinations"],
  { env: { ...process.env, HOOKRELAY_TOKEN: TOKEN }, stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`hookrelay did not start within 30 s:\n${out}`)), 30000);
    const onData = (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) { clearTimeout(t); resolve(m[1]); }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code, signal) => { clearTimeout(t); reject(new Error(`hookrelay exited (${code ?? signal}):\n${out}`)); });
  });
  return { child, base: url, output: () => out };
}

// Stops a hookrelay process (SIGTERM; waits for it at most 30 s).
export async function stopProcess(child) {
  if (!child) return;
  const exited = child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve() : new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  // The 30 s fallback timer is cleared once the server has exited: a pending timer keeps node
  // alive, and this one used to add 30 s to every run after the last test.
  let timer = null;
  await Promise.race([exited, new Promise((r) => { timer = setTimeout(r, 30000); })]);
  clearTimeout(timer);
}

// Throws when a server's output holds a sanitizer report (under make test-sanitize the binary is
// instrumented: a report, at shutdown too, fails the run).
export function failOnSanitizerReport(output) {
  const report = /ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error: /.exec(output);
  if (report) fail(`hookrelay printed a sanitizer report:\n${output.slice(report.index)}`);
}

// A node:test test that, when it fails, shows the server's last lines (`tail()`) beside its error.
export function step(name, f, tail = serverTail) {
  return test(name, async () => {
    try {
      await f();
    } catch (e) {
      console.error(`hookrelay output (tail):\n${tail()}`);
      throw e;
    }
  });
}

// Stops the browser, the server and the sink. Throws when the server printed a sanitizer report.
export async function stop() {
  if (browser) await browser.close().catch(() => {});
  await stopProcess(server);
  sink.closeAllConnections();
  sink.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  failOnSanitizerReport(serverOutput());
}

// The last lines the server printed (for a failed test's report).
export function serverTail(n = 30) { return serverOutput().split("\n").slice(-n).join("\n"); }

// GET /api/v1<path> with the admin token, parsed.
export async function api(path) {
  return (await fetch(`${base}/api/v1${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json();
}

export async function ingest(payload, headers = {}) {
  const r = await fetch(`${base}/in/shop`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(payload) });
  if (r.status >= 300) fail(`ingest answered ${r.status}`);
  return r.json().catch(() => ({}));
}

// ---- the browser
// Console errors, page errors, failed requests and HTTP errors no step provoked on purpose; the
// test file fails the test they happened in (and empties the list).
export const problems = [];
let expected = [];  // patterns of console errors / responses a step provokes on purpose

function isExpected(text) { return expected.some((re) => re.test(text)); }
export async function expecting(patterns, f) {
  const saved = expected;
  expected = [...expected, ...patterns];
  try { return await f(); } finally { await new Promise((r) => setTimeout(r, 300)); expected = saved; }
}

export async function newPage(viewport) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, locale: "en-GB", timezoneId: "Europe/Berlin" });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("console", (m) => {
    if (m.type() === "error" && !isExpected(m.text())) problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => {
    const why = r.failure()?.errorText || "";
    if (why.includes("ERR_ABORTED")) return;  // a download link or navigation away mid-request
    problems.push(`request failed: ${r.method()} ${r.url()} ${why}`);
  });
  page.on("response", (r) => {
    const line = `${r.status()} ${r.request().method()} ${r.url()}`;
    if (r.status() >= 400 && !isExpected(line)) problems.push(`HTTP ${line}`);
  });
  return { context, page };
}

const SEC = {
  "content-security-policy": (v) => /default-src 'self'/.test(v) && /frame-ancestors 'none'/.test(v) && !/unsafe-inline/.test(v) && !/unsafe-eval/.test(v),
  "x-content-type-options": (v) => v === "nosniff",
  "referrer-policy": (v) => v === "no-referrer",
};
export function assertSecurityHeaders(resp, what) {
  const hdrs = resp.headers();
  for (const [k, ok] of Object.entries(SEC)) {
    if (!hdrs[k] || !ok(hdrs[k])) fail(`${what}: header ${k} is ${JSON.stringify(hdrs[k])}`);
  }
}

export const axeSeen = new Set();
export async function checkA11y(page, name) {
  await page.evaluate(axeSource);  // through the DevTools protocol: the page's CSP forbids inline scripts, as it should
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
  });
  const bad = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length) fail(`axe on ${name}: ${JSON.stringify(bad, null, 1)}`);
  axeSeen.add(name);
}

// Text the user reads must never show a JavaScript value leaking through ("null", "NaN", …),
// nor a raw RFC 3339 time (times are local with a relative time, also inside reasons); JSON
// shown as such (pre, code, .mono) may.
export async function checkText(page, name) {
  const leaks = await page.evaluate(() => {
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest("pre, code, .mono, script, noscript")) continue;
      if (/null|undefined|NaN|\[object |\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(n.textContent)) out.push(n.textContent.trim().slice(0, 80));
    }
    return out;
  });
  if (leaks.length) fail(`${name} shows ${JSON.stringify(leaks)}`);
}

// An element with the `hidden` attribute must not be shown: a class's `display` overrides the
// attribute's user-agent `display: none` (the navigation bar showed on the sign-in page).
export async function checkHidden(page, name) {
  const shown = await page.evaluate(() => [...document.querySelectorAll("[hidden]")]
    .filter((el) => getComputedStyle(el).display !== "none")
    .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.className ? `.${el.className}` : ""}`));
  if (shown.length) fail(`${name}: hidden but shown: ${shown.join(", ")}`);
}

export async function shot(page, name, size) {
  await checkText(page, `${name} (${size})`);
  await page.screenshot({ path: join(outDir, `${name}-${size}.png`) });
}

// opts.axe false leaves axe out (a page already checked as another role: axe takes most of a visit).
export async function visit(page, hash, name, size, ready, opts = {}) {
  await page.goto(`${base}/ui/${hash}`);
  await page.locator(ready).first().waitFor();
  await page.waitForTimeout(150);
  await checkPage(page, name, size, opts);
}

// The checks of visit() on the page as it is now (after a click, say), and its screenshot.
export async function checkPage(page, name, size, opts = {}) {
  if (opts.axe !== false) await checkA11y(page, name);
  // Nothing may stick out sideways (the page itself must not scroll horizontally; wide tables
  // scroll inside their own focusable region).
  const overflow = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll("main *")) {
      if (el.closest(".table-wrap, pre")) continue;
      const r = el.getBoundingClientRect();
      if (r.width && r.right > window.innerWidth + 1) out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${el.className}`);
    }
    return out.slice(0, 5);
  });
  if (overflow.length) fail(`${name} at ${size}: sticks out to the right: ${overflow.join(", ")}`);
  await checkHidden(page, `${name} at ${size}`);
  await shot(page, name, size);
}
