// End-to-end test of rotating a destination's Standard Webhooks signing secret with a grace period
// (POST /api/v1/destinations/{name}/rotate-secret, docs/api.md): the real hookrelay binary delivers
// to a local receiver that checks every request with the official receiver-side library
// (npm `standardwebhooks`), the way a customer's endpoint would. No browser. Run by ctest as
// e2e_signing_rotation:
//   HOOKRELAY_BINARY=build/release/hookrelay node --test --test-reporter=spec tests/e2e/signing_rotation.test.mjs
// The tests run in order on one server and build on each other (secret A, then B by rotation, then
// C); a test whose prerequisite failed fails saying so. Deliveries are awaited by polling the
// receiver; the only wait on the clock is for the grace period to end (old_expires_at + 1 s).
// Fails (never skips) when node_modules is missing: run scripts/install-deps.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

import { TOKEN, fail, failOnSanitizerReport, log, serveHookrelay, step, stopProcess } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const DELIVERY_TIMEOUT_MS = 20000;
const t0 = Date.now();

let Webhook;  // from standardwebhooks, loaded in before()
let base = "";
let server = null;
let serverOutput = () => "";  // what the server printed (serveHookrelay)
let dir = "";

// ---- the receiver: answers 200 and keeps every request's raw body (bytes) and headers.
const received = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    received.push({ path: req.url, body: Buffer.concat(chunks), headers: req.headers, at: Date.now() });
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("ok");
  });
});

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const serverTail = (n = 30) => serverOutput().split("\n").slice(-n).join("\n");
// A test that shows this server's last lines when it fails.
const check = (name, f) => step(name, f, serverTail);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  if (!existsSync(join(here, "node_modules/standardwebhooks"))) {
    fail("tests/e2e/node_modules/standardwebhooks is missing: run scripts/install-deps (npm ci in tests/e2e)");
  }
  ({ Webhook } = await import("standardwebhooks"));
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));

  dir = mkdtempSync(join(tmpdir(), "hookrelay-e2e-rotation-"));
  writeFileSync(join(dir, "hookrelay.toml"), '[[sources]]\nname = "s"\n');
  ({ child: server, base, output: serverOutput } = await serveHookrelay(dir));
  log(`hookrelay at ${base}, receiver at http://127.0.0.1:${receiver.address().port}`);
});

after(async () => {
  await stopProcess(server);
  receiver.closeAllConnections();
  receiver.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  console.log(`e2e_signing_rotation: took ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  failOnSanitizerReport(serverOutput());
});


// The management API with the admin token (or `token`, null for none): {status, json}.
async function call(method, path, body, token = TOKEN) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON: json stays null, text is in the messages */ }
  return { status: r.status, json, text };
}
async function ok(method, path, body) {
  const r = await call(method, path, body);
  if (r.status !== 200 && r.status !== 201) fail(`${method} ${path} answered ${r.status}: ${r.text}`);
  return r.json;
}

// Ingests one event on source s and waits until the receiver got it (matched by webhook-id, the
// event's id); returns the recorded request.
let sent = 0;
async function sendAndReceive(label) {
  const payload = { label, n: ++sent, note: "grüße, ünïcode & \"quotes\"" };
  const r = await fetch(`${base}/in/s`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) });
  const text = await r.text();
  if (r.status !== 202) fail(`POST /in/s answered ${r.status}: ${text}`);
  const { id } = JSON.parse(text);
  if (!id) fail(`POST /in/s answered no id: ${text}`);
  const since = Date.now();
  for (;;) {
    const hit = received.find((h) => h.headers["webhook-id"] === id);
    if (hit) {
      log(`${label}: event ${id} delivered after ${hit.at - since} ms`);
      if (JSON.parse(hit.body.toString("utf8")).n !== payload.n) fail(`${label}: the receiver got another body for ${id}: ${hit.body}`);
      return hit;
    }
    if (Date.now() - since > DELIVERY_TIMEOUT_MS) {
      fail(`${label}: event ${id} was not delivered within ${DELIVERY_TIMEOUT_MS / 1000} s ` +
        `(the receiver has ${received.length} requests, webhook-ids ${JSON.stringify(received.map((h) => h.headers["webhook-id"]))})`);
    }
    await sleep(25);
  }
}

// The receiver's check: the library's verify() with `secret` on the raw body and headers.
function verifies(hit, secret, label) {
  try {
    new Webhook(secret).verify(hit.body, hit.headers);
  } catch (e) {
    fail(`${label}: verify failed (${e.message}); webhook-signature: ${hit.headers["webhook-signature"]}`);
  }
}
function rejects(hit, secret, label) {
  assert.throws(() => new Webhook(secret).verify(hit.body, hit.headers),
    { name: "WebhookVerificationError", message: "No matching signature found" },
    `${label}: verify should have thrown "No matching signature found"; webhook-signature: ${hit.headers["webhook-signature"]}`);
}
// The webhook-signature's "v1,<sig>" entries, checked against what each secret in `secrets`
// signs, in that order (the new secret first).
function signaturesAre(hit, secrets, label) {
  const got = (hit.headers["webhook-signature"] || "").split(" ");
  const ts = new Date(Number(hit.headers["webhook-timestamp"]) * 1000);
  const want = secrets.map((s) => new Webhook(s).sign(hit.headers["webhook-id"], ts, hit.body));
  assert.deepEqual(got, want, `${label}: webhook-signature should be ${secrets.length} signature(s), by ${secrets.length > 1 ? "the new then the old secret" : "the current secret"}`);
}
// No secret may show in the destination's JSON (they are write-only).
function noSecrets(json, secrets, label) {
  const text = JSON.stringify(json);
  for (const s of secrets) if (text.includes(s)) fail(`${label}: shows a signing secret: ${text}`);
  if ("signing_secret" in json) fail(`${label}: has a signing_secret field`);
}

const A = newSecret();
const C = newSecret();
let B = null;           // set by the first rotation
let oldExpiresAt = NaN; // its old_expires_at, in ms

check("destination d1 signed with secret A: the receiver verifies with A, not with another secret", async () => {
  const d = await ok("POST", "/destinations", {
    name: "d1", url: `http://127.0.0.1:${receiver.address().port}/hook`, allow_private: true, signing_secret: A,
  });
  assert.equal(d.signing_secret_set, true, "signing_secret_set after creating d1 with a secret");
  assert.equal(d.signing_secret_rotation, null, "a new destination has no rotation");
  noSecrets(d, [A], "POST /destinations");
  await ok("POST", "/routes", { source: "s", destination: "d1" });

  const hit = await sendAndReceive("before rotation");
  assert.equal(hit.path, "/hook");
  verifies(hit, A, "before rotation, secret A");
  signaturesAre(hit, [A], "before rotation");
  rejects(hit, newSecret(), "before rotation, a random secret");
  // The signature covers the body: one changed byte fails.
  const tampered = { ...hit, body: Buffer.from(hit.body.toString("utf8").replace("before", "bEfore")) };
  rejects(tampered, A, "before rotation, a changed body");
});

check("rotate with grace 3s: a new secret B once, and every delivery signed by B and A", async () => {
  const t = Date.now();
  const r = await ok("POST", "/destinations/d1/rotate-secret", { grace: "3s" });
  B = r.signing_secret;
  assert.match(B ?? "", /^whsec_[A-Za-z0-9+/]+=*$/, "the rotation's answer has signing_secret whsec_…");
  assert.equal(Buffer.from(B.slice(6), "base64").length, 32, "a generated secret has 32 bytes");
  assert.notEqual(B, A, "the new secret differs from the old one");
  assert.equal(r.name, "d1");
  assert.equal(r.signing_secret_set, true);
  assert.ok(r.signing_secret_rotation && typeof r.signing_secret_rotation.old_expires_at === "string",
    `the answer shows signing_secret_rotation.old_expires_at: ${JSON.stringify(r.signing_secret_rotation)}`);
  assert.match(r.signing_secret_rotation.old_expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, "old_expires_at is RFC 3339 (UTC)");
  oldExpiresAt = Date.parse(r.signing_secret_rotation.old_expires_at);
  // 3 s from the rotation (the server keeps whole seconds: up to 1 s earlier).
  assert.ok(oldExpiresAt >= t + 3000 - 1000 && oldExpiresAt <= Date.now() + 3000,
    `old_expires_at ${r.signing_secret_rotation.old_expires_at} is not 3 s after the rotation (${new Date(t).toISOString()})`);
  const { signing_secret: _shownOnce, ...rest } = r;
  noSecrets(rest, [A], "the rotation's answer (besides signing_secret)");

  const g = await ok("GET", "/destinations/d1");
  assert.deepEqual(g.signing_secret_rotation, r.signing_secret_rotation, "GET during the grace period shows the rotation");
  noSecrets(g, [A, B], "GET during the grace period");

  const hit = await sendAndReceive("during grace");
  if (Number(hit.headers["webhook-timestamp"]) * 1000 >= oldExpiresAt) {
    fail(`during grace: the event was signed at ${hit.headers["webhook-timestamp"]}, not before old_expires_at ` +
      `${r.signing_secret_rotation.old_expires_at} (delivery too slow for a 3 s grace period)`);
  }
  verifies(hit, A, "during grace, old secret A");
  verifies(hit, B, "during grace, new secret B");
  signaturesAre(hit, [B, A], "during grace");
  rejects(hit, newSecret(), "during grace, a random secret");
});

check("after the grace period: signed by B alone, A is rejected, GET shows no rotation", async () => {
  if (!B || Number.isNaN(oldExpiresAt)) fail("needs the rotation of the previous test");
  // The only wait on the clock: until old_expires_at has passed, plus a second.
  const until = oldExpiresAt + 1000;
  while (Date.now() < until) await sleep(Math.min(200, until - Date.now()));
  const g = await ok("GET", "/destinations/d1");
  assert.equal(g.signing_secret_rotation, null, "GET after the grace period: signing_secret_rotation is null");
  noSecrets(g, [A, B], "GET after the grace period");

  const hit = await sendAndReceive("after grace");
  verifies(hit, B, "after grace, new secret B");
  rejects(hit, A, "after grace, old secret A");
  signaturesAre(hit, [B], "after grace");
});

check("rotate with grace 0s to a given secret C: signed by C alone at once", async () => {
  if (!B) fail("needs the rotation of an earlier test");
  const r = await ok("POST", "/destinations/d1/rotate-secret", { grace: "0s", secret: C });
  assert.equal(r.signing_secret, C, "the answer shows the given secret");
  assert.equal(r.signing_secret_rotation, null, "grace 0s: no rotation in progress");
  const g = await ok("GET", "/destinations/d1");
  assert.equal(g.signing_secret_rotation, null, "GET after a 0s rotation: signing_secret_rotation is null");
  noSecrets(g, [A, B, C], "GET after the 0s rotation");

  const hit = await sendAndReceive("after 0s rotation");
  verifies(hit, C, "after 0s rotation, secret C");
  rejects(hit, B, "after 0s rotation, previous secret B");
  rejects(hit, A, "after 0s rotation, first secret A");
  signaturesAre(hit, [C], "after 0s rotation");
});

check("errors: grace 8d → 400 naming grace, unknown destination → 404, no token → 401; none changes d1", async () => {
  const before = received.length;
  const long = await call("POST", "/destinations/d1/rotate-secret", { grace: "8d" });
  assert.equal(long.status, 400, `grace 8d: ${long.text}`);
  assert.equal(long.json?.error?.field, "grace", `grace 8d names the field: ${long.text}`);

  const unknown = await call("POST", "/destinations/no-such-destination/rotate-secret", { grace: "1h" });
  assert.equal(unknown.status, 404, `unknown destination: ${unknown.text}`);

  const anonymous = await call("POST", "/destinations/d1/rotate-secret", { grace: "1h" }, null);
  assert.equal(anonymous.status, 401, `no token: ${anonymous.text}`);
  const wrong = await call("POST", "/destinations/d1/rotate-secret", { grace: "1h" }, "not-the-admin-token-at-all");
  assert.equal(wrong.status, 401, `a wrong token: ${wrong.text}`);

  // None of them rotated: still C alone, no rotation shown.
  const g = await ok("GET", "/destinations/d1");
  assert.equal(g.signing_secret_rotation, null, "after the refused rotations: signing_secret_rotation is null");
  assert.equal(received.length, before, "nothing was delivered meanwhile");
  const hit = await sendAndReceive("after refused rotations");
  verifies(hit, C, "after refused rotations, secret C");
  signaturesAre(hit, [C], "after refused rotations");
});
