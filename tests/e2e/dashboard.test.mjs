// End-to-end test of the dashboard (issues 12, 26 and 28): the real hookrelay binary, a scripted
// local sink and Debian's headless Chromium (harness.mjs), on node's test runner. One server and
// one browser for the file (before/after); one test per page or feature, in order: the later ones
// use what the earlier ones created (the events ingested, the jobs started), but a failed check
// fails only its own test and the others still run and report. Run by ctest as e2e_dashboard:
//   HOOKRELAY_BINARY=build/test/src/hookrelay node --test tests/e2e/
// Console errors and failed requests a test provokes without expecting them fail that test.
import { execFileSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, test } from "node:test";

import {
  TOKEN, api, assertSecurityHeaders, axeSeen, base, checkA11y, checkHidden, checkPage, checkText, expecting, fail, ingest, log,
  newPage, outDir, problems, shot, sinkHits, sinkMode, sinkUrl, start, started, step, stop, visit,
} from "./harness.mjs";

let page;  // the desktop page (1280×800), signed in by the first test

before(async () => {
  await start();
  ({ page } = await newPage({ width: 1280, height: 800 }));
});

afterEach(() => {
  if (!problems.length) return;
  const seen = problems.splice(0);
  fail(`console errors or failed requests:\n  ${seen.join("\n  ")}`);
});

after(async () => {
  await stop();
  if ((Date.now() - started) > 180000) console.warn(`e2e_dashboard: took ${(Date.now() - started) / 1000}s (aim: under 180 s; ctest stops it at 240 s)`);
  console.log(`e2e_dashboard: ${axeSeen.size} pages checked with axe, screenshots in ${outDir}`);
});


step("sign-in: / redirects, security headers and ETags, a wrong token, the token, the skip link", async () => {
  // 1. / redirects to /ui/; the security headers; sign-in with a wrong token, then the right one.
  const first = await page.goto(`${base}/`);
  if (!first.url().endsWith("/ui/")) fail(`/ went to ${first.url()}, not /ui/`);
  assertSecurityHeaders(first, "/ui/");
  for (const p of ["css/app.css", "js/app.js", "js/pages/events.js"]) {
    const r = await page.request.get(`${base}/ui/${p}`);
    assertSecurityHeaders(r, `/ui/${p}`);
    if (!/^text\/(css|javascript)/.test(r.headers()["content-type"])) fail(`/ui/${p} has content type ${r.headers()["content-type"]}`);
    // Revalidated, not fetched again: an ETag, and 304 (no body) when the browser has it.
    const etag = r.headers().etag;
    if (!/^"[0-9a-f]{16,}"$/.test(etag || "")) fail(`/ui/${p} has no ETag (${etag})`);
    const again = await page.request.get(`${base}/ui/${p}`, { headers: { "If-None-Match": etag } });
    if (again.status() !== 304) fail(`/ui/${p} with If-None-Match answered ${again.status()}, not 304`);
    if (again.headers().etag !== etag) fail(`/ui/${p}: the 304 has ETag ${again.headers().etag}`);
    assertSecurityHeaders(again, `/ui/${p} (304)`);
  }
  const missing = await page.request.get(`${base}/ui/no-such-file.js`);
  if (missing.status() !== 404) fail(`/ui/no-such-file.js answered ${missing.status()}`);
  assertSecurityHeaders(missing, "/ui/ 404");
  await page.locator("#token").waitFor();
  await checkA11y(page, "signin");
  // Signed out: no navigation bar and no "Sign out" (issue: `.top { display: flex }` beat `hidden`).
  if (await page.locator("#top").isVisible()) fail("the navigation bar is shown on the sign-in page");
  if (await page.getByRole("button", { name: "Sign out" }).isVisible()) fail("\"Sign out\" is shown while signed out");
  await checkHidden(page, "signin");
  await shot(page, "signin", "desktop");
  await expecting([/status of 401/, /^401 /], async () => {
    await page.fill("#token", "not-the-token");
    await page.click("button[type=submit]");
    await page.getByText("Wrong token").waitFor();
  });
  log("wrong token: message shown");
  await page.fill("#token", TOKEN);
  await page.click("button[type=submit]");
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByText("No events yet").waitFor();
  if (await page.evaluate(() => sessionStorage.getItem("hookrelay.token")) !== TOKEN) fail("token not in sessionStorage");
  if ((await page.context().cookies()).length) fail("the dashboard set a cookie");
  await checkA11y(page, "overview-empty");
  await shot(page, "overview-empty", "desktop");
  log("signed in; empty store shows how to send a first event");
  // A hash that is not valid percent-encoding is a page that does not exist, not a blank page
  // with an uncaught URIError.
  for (const bad of ["#/events/%E0%A4%A", "#/destinations/%", "#/sources/%ZZ"]) {
    await page.goto(`${base}/ui/${bad}`);
    await page.getByRole("heading", { name: "No such page" }).waitFor({ timeout: 3000 })
      .catch(() => fail(`${bad} does not show "No such page"`));
  }
  await page.goto(`${base}/ui/#/`);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  // "Skip to content" moves focus to the page; it must not navigate ("No such page").
  await page.focus("a.skip");
  await page.keyboard.press("Enter");
  if (await page.evaluate(() => document.activeElement && document.activeElement.id) !== "main") fail("the skip link did not focus the content");
  if (await page.getByText("No such page").count()) fail("the skip link navigated away");
  await page.getByRole("heading", { name: "Overview" }).waitFor();
});

step("event detail: a failing delivery shows its attempt and next retry", async () => {
  // 2. An event to a failing destination: "attempt 1 of 5 — next retry …".
  await page.goto(`${base}/ui/#/events`);
  await page.locator("#first-event").waitFor();
  // Markup in a payload or a header must stay text: were it inserted as HTML, the <img> would
  // request /ui/x (a failed request) and its handler would break the CSP (a console error).
  await ingest({ order: 42, customer: "ada@example.com", note: "<img src=x onerror=alert(1)>", items: [{ sku: "A-1", qty: 2 }] },
    { "X-Note": "<img src=x onerror=alert(2)><script>alert(3)</script>" });
  const row = page.locator("tbody tr").first();
  await row.waitFor();  // appears without a reload (live)
  log("event appeared live in the list");
  await row.locator("a").first().click();
  const billing = page.locator('.delivery[data-destination="billing"]');
  // A retry after local midnight (the browser runs in Europe/Berlin: 22:50-23:00 UTC) shows its
  // date first, "2 Dec 2026, 00:03:10".
  await billing.getByText(/attempt 1 of 5 — next retry (\d{1,2} \w{3} \d{4}, )?\d\d:\d\d:\d\d \(in (9|10) min\)/).waitFor();
  await page.locator('.delivery[data-destination="legacy"]').getByText(/failed after attempt 1 of 1/).waitFor();
  await billing.locator("td").getByText("503", { exact: true }).first().waitFor();
  await billing.locator("td").getByText("600", { exact: true }).first().waitFor();  // Retry-After in the timeline
  if (!(await page.locator("#payload").innerText()).includes('"order": 42')) fail("payload not pretty-printed JSON");
  await page.getByText("<img src=x onerror=alert(2)><script>alert(3)</script>").waitFor();  // shown as text
  if (await page.locator("main img, main script").count()) fail("markup from an event was inserted as HTML");
  const title = await billing.locator(".promise time").getAttribute("title");
  if (!/UTC$/.test(title || "")) fail(`next retry has no UTC title: ${title}`);
  await checkA11y(page, "event");
  await shot(page, "event-retrying", "desktop");
  log("event detail shows attempt 1 of 5 and the next retry");
});

step("event detail: replay to one destination from the dashboard", async () => {
  // 3. The sink recovers; replay to billing from the dashboard; it is delivered.
  const billing = page.locator('.delivery[data-destination="billing"]');
  sinkMode.billing = "ok";
  await billing.getByRole("button", { name: "Replay to billing" }).click();
  await page.getByText(/Replay started: billing \(replay 1\)/).waitFor();
  await billing.getByText(/delivered at attempt 1 of 5/).waitFor({ timeout: 20000 });
  await shot(page, "event-replayed", "desktop");
  if (!sinkHits.some((h) => h.path === "/billing" && h.body.includes('"order":42'))) fail("the sink did not receive the replay");
  log("replayed and delivered");
});

step("destinations: pause and resume; a paused delivery says who paused it", async () => {
  // 4. Pause and resume a destination.
  await page.goto(`${base}/ui/#/destinations`);
  const billingRow = page.locator('tr[data-name="billing"]');
  await billingRow.getByRole("button", { name: "Pause billing" }).click();
  await page.getByText("Paused billing.").waitFor();
  await billingRow.getByText("paused from the dashboard").waitFor();
  // Issue 32.3: a delivery held by the pause says what holds it, in the list and on its page. (A
  // GitHub-signed event: the source "signed" routes to billing only, so no later count moves.)
  const heldBody = '{"held":true}';
  const held = await fetch(`${base}/in/signed`, { method: "POST", body: heldBody, headers: {
    "Content-Type": "application/json", "X-GitHub-Event": "push", "X-GitHub-Delivery": "e2e-held-1",
    "X-Hub-Signature-256": `sha256=${createHmac("sha256", "e2e-github-secret-never-shown").update(heldBody).digest("hex")}` } });
  if (held.status !== 202) fail(`the signed event answered ${held.status}`);
  const heldId = (await held.json()).id;
  await page.goto(`${base}/ui/#/events?source=signed`);
  await page.locator(`tbody tr:has(a[href="#/events/${heldId}"])`).getByText("(by operator)").waitFor({ timeout: 20000 });
  await page.goto(`${base}/ui/#/events/${heldId}`);
  await page.locator('.delivery[data-destination="billing"] .promise').getByText(/— paused \(by operator\): paused from the dashboard/).waitFor();
  await shot(page, "event-paused-by-operator", "desktop");
  log("a paused delivery says it is paused by the operator");
  await page.goto(`${base}/ui/#/destinations`);
  await billingRow.getByRole("button", { name: "Resume billing" }).click();
  await page.getByText("Resumed billing.").waitFor();
  await billingRow.getByRole("button", { name: "Pause billing" }).waitFor();
  log("paused and resumed billing");
});

step("replays: a bulk replay from a filter with its count, to 100 %", async () => {
  // 5. A bulk replay of legacy's failures, from a filter with its count, to 100 %.
  for (let i = 0; i < 2; i += 1) await ingest({ order: 100 + i });
  await page.goto(`${base}/ui/#/events?status=failed&destination=legacy`);
  await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 3, null, { timeout: 20000 });
  await shot(page, "events-filtered", "desktop");
  await page.click("#replay-all");
  await page.getByText("3 events match this filter now.").waitFor();
  await checkA11y(page, "replay-new");
  await shot(page, "replay-new", "desktop");
  await page.getByRole("button", { name: "Start bulk replay" }).click();
  await page.locator("#job-total").getByText("3").waitFor();
  await page.locator(".pct").getByText("100 %").waitFor({ timeout: 20000 });
  await page.locator(".badge.s-done").waitFor();
  await checkA11y(page, "replay");
  await shot(page, "replay-done", "desktop");
  // The job's filter reads as fields, not as raw JSON.
  const filterText = await page.locator("#job-filter").innerText();
  if (/[{}"]/.test(filterText) || !/failed/.test(filterText) || !/legacy/.test(filterText)) fail(`the job's filter shows ${JSON.stringify(filterText)}`);
  log("bulk replay reached 100 %");
});

step("destination new: a refused destination names the field, then created", async () => {
  // 6. Create a destination through the form; a refused one shows the API's message.
  await page.goto(`${base}/ui/#/destinations/+new`);
  await page.fill("#d-name", "crm");
  await page.fill("#d-url", "ftp://crm.example.com/hooks");
  await expecting([/status of 400/, /^400 POST .*\/api\/v1\/destinations$/], async () => {
    await page.getByRole("button", { name: "Create destination" }).click();
    await page.getByRole("alert").getByText(/^url: /).waitFor();
  });
  await checkA11y(page, "destination-new");
  await shot(page, "destination-new-error", "desktop");
  await page.fill("#d-url", `${sinkUrl}/crm`);
  await page.fill("#d-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  await page.selectOption("#d-auth", "bearer");
  await page.fill("#d-bearer", "e2e-bearer-token-5f1c2a9b7d");
  await page.check("#d-private");
  await page.getByRole("button", { name: "Create destination" }).click();
  await page.getByRole("heading", { name: "Destination crm" }).waitFor();
  await page.getByText("set (write-only)").first().waitFor();
  await page.getByText("bearer (write-only)").waitFor();
  if ((await page.content()).includes("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")) fail("the signing secret is shown after creation");
  if ((await page.content()).includes("e2e-bearer-token-5f1c2a9b7d")) fail("the bearer token is shown after creation");
  await checkText(page, "destination created through the form");
  log("created destination crm through the form");
});

step("destination detail: a preset changes the retry schedule shown", async () => {
  // 6a. A preset changed in the form changes the retry schedule shown (free: 3 attempts).
  await page.selectOption("#d-policy", "free");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Saved crm.").waitFor();
  await page.waitForFunction(() => {
    const rows = document.querySelectorAll("#schedule tbody tr");
    return rows.length === 3;
  }, null, { timeout: 5000 }).catch(() => fail("the retry schedule did not follow the saved preset"));
});

step("destination detail: an edit patches only what changed", async () => {
  // 6b. Edit it (a blank secret keeps the secret), then delete it.
  await page.fill("#d-rate", "20/s");
  // "Saved crm." still shows from 6a: wait for this save's PATCH, not for the old message.
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().endsWith("/api/v1/destinations/crm")),
    page.getByRole("button", { name: "Save changes" }).click(),
  ]);
  await page.getByText("Saved crm.").waitFor();
  const crm = await (await fetch(`${base}/api/v1/destinations/crm`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json();
  if (crm.rate_limit !== "20/s" || crm.signing_secret_set !== true) fail(`edit of crm: ${JSON.stringify(crm)}`);
  const audit = await (await fetch(`${base}/api/v1/audit?limit=1`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json();
  if (JSON.stringify(audit.items[0].detail.fields) !== '["rate_limit"]') fail(`the edit patched more than it changed: ${JSON.stringify(audit.items[0])}`);
});

step("destination detail: a client certificate; config destinations read-only with latency", async () => {
  // 6b'. A client certificate pasted into the form (issue 17): a key that does not match is
  // refused naming the field; the right one is saved, and the key is never shown again.
  const pemDir = mkdtempSync(join(tmpdir(), "hookrelay-e2e-pem-"));
  const makePair = (name) => {
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
      "-keyout", join(pemDir, `${name}.key`), "-out", join(pemDir, `${name}.pem`), "-days", "30", "-subj", `/CN=${name}`], { stdio: "ignore" });
    return { cert: readFileSync(join(pemDir, `${name}.pem`), "utf8"), key: readFileSync(join(pemDir, `${name}.key`), "utf8") };
  };
  const good = makePair("e2e-client");
  const other = makePair("e2e-other");
  rmSync(pemDir, { recursive: true, force: true });
  await page.getByText("TLS client certificate and private CA").click();
  await page.fill("#d-cert", good.cert);
  await page.fill("#d-key", other.key);
  await expecting([/status of 400/, /^400 PATCH .*\/api\/v1\/destinations\/crm$/], async () => {
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("alert").getByText(/^tls\.client_key: does not match client_cert/).waitFor();
  });
  if (await page.locator("#d-key").getAttribute("aria-invalid") !== "true") fail("the refused key's field is not marked invalid");
  await shot(page, "destination-tls-error", "desktop");
  await page.fill("#d-key", good.key);
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("CN=e2e-client, issued by CN=e2e-client").waitFor();
  await page.getByText("key set (write-only)").waitFor();
  for (const line of good.key.split("\n").filter((l) => l.length >= 16 && !l.startsWith("-----"))) {
    if ((await page.content()).includes(line)) fail("the client key is shown after saving");
  }
  if (await page.locator("#d-key").inputValue() !== "") fail("the key field was not cleared after saving");
  await checkA11y(page, "destination-tls");
  await page.evaluate(() => window.scrollTo(0, 0));  // the state: the certificate's summary
  await shot(page, "destination-tls", "desktop");
  log("a client certificate saved through the form; a mismatched key refused naming its field");
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: "Delete destination" }).click();
  await page.getByRole("heading", { name: "Destinations" }).waitFor();
  await page.locator('tr[data-name="billing"]').waitFor();
  if (await page.locator('tr[data-name="crm"]').count()) fail("crm still listed after delete");
  // A config-file destination is read-only, saying why.
  await page.goto(`${base}/ui/#/destinations/billing`);
  await page.getByText("Defined in the config file: read-only here").waitFor();
  // Its latency (p50 / p99 of its last attempts, the API's `latency`) beside its success rate:
  // the sink took 40 ms for each success, a 503 took less.
  const latencyApi = (await (await fetch(`${base}/api/v1/destinations/billing`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()).latency;
  if (!(latencyApi.samples >= 2 && latencyApi.p99_ms >= 40 && latencyApi.p99_ms >= latencyApi.p50_ms)) fail(`billing's latency is ${JSON.stringify(latencyApi)}`);
  const latencyShown = await page.locator("#latency").innerText();
  if (!/^p50 \d+ ms · p99 \d+ ms \(last \d+ attempts\)$/.test(latencyShown)) fail(`the destination page shows latency "${latencyShown}"`);
  const p99Shown = Number(/p99 (\d+) ms/.exec(latencyShown)[1]);
  if (p99Shown < 40) fail(`the destination page shows p99 ${p99Shown} ms, under the sink's 40 ms`);
  if (!/^\d+(\.\d)? % of \d+ attempts$/.test(await page.locator("#health").innerText())) fail(`the destination page shows health "${await page.locator("#health").innerText()}"`);
  if (await page.locator("#latency").evaluate((el) => el.previousElementSibling.previousElementSibling.id) !== "health") fail("the latency is not beside the success rate");
  await page.goto(`${base}/ui/#/destinations`);
  const listLatency = await page.locator('tr[data-name="billing"] .latency').innerText();
  if (!/^p50 \d+ ms · p99 \d+ ms$/.test(listLatency)) fail(`the destinations list shows latency "${listLatency}"`);
  await page.goto(`${base}/ui/#/destinations/billing`);
  await page.getByText("Defined in the config file: read-only here").waitFor();
  if (await page.getByRole("button", { name: "Save changes" }).count()) fail("a config destination has an edit form");
  log("edited and deleted crm; config destinations are read-only");
});

step("destination detail: the thundering herd chart and its scenario form", async () => {
  // 6h. The thundering herd on billing's page: its policy (a ladder without jitter) against the
  // same with equal jitter, one line each; the scenario changed in the form; a bad value named.
  const herdLines = () => page.evaluate(() => [...document.querySelectorAll("#herd svg.herd-chart polyline.strategy")]
    .map((l) => l.getAttribute("data-strategy")));
  await page.locator("#herd svg.herd-chart").waitFor();
  let lines = await herdLines();
  if (lines.length !== 2 || lines[1] !== "custom ladder/equal") fail(`the herd chart has lines ${JSON.stringify(lines)}`);
  for (const sel of ["#herd text.title", "#herd line.capacity", "#herd line.recovery", "#herd .herd-legend li", "#herd tbody tr"]) {
    if (!(await page.locator(sel).count())) fail(`the herd section has no ${sel}`);
  }
  const burstBefore = await page.locator("#herd tbody tr").first().locator("td").nth(1).innerText();
  await page.fill("#h-fail-window", "1s");
  await page.fill("#h-events", "300");
  await page.fill("#h-capacity", "20/s");
  const [rerun] = await Promise.all([
    page.waitForResponse((r) => r.url().includes("/api/v1/simulate?") && r.url().includes("fail_window=1s")),
    page.getByRole("button", { name: "Run simulation" }).click(),
  ]);
  if (rerun.status() !== 200) fail(`the re-run answered ${rerun.status()}`);
  const sent = new URL(rerun.url()).searchParams;
  if (sent.get("destination") !== "billing" || sent.get("events") !== "300" || sent.get("capacity") !== "20/s") fail(`the re-run sent ${rerun.url()}`);
  await page.waitForFunction(() => document.querySelector("#herd svg.herd-chart")?.getAttribute("aria-label").includes("Capacity 20/s"));
  lines = await herdLines();
  if (lines.length !== 2) fail(`after the re-run the herd chart has ${lines.length} lines`);
  // Without jitter the whole burst (300 in one second) comes back at once; with it, far fewer.
  const peaks = await page.locator("#herd tbody tr").evaluateAll((rows) => rows.map((r) => Number(r.children[1].textContent)));
  if (!(peaks[0] >= 250 && peaks[1] * 5 <= peaks[0])) fail(`burst peaks ${JSON.stringify(peaks)} (before: ${burstBefore})`);
  await page.locator("#herd").scrollIntoViewIfNeeded();
  await checkA11y(page, "destination-herd");
  await checkText(page, "herd (desktop)");
  await page.locator("#herd").screenshot({ path: join(outDir, "herd-desktop.png") });
  await page.fill("#h-capacity", "100/m");
  await expecting([/status of 400/, /^400 GET .*\/api\/v1\/simulate\?/], async () => {
    await page.getByRole("button", { name: "Run simulation" }).click();
    await page.locator("#herd").getByRole("alert").getByText(/^capacity: the endpoint serves a whole number/).waitFor();
  });
  if (await page.locator("#h-capacity").getAttribute("aria-invalid") !== "true") fail("the refused capacity field is not marked");
  log("thundering herd: one line per policy, scenario changed and re-run, a bad capacity named");
});

step("destination detail: the herd of a policy that gives up before the recovery", async () => {
  // 6h'. legacy gives up at its first attempt, long before the endpoint recovers: the chart peaks
  // with the first failures, nothing arrives after the recovery, nothing drains. The table says
  // its figures count from the recovery, says "gave up" rather than "drained after 0.0 s", and the
  // recovery's label (at the right edge here) is inside the chart.
  await page.goto(`${base}/ui/#/destinations/legacy`);
  await page.locator("#herd tbody tr").first().waitFor();
  const herdHead = await page.locator("#herd thead th").allInnerTexts();
  if (!herdHead.some((t) => /peak\/s after the recovery/i.test(t))) fail(`the herd table's headers do not say the peak counts from the recovery: ${herdHead}`);
  const herdRows = await page.locator("#herd tbody tr").evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
  for (const r of herdRows) {
    if (/^0(\.0)? s$/.test(r[r.length - 1]) || !/gave up/.test(r[r.length - 1])) fail(`the herd table says ${JSON.stringify(r)} when every event gave up`);
  }
  await page.locator("#herd").getByText(/counted from the recovery/).first().waitFor({ timeout: 3000 })
    .catch(() => fail("the herd section does not say its figures count from the recovery"));
  const clipped = await page.evaluate(() => {
    const s = document.querySelector("#herd svg.herd-chart");
    const label = [...s.querySelectorAll("text")].find((t) => t.textContent === "recovery");
    const b = label.getBBox();
    return b.x < 0 || b.x + b.width > Number(s.getAttribute("width")) ? JSON.stringify({ x: b.x, w: b.width, W: s.getAttribute("width") }) : "";
  });
  if (clipped) fail(`the recovery label is clipped: ${clipped}`);
  await page.locator("#herd").scrollIntoViewIfNeeded();
  await checkText(page, "herd, every event gave up");
  await page.locator("#herd").screenshot({ path: join(outDir, "herd-gave-up-desktop.png") });
  log("thundering herd of a policy that gives up before the recovery: said so, label inside");
});

step("sources and routes: created through the forms, a route deleted", async () => {
  // 6c. A source through the form (secret write-only), a route to it, and the route deleted.
  await page.goto(`${base}/ui/#/sources/+new`);
  await page.fill("#s-name", "partner");
  await page.selectOption("#s-scheme", "standard");
  await page.fill("#s-secrets", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  await page.getByRole("button", { name: "Create source" }).click();
  await page.getByRole("heading", { name: "Source partner" }).waitFor();
  await page.getByText("standard, 1 secret(s) set (write-only)").waitFor();
  await page.getByText(`${base}/in/partner`).first().waitFor();
  if ((await page.content()).includes("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")) fail("the verification secret is shown");
  await page.goto(`${base}/ui/#/routes`);
  await page.getByRole("link", { name: "New route" }).click();
  await page.selectOption("#rt-source", "partner");
  await page.selectOption("#rt-destination", "billing");
  await page.getByRole("button", { name: "Create route" }).click();
  await page.getByText("Created route partner:billing.").waitFor();
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: "Delete route partner:billing" }).click();
  await page.getByText("Deleted route partner:billing.").waitFor();
  if (await page.locator('tr[data-id="partner:billing"]').count()) fail("the deleted route is still listed");
  log("created a source and a route through the forms, deleted the route");
});

step("destination new: every field from the form, then an edit", async () => {
  // 6c'. Every field of a destination from the form: a custom policy, headers (one a secret),
  // secret_headers, forward_headers, the breaker, ordering per key, the replay window, basic
  // auth, pause_on_gone; then an edit that patches only what changed.
  await page.goto(`${base}/ui/#/destinations/+new`);
  await page.fill("#d-name", "full");
  await page.fill("#d-url", `${sinkUrl}/full`);
  await page.check("#d-private");
  await page.selectOption("#d-policy", "custom");
  await page.selectOption("#d-strategy", "exponential");
  await page.selectOption("#d-jitter", "full");
  await page.fill("#d-base", "2s");
  await page.fill("#d-cap", "1m");
  await page.fill("#d-max-attempts", "4");
  await page.fill("#d-max-duration", "2h");
  await page.fill("#d-timeout", "10s");
  await page.fill("#d-replay-window", "7d");
  await page.fill("#d-header-name-0", "X-Env");
  await page.fill("#d-header-value-0", "prod");
  await page.getByRole("button", { name: "Add header" }).click();
  await page.fill("#d-header-name-1", "X-Api-Key");
  await page.fill("#d-header-value-1", "e2e-header-secret-7f3a");
  await page.fill("#d-secret-headers", "X-Tenant-Id");
  await page.selectOption("#d-forward", "list");
  await page.fill("#d-forward-names", "X-GitHub-Event, X-Shop");
  await page.fill("#d-breaker-threshold", "5");
  await page.fill("#d-breaker-open", "1m, 5m");
  await page.fill("#d-breaker-reset", "12h");
  await page.selectOption("#d-ordering", "header");
  await page.fill("#d-order-key", "X-Shop");
  await page.selectOption("#d-auth", "basic");
  await page.fill("#d-basic-user", "relay");
  await page.fill("#d-basic-password", "e2e-basic-pass-91c");
  await page.uncheck("#d-pause-on-gone");
  await checkA11y(page, "destination-new-full");
  await checkHidden(page, "destination-new-full");
  await shot(page, "destination-new-full", "desktop");
  // The whole filled form, for docs/dashboard.md.
  await page.locator("main form").first().screenshot({ path: join(outDir, "destination-form-desktop.png") });
  await page.getByRole("button", { name: "Create destination" }).click();
  await page.getByRole("heading", { name: "Destination full" }).waitFor();
  let full = await api("/destinations/full");
  const want = {
    policy: { strategy: "exponential", jitter: "full", base: "2s", cap: "1m", max_attempts: 4, max_duration: "2h", timeout: "10s" },
    replay_window: "7d", headers: { "X-Env": "prod", "X-Api-Key": "(redacted)" }, secret_headers: ["X-Tenant-Id"],
    forward_headers: ["X-GitHub-Event", "X-Shop"], breaker_settings: { threshold: 5, open: ["1m", "5m"], escalation_reset: "12h" },
    ordered: true, order_key: { header: "X-Shop" }, auth: { type: "basic", username: "relay" }, pause_on_gone: false, allow_private: true,
  };
  const differs = (w, g) => Object.entries(w).filter(([k, v]) => (typeof v === "object" && !Array.isArray(v)
    ? differs(v, g?.[k] || {}).length : JSON.stringify(v) !== JSON.stringify(g?.[k]))).map(([k]) => k);
  if (differs(want, full).length) fail(`destination full from the form: ${differs(want, full)} differ: ${JSON.stringify(full)}`);
  for (const secret of ["e2e-header-secret-7f3a", "e2e-basic-pass-91c"]) {
    if ((await page.content()).includes(secret)) fail(`a secret (${secret.slice(0, 8)}…) is shown after creation`);
  }
  // The edit form shows what is stored; change the attempts, drop a header, stop ordering.
  if (await page.locator("#d-policy").inputValue() !== "custom" || await page.locator("#d-max-attempts").inputValue() !== "4") fail("the edit form does not show the custom policy");
  if (await page.locator("#d-order-key").inputValue() !== "X-Shop") fail("the edit form does not show the order key");
  await page.fill("#d-max-attempts", "6");
  await page.getByRole("button", { name: "Remove header X-Env" }).click();
  await page.selectOption("#d-ordering", "none");
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().endsWith("/api/v1/destinations/full")),
    page.getByRole("button", { name: "Save changes" }).click(),
  ]);
  await page.getByText("Saved full.").waitFor();
  full = await api("/destinations/full");
  if (full.policy.max_attempts !== 6 || full.policy.base !== "2s" || "X-Env" in full.headers || full.headers["X-Api-Key"] !== "(redacted)"
    || full.ordered || full.order_key !== null || full.auth?.type !== "basic") fail(`after the edit: ${JSON.stringify(full)}`);
  const fullAudit = await api("/audit?limit=1");
  if (JSON.stringify([...fullAudit.items[0].detail.fields].sort()) !== '["headers","order_key","ordered","policy"]') fail(`the edit patched ${JSON.stringify(fullAudit.items[0].detail.fields)}`);
  await page.evaluate(() => window.scrollTo(0, 0));
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: "Delete destination" }).click();
  await page.getByRole("heading", { name: "Destinations" }).waitFor();
  log("a destination with every field set through the form; an edit patched only what changed");
});

step("source new: two secrets, the hmac fields and a dedup rule", async () => {
  // 6c''. A source with two secrets (rotation), the generic hmac scheme's fields and a dedup
  // rule; a request signed with the second secret is accepted.
  await page.goto(`${base}/ui/#/sources/+new`);
  await page.fill("#s-name", "rotating");
  await page.selectOption("#s-scheme", "hmac");
  await page.fill("#s-secrets", "e2e-old-secret-aaaa\ne2e-new-secret-bbbb");
  await page.fill("#s-header", "X-Signature");
  await page.selectOption("#s-algorithm", "sha512");
  await page.selectOption("#s-encoding", "base64");
  await page.fill("#s-prefix", "v1=");
  await page.selectOption("#s-dedup", "json");
  await page.fill("#s-dedup-key", "event_id");
  await page.fill("#s-max-body", "1MiB");
  await checkA11y(page, "source-new-full");
  await checkHidden(page, "source-new-full");
  await checkText(page, "source-new-full");
  await page.locator("main form").first().screenshot({ path: join(outDir, "source-form-desktop.png") });
  await page.getByRole("button", { name: "Create source" }).click();
  await page.getByRole("heading", { name: "Source rotating" }).waitFor();
  await page.getByText("hmac, 2 secret(s) set (write-only)").waitFor();
  let rot = await api("/sources/rotating");
  if (rot.verify.header !== "X-Signature" || rot.verify.algorithm !== "sha512" || rot.verify.encoding !== "base64" || rot.verify.prefix !== "v1="
    || rot.dedup?.json !== "event_id" || rot.max_body !== "1MiB") fail(`source rotating from the form: ${JSON.stringify(rot)}`);
  if ((await page.content()).includes("e2e-new-secret-bbbb")) fail("a verification secret is shown");
  const signedBody = '{"event_id":"e2e-1"}';
  const sig = `v1=${createHmac("sha512", "e2e-new-secret-bbbb").update(signedBody).digest("base64")}`;
  const signed = await fetch(`${base}/in/rotating`, { method: "POST", headers: { "Content-Type": "application/json", "X-Signature": sig }, body: signedBody });
  if (signed.status !== 202) fail(`a request signed with the second secret answered ${signed.status}`);
  await page.selectOption("#s-dedup", "header");
  await page.fill("#s-dedup-key", "X-Delivery");
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().endsWith("/api/v1/sources/rotating")),
    page.getByRole("button", { name: "Save changes" }).click(),
  ]);
  await page.getByText("Saved rotating.").waitFor();
  rot = await api("/sources/rotating");
  if (rot.dedup?.header !== "X-Delivery" || rot.verify.secrets_set !== 2) fail(`source rotating after the edit: ${JSON.stringify(rot)}`);
  log("a source with two secrets, the hmac fields and a dedup rule through the form");
});

step("source detail: a badly signed request is listed, headers redacted", async () => {
  // 6c2. A badly signed request: 401, not forwarded, and listed on its source's page (written off
  // the request path, so the page is reloaded until the row is there).
  const badSig = await fetch(`${base}/in/signed`, { method: "POST", headers: { "Content-Type": "application/json",
    "X-Hub-Signature-256": `sha256=${"0".repeat(64)}`, Authorization: "Bearer provider-token-e2e" }, body: '{"rejected":"e2e"}' });
  if (badSig.status !== 401) fail(`a badly signed request answered ${badSig.status}`);
  await page.goto(`${base}/ui/#/sources/signed`);
  for (let i = 0; ; i++) {
    await page.getByRole("heading", { name: "Rejected requests" }).waitFor();
    await page.waitForTimeout(200);
    if (await page.locator("tr.rejection").count()) break;
    if (i === 25) { await page.screenshot({ path: join(outDir, "rejections-missing.png") }); fail("the rejected request is not listed on the source page"); }
    await page.reload();
  }
  const rejRow = page.locator("tr.rejection").first();
  await rejRow.getByText("signature mismatch").waitFor();
  await rejRow.getByText("18 B").waitFor();
  await rejRow.locator("summary").click();
  await rejRow.getByText("X-Hub-Signature-256: (redacted)").waitFor();
  // The headers expanded, at phone width too (the visits below show the page as it loads).
  await shot(page, "source-rejection-headers", "desktop");
  const desktopSize = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await rejRow.scrollIntoViewIfNeeded();
  await shot(page, "source-rejection-headers", "phone");
  await page.setViewportSize(desktopSize);
  const html = await page.content();
  if (html.includes("provider-token-e2e") || html.includes("0".repeat(64)) || html.includes("e2e-github-secret-never-shown")) fail("the rejection shows a credential");
  if (sinkHits.some((hit) => hit.body.includes("rejected"))) fail("a badly signed request was forwarded");
  log("a badly signed request: 401, not forwarded, listed with its reason, headers redacted");
});

step("event detail: binary, large and deeply nested payloads", async () => {
  // 6d. Binary payloads are shown as hex.
  const bin = await fetch(`${base}/in/shop`, { method: "POST", headers: { "Content-Type": "application/octet-stream" },
    body: new Uint8Array(Array.from({ length: 300 }, (_, i) => i % 256)) });
  const binId = (await bin.json()).id;
  await page.goto(`${base}/ui/#/events/${binId}`);
  await page.getByText("(binary, application/octet-stream)").waitFor();
  if (!(await page.locator("#payload").innerText()).startsWith("00000000  00 01 02 03")) fail("binary payload not shown as hex");
  await page.getByRole("link", { name: /^Download/ }).waitFor();
  // A large body is cut in the view, with a download of all of it.
  const big = await (await fetch(`${base}/in/shop`, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ blob: "a".repeat(100000) }) })).json();
  await page.goto(`${base}/ui/#/events/${big.id}`);
  await page.getByText(/^Showing the first 64\.0 KiB of 97\.7 KiB; download for all of it\.$/).waitFor();
  await page.getByRole("link", { name: "Download (97.7 KiB)" }).waitFor();
  // Deeply nested JSON (600 KB): cut before it is pretty-printed, and indented only so deep. It
  // was pretty-printed whole (tens of MB of indentation) and froze the tab for seconds.
  const nested = `[${Array.from({ length: 3000 }, (_, i) => `${"[".repeat(100)}${i}${"]".repeat(100)}`).join(",")}]`;
  const deep = await (await fetch(`${base}/in/shop`, { method: "POST", headers: { "Content-Type": "application/json" }, body: nested })).json();
  const t0 = Date.now();
  await page.goto(`${base}/ui/#/events/${deep.id}`);
  await page.locator("#payload").waitFor();
  const shownMs = Date.now() - t0;
  const deepText = await page.locator("#payload").innerText();
  const indent = Math.max(...deepText.split("\n").map((l) => l.length - l.trimStart().length));
  if (deepText.length > 64 * 1024 + 200) fail(`the nested payload shows ${deepText.length} characters`);
  if (indent > 80) fail(`the nested payload is indented ${indent} spaces deep`);
  if (!deepText.startsWith("[\n  [\n    [")) fail(`the nested payload is not pretty-printed: ${deepText.slice(0, 40)}`);
  await page.getByText(/^Showing the first 64\.0 KiB of \d+\.\d KiB/).waitFor({ timeout: 3000 })
    .catch(() => fail("the nested payload does not say it is cut"));
  if (shownMs > 8000) fail(`the nested payload took ${shownMs} ms to show`);
  log(`deeply nested JSON cut and pretty-printed with bounds (${shownMs} ms)`);
  log("binary payload shown as hex; a large one cut with a download");
});

step("events: paging, live arrivals that keep the list still, selection, filters in the URL", async () => {
  // 6e. Many events: pages of 50 with "Load older events"; a filter in the URL; new events
  // arrive live without moving what is on the screen; select two and replay them.
  await Promise.all(Array.from({ length: 55 }, (_, i) => ingest({ order: 1000 + i })));
  await page.goto(`${base}/ui/#/events`);
  await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 50);
  await page.getByRole("button", { name: "Load older events" }).click();
  await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 63);  // 8 + 55 (one of step 2, one of 4, two of 5, one of 6c'', three of 6d)
  await page.getByText(/events, all shown\./).waitFor();
  const anchorRow = page.locator("tbody tr").nth(30);
  await anchorRow.scrollIntoViewIfNeeded();
  const anchorId = await anchorRow.getAttribute("data-id");
  const topBefore = await page.evaluate((id) => document.querySelector(`tr[data-id="${id}"]`).getBoundingClientRect().top, anchorId);
  await ingest({ order: 2000 });
  await page.getByText("1 new event added").waitFor();
  const topAfter = await page.evaluate((id) => document.querySelector(`tr[data-id="${id}"]`).getBoundingClientRect().top, anchorId);
  if (Math.abs(topAfter - topBefore) > 2) fail(`a live update moved the list by ${topAfter - topBefore}px`);
  await page.locator("tbody tr").nth(1).locator("input[type=checkbox]").check();
  await page.locator("tbody tr").nth(2).locator("input[type=checkbox]").check();
  await page.getByText("2 selected").waitFor();
  await page.getByRole("button", { name: "Replay selected" }).click();
  await page.getByText("Replayed 2 of 2 events.").waitFor();
  await page.selectOption("#f-status", "failed");
  await page.selectOption("#f-destination", "legacy");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForURL(/#\/events\?status=failed&destination=legacy$/);
  if (await page.locator("#f-status").inputValue() !== "failed") fail("the status filter was not kept");
  log("paging, live arrival without moving the list, filters in the URL, replay of selected events");
});

step("replays: a running bulk replay is cancelled", async () => {
  // 6f. A slow bulk replay (1/s) is cancelled while it runs.
  await page.goto(`${base}/ui/#/replays/new?status=failed&destination=legacy`);
  await page.getByText(/events? match/).waitFor();
  await page.fill("#r-rate", "1/s");
  await page.getByRole("button", { name: "Start bulk replay" }).click();
  await page.getByRole("button", { name: "Cancel" }).click();
  await page.getByText("Cancelled.").waitFor();
  await page.locator(".badge.s-cancelled").waitFor();
  await page.goto(`${base}/ui/#/replays`);
  await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 2);
  log("cancelled a running bulk replay; both jobs listed");
});

// Issue 26: refreshes update the page in place, one at a time.
// The next GET of `path` (a refresh) and a moment for the page to apply it.
async function nextRefresh(p, path) {
  await p.waitForResponse((r) => r.request().method() === "GET" && new URL(r.url()).pathname === `/api/v1${path}`, { timeout: 15000 });
  await p.waitForTimeout(200);
}

step("refresh: a focused filter box keeps its focus and what was typed across a refresh", async () => {
  await page.goto(`${base}/ui/#/events`);
  await page.locator("tbody tr").first().waitFor();
  await page.click("#f-id");
  await page.keyboard.type("01J-typed");
  await nextRefresh(page, "/events");
  if (await page.evaluate(() => document.activeElement?.id) !== "f-id") fail("the event id filter lost its focus at a refresh");
  if (await page.locator("#f-id").inputValue() !== "01J-typed") fail("the event id filter lost what was typed at a refresh");
});

step("refresh: a focused row's button and a text selection survive a refresh (tables update in place)", async () => {
  await page.goto(`${base}/ui/#/destinations`);
  const pause = page.locator('tr[data-name="billing"]').getByRole("button", { name: "Pause billing" });
  await pause.focus();
  // Select the text of legacy's URL in the list, as a user copying it would.
  await page.evaluate(() => {
    const cell = document.querySelector('tr[data-name="legacy"] .mono');
    const r = document.createRange();
    r.selectNodeContents(cell);
    getSelection().removeAllRanges();
    getSelection().addRange(r);
  });
  const selected = await page.evaluate(() => getSelection().toString());
  if (!selected.endsWith("/legacy")) fail(`selected ${JSON.stringify(selected)}`);
  await nextRefresh(page, "/destinations");
  if (await page.evaluate(() => document.activeElement?.getAttribute("aria-label")) !== "Pause billing") fail("the focused Pause button lost its focus at a refresh of the destinations list");
  if (await page.evaluate(() => getSelection().toString()) !== selected) fail("the text selection was lost at a refresh of the destinations list");
  // On the event page (a refresh every 2 s) the focused replay button keeps its focus too.
  const eventId = (await api("/events?limit=1&source=shop")).items[0].id;
  await page.goto(`${base}/ui/#/events/${eventId}`);
  const rb = page.locator('.delivery[data-destination="billing"]').getByRole("button", { name: "Replay to billing" });
  await rb.focus();
  await nextRefresh(page, `/events/${eventId}`);
  if (await page.evaluate(() => document.activeElement?.textContent) !== "Replay to billing") fail("the focused replay button lost its focus at a refresh of the event page");
});

step("refresh: a slow API answer delays the next refresh instead of starting a second load", async () => {
  const jobId = (await api("/replays?limit=1")).items[0].id;
  const path = `/api/v1/replays/${jobId}`;
  let active = 0;
  let most = 0;
  let answered = 0;
  const slow = async (route) => {
    active += 1;
    most = Math.max(most, active);
    try {
      await new Promise((r) => setTimeout(r, 2500));  // the page refreshes every 1 s
      const response = await route.fetch();
      await route.fulfill({ response });
      answered += 1;
    } finally {
      active -= 1;
    }
  };
  await page.route(`**${path}`, slow);
  try {
    await page.goto(`${base}/ui/#/replays/${jobId}`);
    await page.locator("#job-total").waitFor();
    const t0 = Date.now();
    while (answered < 3 && Date.now() - t0 < 20000) await page.waitForTimeout(100);
    if (answered < 3) fail(`only ${answered} slow answers in 20 s`);
    if (most !== 1) fail(`${most} loads of ${path} ran at once (a refresh started before the last one finished)`);
  } finally {
    await page.unroute(`**${path}`, slow);
  }
});

step("overview: counts and the reasons of the latest failures", async () => {
  // 6g. The overview counts from GET /api/v1/stats and names why the latest failures failed.
  await page.goto(`${base}/ui/#/`);
  await page.getByText(/legacy: gave up after 1 of 1 attempt: 500/).first().waitFor();
  const received = await page.locator("#c-received .v").innerText();
  if (received !== "64") fail(`the overview counts ${received} received events in the last hour, not 64`);
  await page.getByText("Success rate (1 h)").waitFor();
  await page.getByText("Due backlog").waitFor();
  log("overview: counts and the reasons of the latest failures");
});

step("destination detail: ordered queues held behind their heads", async () => {
  // 6i. Ordered delivery (issue 17): per customer; every head fails, so the destination's page
  // lists the queues held behind their head (the longest waiting first), and a waiting event's
  // page says what it is held behind.
  const orderIds = {};
  for (const customer of ["cus_1", "cus_1", "cus_1", "cus_2", "cus_2", "cus_3"]) {
    const r = await fetch(`${base}/in/orders`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ customer }) });
    if (r.status !== 202) fail(`ingest to orders answered ${r.status}`);
    (orderIds[customer] ||= []).push((await r.json()).id);
  }
  await page.goto(`${base}/ui/#/destinations/orders`);
  await page.getByText("per key, from the body's customer").waitFor();
  // The heads' first attempts fail (503); the page refreshes every 4 s.
  await page.waitForFunction(() => {
    const rows = document.querySelectorAll("#held tr.held");
    return rows.length === 2 && [...rows].every((r) => /attempt 1 of 10, next retry/.test(r.textContent));
  }, null, { timeout: 20000 }).catch(() => fail("the held queues are not listed with their heads' retries"));
  const heldRows = await page.locator("#held tr.held").evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
  if (heldRows[0][0] !== "cus_1" || heldRows[0][1] !== "2" || heldRows[0][2] !== orderIds.cus_1[0]) fail(`first held queue: ${JSON.stringify(heldRows[0])}`);
  if (heldRows[1][0] !== "cus_2" || heldRows[1][1] !== "1" || heldRows[1][2] !== orderIds.cus_2[0]) fail(`second held queue: ${JSON.stringify(heldRows[1])}`);
  if (!heldRows[0][4].includes("503")) fail(`the head's reason is not shown: ${heldRows[0][4]}`);
  await page.getByText("2 ordered queues have events waiting behind their head").waitFor();
  await page.locator("#held").scrollIntoViewIfNeeded();
  await checkA11y(page, "destination-held");
  await shot(page, "destination-held", "desktop");
  await page.locator("#held tr.held").first().getByRole("link").click();
  await page.getByRole("heading", { name: `Event ${orderIds.cus_1[0]}` }).waitFor();
  await page.goto(`${base}/ui/#/events/${orderIds.cus_1[2]}`);
  await page.locator('.delivery[data-destination="orders"]').getByText(/ordered \(key cus_1\): held behind/).waitFor();
  await page.getByRole("link", { name: orderIds.cus_1[0] }).waitFor();
  // The overview counts the held events in the due backlog without calling them overdue.
  await page.goto(`${base}/ui/#/`);
  await page.locator("#c-backlog").getByText("held behind ordered queues' heads").waitFor();
  log("ordered: the destination lists its held queues; a waiting event names its head");
});

step("errors: an API error shows a message; a 503 list page offers \"Try again\"", async () => {
  // 7. An API error on a page shows a message, never a blank page.
  await expecting([/status of 400/, /^400 GET .*\/api\/v1\/events\//], async () => {
    await page.goto(`${base}/ui/#/events/01XXXX`);
    await page.getByRole("alert").waitFor();
  });
  if (!(await page.getByRole("alert").innerText()).trim()) fail("the API error message is empty");
  // A store that cannot answer (503) on a list page: the message, and "Try again" once it can.
  let storeDown = true;
  await page.route("**/api/v1/destinations", (route) => (storeDown
    ? route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"code":"unavailable","message":"store: disk I/O error (scripted)"}}' })
    : route.continue()));
  await expecting([/status of 503/, /^503 GET .*\/api\/v1\/destinations$/], async () => {
    await page.goto(`${base}/ui/#/destinations`);
    await page.getByText("Could not load this page: store: disk I/O error (scripted)").waitFor();
  });
  storeDown = false;
  await page.getByRole("button", { name: "Try again" }).click();
  await page.locator('tr[data-name="billing"]').waitFor();
  await page.unroute("**/api/v1/destinations");
  log("API error shows a message");
});

// Issue 27: a source whose events carry a type, a route taking invoice.* only, and four events:
// two invoices (one small), a customer event and one without a type (both unrouted).
async function apiSend(method, path, body) {
  const r = await fetch(`${base}/api/v1${path}`, { method, body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" } });
  if (r.status >= 300) fail(`${method} ${path} answered ${r.status}: ${await r.text()}`);
  return r.json();
}
const typed = {};
step("routing: the type column, the type and unrouted filters, an unrouted event replayed to a destination", async () => {
  await apiSend("POST", "/sources", { name: "typed", type: { json: "type" } });
  await apiSend("POST", "/destinations", { name: "crm", url: `${sinkUrl}/crm`, allow_private: true });
  await apiSend("POST", "/routes", { source: "typed", destination: "billing", types: ["invoice.*"] });
  const send = async (payload) => (await fetch(`${base}/in/typed`, { method: "POST", body: JSON.stringify(payload),
    headers: { "Content-Type": "application/json" } })).json();
  typed.paid = (await send({ type: "invoice.paid", amount: 5000 })).id;
  typed.created = (await send({ type: "invoice.created", amount: 20 })).id;
  typed.customer = (await send({ type: "customer.created", amount: 7000 })).id;
  typed.none = (await send({ amount: 1 })).id;
  await page.goto(`${base}/ui/#/events?source=typed`);
  const rowOf = (id) => page.locator(`tbody tr[data-id="${id}"]`);
  await rowOf(typed.none).waitFor();
  if ((await rowOf(typed.paid).locator("td.type-cell").innerText()) !== "invoice.paid") fail("the Type column does not show invoice.paid");
  if ((await rowOf(typed.none).locator("td.type-cell").innerText()) !== "—") fail("an event without a type does not show a dash");
  for (const id of [typed.customer, typed.none]) await rowOf(id).locator(".badge.s-unrouted").getByText("unrouted").waitFor();
  if (await rowOf(typed.paid).locator(".s-unrouted").count()) fail("a routed event is marked unrouted");
  // The type filter, in the URL like the others.
  await page.fill("#f-type", "invoice.*");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForFunction(() => location.hash.includes("type=invoice.*") && document.querySelectorAll("tbody tr").length === 2);
  if (!(await rowOf(typed.paid).count()) || !(await rowOf(typed.created).count())) fail("type=invoice.* does not show the two invoices");
  // Unrouted only (the type cleared): the customer event and the one without a type.
  await page.fill("#f-type", "");
  await page.selectOption("#f-routed", "false");
  await page.getByRole("button", { name: "Apply" }).click();
  await page.waitForFunction(() => /routed=false/.test(location.hash) && !/type=/.test(location.hash));
  await page.waitForFunction((ids) => { const shown = [...document.querySelectorAll("tbody tr")].map((r) => r.dataset.id);
    return shown.length === 2 && ids.every((i) => shown.includes(i)); }, [typed.customer, typed.none]);
  await page.reload();  // the filters come back from the URL
  if (await page.inputValue("#f-routed") !== "false") fail("the routed filter is not restored from the URL");
  await visit(page, "#/events?source=typed", "events-typed", "desktop", `tr[data-id="${typed.none}"]`);
  await visit(await phonePage(), "#/events?source=typed", "events-typed", "phone", `tr[data-id="${typed.none}"]`);
  // The unrouted customer event: its type, what the route said, and a replay to crm from its page.
  await page.goto(`${base}/ui/#/events/${typed.customer}`);
  await page.locator("#event-type").getByText("customer.created").waitFor();
  const verdict = page.locator('#routing tr[data-destination="billing"]');
  await verdict.getByText("skipped").waitFor();
  await verdict.getByText("type customer.created is not in [invoice.*]").waitFor();
  await checkA11y(page, "event-unrouted");
  await visit(await phonePage(), `#/events/${typed.customer}`, "event-unrouted", "phone", "#send");
  await page.selectOption("#send-destination", "crm");
  await page.getByRole("button", { name: "Replay to destination" }).click();
  await page.getByText(/Replay started: crm \(replay 1\)/).waitFor();
  await page.locator('.delivery[data-destination="crm"]').getByText(/delivered at attempt 1 of/).waitFor({ timeout: 20000 });
  if (!sinkHits.some((x) => x.path === "/crm" && x.body.includes("customer.created"))) fail("the sink did not receive the unrouted event at /crm");
  await page.locator("#send").waitFor();  // still unrouted: it may go to another destination too
  await shot(page, "event-unrouted", "desktop");
  // The event a route took says so.
  await page.goto(`${base}/ui/#/events/${typed.paid}`);
  await page.locator('#routing tr[data-destination="billing"]').getByText("took it").waitFor();
  if (await page.locator("#send").count()) fail("a routed event offers the unrouted replay");
  log("type column and filters; an unrouted event replayed to crm from its page");
});

step("routes: the editor, a filter error named by its path, the dry run, a route created and edited", async () => {
  await page.goto(`${base}/ui/#/routes/+new`);
  await page.selectOption("#rt-source", "typed");
  await page.selectOption("#rt-destination", "crm");
  await page.fill("#rt-types", "invoice.*\ncustomer.*");
  await page.fill("#rt-filter", '{"body": {"amount": {"$gt": true}}}');
  await expecting([/status of 400/, /^400 POST .*\/api\/v1\/routes\/test/], async () => {
    await page.click("#rt-test");
    await page.locator("#rt-filter-error").getByText("filter.body.amount.$gt: expects a number or a string").waitFor();
  });
  if (await page.getAttribute("#rt-filter", "aria-invalid") !== "true") fail("the filter is not marked invalid");
  if (await page.evaluate(() => document.activeElement?.id) !== "rt-filter") fail("the refused filter does not get the focus");
  await shot(page, "route-editor-error", "desktop");
  // Fixed: the dry run (debounced as it is typed, and on Test) over the source's last events.
  await page.fill("#rt-filter", '{"body": {"amount": {"$gte": 1000}}}');
  await page.click("#rt-test");
  await page.locator("#dry-summary").getByText("2 of 4").waitFor();
  if (await page.locator("#rt-filter-error").isVisible()) fail("the filter error is still shown");
  const dryRow = (id) => page.locator(`#rt-dry tr[data-id="${id}"]`);
  await dryRow(typed.paid).getByText("taken").waitFor();
  await dryRow(typed.customer).getByText("taken").waitFor();
  await dryRow(typed.created).getByText("body.amount: expected a value >= 1000, got 20").waitFor();
  await dryRow(typed.none).getByText("the event has no type; the route wants [invoice.*, customer.*]").waitFor();
  await checkA11y(page, "route-editor");
  await shot(page, "route-editor", "desktop");
  await page.getByRole("button", { name: "Create route" }).click();
  await page.getByText("Created route typed:crm.").waitFor();
  const created = await api("/routes/typed:crm");
  if (JSON.stringify(created.types) !== '["invoice.*","customer.*"]' || created.filter?.body?.amount?.$gte !== 1000) {
    fail(`the route was created as ${JSON.stringify(created)}`);
  }
  // An edit replaces the filter (not merged into the old one, null values kept), types trimmed.
  await page.fill("#rt-types", "customer.*");
  await page.fill("#rt-filter", '{"body": {"amount": {"$lt": 10000}, "note": null}}');
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByText("Saved route typed:crm.").waitFor();
  const edited = await api("/routes/typed:crm");
  if (JSON.stringify(edited.types) !== '["customer.*"]' || JSON.stringify(edited.filter) !== '{"body":{"amount":{"$lt":10000},"note":null}}') {
    fail(`the route was edited to ${JSON.stringify(edited)}`);
  }
  await visit(await phonePage(), "#/routes/typed:crm", "route-editor", "phone", "#dry-summary");
  await (await phonePage()).screenshot({ path: join(outDir, "route-editor-full-phone.png"), fullPage: true });
  // The list shows the types and that it has a filter; a config-file route is read-only.
  await page.goto(`${base}/ui/#/routes`);
  const listed = page.locator('tr[data-id="typed:crm"]');
  await listed.locator(".chip").getByText("customer.*").waitFor();
  await listed.getByText("yes").waitFor();
  await page.goto(`${base}/ui/#/routes/shop:billing`);
  await page.getByText("Defined in the config file").waitFor();
  await page.locator("#dry-summary").waitFor();
  if (await page.locator("#rt-save").count() || (await page.locator("#rt-types").getAttribute("readonly")) === null) fail("a config-file route is editable");
  log("route editor: filter error by path, dry run, created and edited");
});

// Issue 27: transforms. A destination whose transform adds a header and renames a JSON field, a
// route beside it to a destination without one; the attempt row shows what was sent, the preview
// shows what the current transform would send; route overrides that return null and that throw.
step("transforms: an attempt shows what its transform sent; the preview; a skip and an error with its line", async () => {
  const rename = [
    "function transform(request) {",
    "  const { amount, ...rest } = request.json;",
    "  request.json = { ...rest, amount_cents: amount };",
    "  request.headers['x-shaped-by'] = 'hookrelay';",
    "  return request;",
    "}"].join("\n");
  await apiSend("POST", "/sources", { name: "shapes" });
  await apiSend("POST", "/destinations", { name: "shaped", url: `${sinkUrl}/shaped?v=2`, allow_private: true, transform: rename });
  await apiSend("POST", "/destinations", { name: "plain", url: `${sinkUrl}/plain`, allow_private: true });
  await apiSend("POST", "/routes", { source: "shapes", destination: "shaped" });
  await apiSend("POST", "/routes", { source: "shapes", destination: "plain" });
  const ingested = await fetch(`${base}/in/shapes`, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ order: 7, amount: 1250, currency: "eur", lines: [{ sku: "A-1", qty: 2 }] }) });
  if (ingested.status !== 202) fail(`ingest to shapes answered ${ingested.status}`);
  const eventId = (await ingested.json()).id;
  await page.goto(`${base}/ui/#/events/${eventId}`);
  const shaped = page.locator('.delivery[data-destination="shaped"]');
  const plain = page.locator('.delivery[data-destination="plain"]');
  await shaped.getByText(/delivered at attempt 1 of/).waitFor({ timeout: 20000 });
  await plain.getByText(/delivered at attempt 1 of/).waitFor({ timeout: 20000 });
  // What the sink received is what the attempt row describes.
  const hit = sinkHits.find((x) => x.path.startsWith("/shaped") && x.body.includes('"order":7'));
  if (!hit) fail("the sink did not receive the transformed event");
  if (hit.headers["x-shaped-by"] !== "hookrelay" || !hit.body.includes('"amount_cents":1250') || hit.body.includes('"amount":')) {
    fail(`the sink received ${JSON.stringify({ headers: hit.headers, body: hit.body })}`);
  }
  const sha = createHash("sha256").update(hit.body).digest("hex");
  const sent = (await api(`/events/${eventId}`)).deliveries.find((d) => d.destination === "shaped").attempts[0].transformed;
  if (!sent || sent.body_sha256 !== sha || sent.body_size !== Buffer.byteLength(hit.body) || !sent.headers_changed.includes("x-shaped-by")) {
    fail(`the attempt's transformed is ${JSON.stringify(sent)}; the sink got ${Buffer.byteLength(hit.body)} bytes, SHA-256 ${sha}`);
  }
  const cell = shaped.locator("td.transformed").first();
  await cell.getByText(`${sent.body_size} B`).waitFor();
  const abbr = cell.locator("abbr.sha");
  if (await abbr.innerText() !== sha.slice(0, 12) || await abbr.getAttribute("title") !== sha) fail("the attempt row does not show the body's SHA-256 (12 digits, all of it on hover)");
  const chips = await cell.locator(".chip").allInnerTexts();
  if (JSON.stringify(chips) !== JSON.stringify(sent.headers_changed)) fail(`the attempt row shows the headers changed as ${JSON.stringify(chips)}, not ${JSON.stringify(sent.headers_changed)}`);
  // A destination without a transform: no Transform column, no preview.
  if (await plain.locator("td.transformed").count() || await plain.getByRole("button", { name: /Preview/ }).count()) fail("the delivery to plain (no transform) shows transform details or a preview");
  log(`the attempt row shows ${sent.body_size} B, ${sha.slice(0, 12)}, changed ${sent.headers_changed.join(", ")}`);

  // The preview: the current transform on this event, nothing sent.
  const hitsBefore = sinkHits.length;
  await shaped.getByRole("button", { name: "Preview transformed request to shaped" }).click();
  const pv = shaped.locator("section.preview");
  await pv.locator(".request-line").getByText("POST /shaped?v=2", { exact: true }).waitFor();
  if (await page.evaluate(() => document.activeElement?.className) !== "preview-heading") fail("the preview does not get the focus");
  const headerRow = pv.locator("tbody tr", { has: page.locator("td", { hasText: /^x-shaped-by$/ }) });
  if (await headerRow.locator("td").nth(1).innerText() !== "hookrelay") fail("the preview does not show the added header");
  const previewBody = await pv.locator("pre").innerText();
  if (!previewBody.includes('"amount_cents": 1250') || previewBody.includes('"amount":') || !previewBody.includes('\n  "lines": [')) {
    fail(`the preview's body is not the renamed field, pretty-printed: ${previewBody}`);
  }
  if (await pv.locator("dd.sha").innerText() !== sha) fail("the preview's SHA-256 differs from what the same transform sent");
  await pv.getByText(/^\d+\.\d\d ms$/).waitFor();  // CPU
  if (sinkHits.length !== hitsBefore) fail("the preview sent a request");
  await checkPage(page, "event-transform", "desktop");
  await shaped.screenshot({ path: join(outDir, "event-transform-preview-desktop.png") });
  const p = await phonePage();
  await p.goto(`${base}/ui/#/events/${eventId}`);
  const shapedPhone = p.locator('.delivery[data-destination="shaped"]');
  await shapedPhone.getByRole("button", { name: "Preview transformed request to shaped" }).click();
  await shapedPhone.locator("section.preview pre").waitFor();
  await checkPage(p, "event-transform", "phone");
  await shapedPhone.screenshot({ path: join(outDir, "event-transform-preview-phone.png") });
  // On a phone the attempts stack, one attempt per block, each cell beside its column's name.
  const stacked = await shapedPhone.locator("td.transformed").first().evaluate((td) => ({
    label: td.dataset.label, display: getComputedStyle(td).display }));
  if (stacked.label !== "Transform" || stacked.display !== "grid") fail(`the attempts do not stack on a phone: ${JSON.stringify(stacked)}`);
  await p.screenshot({ path: join(outDir, "event-transform-full-phone.png"), fullPage: true });
  log("the preview shows the added header and the renamed field");

  // Route overrides: a route's transform replaces its destination's. plain now skips (a route
  // transform returning null; its Preview button appears on the next refresh), and shaped throws.
  await apiSend("PATCH", "/routes/shapes:plain", { transform: "function transform(request) {\n  return null;\n}" });
  await plain.getByRole("button", { name: "Preview transformed request to plain" }).click({ timeout: 10000 });
  await plain.locator("section.preview").getByText("The transform returns null: this delivery would be skipped.").waitFor();
  await plain.screenshot({ path: join(outDir, "event-transform-skip-desktop.png") });
  await apiSend("PATCH", "/routes/shapes:shaped", { transform: "function transform(request) {\n  const order = request.json;\n  return order.customer.name;\n}" });
  await expecting([/status of 422/, /^422 POST .*\/api\/v1\/transforms\/test$/], async () => {
    await shaped.getByRole("button", { name: "Preview transformed request to shaped" }).click();
    await pv.getByRole("alert").getByText(/The transform fails on this event: TypeError: .+ \(line 3\)\. A delivery or replay of this event would fail now/).waitFor();
  });
  await checkA11y(page, "event-transform-error");
  await checkText(page, "event-transform-error");
  await shaped.screenshot({ path: join(outDir, "event-transform-error-desktop.png") });
  // Close: the preview goes, the focus returns to its button.
  await pv.getByRole("button", { name: "Close the preview of the request to shaped" }).click();
  await pv.waitFor({ state: "detached" });
  if (await page.evaluate(() => document.activeElement?.getAttribute("aria-label")) !== "Preview transformed request to shaped") fail("closing the preview does not return the focus to its button");
  log("route overrides: a null transform previews as skipped, a throwing one shows its error and line");
});

// 8. Every page at both sizes, with axe (visit: nothing sticking out, nothing hidden shown, no
// leaked values, a screenshot each), one test per page.
let phone;  // the phone page (390×844), signed in through sessionStorage
async function phonePage() {
  if (!phone) {
    phone = await newPage({ width: 390, height: 844 });
    await phone.page.goto(`${base}/ui/`);
    await phone.page.evaluate((t) => sessionStorage.setItem("hookrelay.token", t), TOKEN);
  }
  return phone.page;
}
const lastEventId = async () => { const items = (await api("/events?limit=1&source=shop")).items; return items[items.length - 1].id; };
const lastJobId = async () => (await api("/replays?limit=1")).items[0].id;
const pages = [
  [async () => "", "overview", "#c-received"],
  [async () => "#/events", "events", "tbody tr"],
  [async () => `#/events/${await lastEventId()}`, "event", ".delivery"],
  [async () => "#/destinations", "destinations", 'tr[data-name="billing"]'],
  [async () => "#/destinations/billing", "destination", "#state"],
  [async () => "#/destinations/orders", "destination-ordered", "#held tr.held"],
  [async () => "#/destinations/+new", "destination-new", "#d-name"],
  [async () => "#/sources", "sources", "tbody tr"],
  [async () => "#/sources/shop", "source", "dl.kv"],
  [async () => "#/sources/signed", "source-rejections", "tr.rejection"],
  [async () => "#/routes", "routes", "tbody tr"],
  [async () => "#/routes/+new", "route-new", "#dry-summary"],
  [async () => "#/replays", "replays", "tbody tr"],
  [async () => `#/replays/${await lastJobId()}`, "replay", "#job-total"],
  [async () => "#/audit", "audit", "tbody tr"],
];
for (const [hashOf, name, ready] of pages) {
  step(`page ${name}: desktop and phone, axe clean`, async () => {
    const hash = await hashOf();
    await visit(page, hash, name, "desktop", ready);
    await visit(await phonePage(), hash, name, "phone", ready);
  });
}

step("destination detail on a phone: the herd chart drawn for the width, the held queues stacked", async () => {
  const p = await phonePage();
  // The herd chart on a phone: drawn for the width, nothing sticking out (visit checked), legible.
  await p.goto(`${base}/ui/#/destinations/billing`);
  await p.locator("#herd svg.herd-chart").waitFor();
  const phoneChart = await p.evaluate(() => {
    const s = document.querySelector("#herd svg.herd-chart");
    return { lines: s.querySelectorAll("polyline.strategy").length, width: s.getBoundingClientRect().width,
      drawn: Number(s.getAttribute("width")), page: document.documentElement.scrollWidth, view: window.innerWidth };
  });
  if (phoneChart.lines !== 2) fail(`the herd chart on a phone has ${phoneChart.lines} lines`);
  if (phoneChart.page > phoneChart.view + 1) fail(`the destination page scrolls sideways on a phone (${phoneChart.page} > ${phoneChart.view})`);
  // Drawn at (about) the width shown, so 12 px text stays 12 px.
  if (Math.abs(phoneChart.width - phoneChart.drawn) > 2) fail(`the herd chart is scaled on a phone: drawn ${phoneChart.drawn}, shown ${phoneChart.width}`);
  await p.locator("#herd").scrollIntoViewIfNeeded();
  await checkText(p, "herd (phone)");
  await p.locator("#herd").screenshot({ path: join(outDir, "herd-phone.png") });
  // The held queues on a phone: the table stacked, one queue per block.
  await p.goto(`${base}/ui/#/destinations/orders`);
  await p.locator("#held tr.held").first().waitFor();
  await p.locator("#held").scrollIntoViewIfNeeded();
  await checkText(p, "held queues (phone)");
  await p.locator("#held").screenshot({ path: join(outDir, "destination-held-phone.png") });
  log("every page at 1280×800 and 390×844, axe clean");
});

// ---- "Rotate secret" on a destination's and a source's page (pages/rotate.js), on `page`.
// Opens the panel: its button says it is expanded, the grace period has the focus and is 24h.
async function openRotate() {
  await page.locator("#rotate-open").click();
  await page.locator("#rotate").waitFor();
  if (await page.locator("#rotate-open").getAttribute("aria-expanded") !== "true") fail("the open rotate form's button is not aria-expanded");
  if (await page.evaluate(() => document.activeElement?.id) !== "r-grace") fail("opening the rotate form does not focus the grace period");
  if (await page.locator("#r-grace").inputValue() !== "24h") fail("the grace period does not default to 24h");
}

// "Rotate now", confirmed; resolves to the confirmation's question and the API's answer.
async function rotateNow(path) {
  let question = "";
  page.once("dialog", (d) => { question = d.message(); d.accept(); });
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith(`/api/v1${path}`)),
    page.getByRole("button", { name: "Rotate now" }).click(),
  ]);
  return { question, answer };
}

// "Rotate now", refused by the server: its message (`text`) under the form, the field it names
// (#`field`) marked and focused, and a screenshot of the panel as `shotName`.
async function rotateRefused(path, text, field, shotName) {
  const url = new RegExp(`^400 POST .*/api/v1${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
  await expecting([/status of 400/, url], async () => {
    await rotateNow(path);
    await page.locator("#rotate").getByRole("alert").getByText(text).waitFor();
  });
  if (await page.locator(`#${field}`).getAttribute("aria-invalid") !== "true") fail(`the refused #${field} is not marked invalid`);
  if (await page.evaluate(() => document.activeElement?.id) !== field) fail(`the refused #${field} does not get the focus`);
  await checkA11y(page, shotName);
  await checkText(page, shotName);
  await page.locator("#rotate").screenshot({ path: join(outDir, `${shotName}-desktop.png`) });
}

// The generated secret shown once: the answer's, not the old one, focused, copied by Copy; then
// the page with it at both widths (`shotName`).
async function checkSecretShown(secret, oldSecret, noun, shotName) {
  const box = page.locator("#rotate .secret-box");
  await box.getByText("Copy it now: it will not be shown again.").waitFor();
  const shown = await box.locator("#new-secret").innerText();
  if (!shown.startsWith("whsec_") || shown !== secret || shown === oldSecret) fail(`the new secret shown is ${JSON.stringify(shown)}, the answer's ${JSON.stringify(secret)}`);
  if (await page.evaluate(() => document.activeElement?.className) !== "secret-heading") fail("the new secret's box does not get the focus");
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  await box.getByRole("button", { name: `Copy the new ${noun}` }).click();
  await box.locator(".copy").getByText("Copied", { exact: true }).waitFor({ timeout: 3000 }).catch(() => fail("Copy does not say Copied"));
  if (await page.evaluate(() => navigator.clipboard.readText()) !== secret) fail("Copy did not put the new secret on the clipboard");
  // Back to "Copy" (axe: the visible text is part of the button's name again) before the checks.
  await page.waitForFunction(() => document.querySelector("#rotate .copy")?.textContent === "Copy");
  await checkRotatePanel(shotName);
}

// The page with the rotate panel scrolled into view, at both widths (checkPage).
async function checkRotatePanel(shotName) {
  await page.locator("#rotate").scrollIntoViewIfNeeded();
  await checkPage(page, shotName, "desktop");
  const desktopSize = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator("#rotate").scrollIntoViewIfNeeded();
  await checkPage(page, shotName, "phone");
  await page.setViewportSize(desktopSize);
}

// Done: the secret leaves the page for good; the focus returns to the button.
async function rotateDone(secret) {
  await page.locator("#rotate .secret-box").getByRole("button", { name: "Done" }).click();
  await page.locator("#rotate").waitFor({ state: "hidden" });
  if ((await page.content()).includes(secret.slice(6))) fail("the new secret is still in the page after Done");
  if (await page.evaluate(() => document.activeElement?.id) !== "rotate-open") fail("closing the rotate form does not return the focus to its button");
}

// Hours until an RFC 3339 time.
const hoursUntil = (iso) => (Date.parse(iso) - Date.now()) / 3600000;
// A local time a day from now, as time() shows it: "19:38:33 (in 24 h)", with the date when not today.
const inADay = String.raw`(\d{1,2} \w{3} \d{4}, )?\d\d:\d\d:\d\d \(in 24 h\)`;

// A destination's signing secret rotated from its page: a grace period refused by the server,
// then the new secret shown once, the state saying until when the previous one also signs, and
// both signing every request meanwhile. After the page tests: its event would change what they show.
step("destination detail: the signing secret rotated with a grace period, the new one shown once", async () => {
  const oldSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
  const path = "/destinations/rotor/rotate-secret";
  await apiSend("POST", "/sources", { name: "rotor" });
  await apiSend("POST", "/destinations", { name: "rotor", url: `${sinkUrl}/rotor`, allow_private: true, signing_secret: oldSecret });
  await apiSend("POST", "/routes", { source: "rotor", destination: "rotor" });
  await page.goto(`${base}/ui/#/destinations/rotor`);
  await page.locator("#signing-secret").waitFor();
  if (await page.locator("#signing-secret").innerText() !== "set (write-only)") fail(`before the rotation the state shows the signing secret as ${await page.locator("#signing-secret").innerText()}`);
  await openRotate();
  // A grace period the server refuses: nothing rotated.
  await page.fill("#r-grace", "8d");
  await rotateRefused(path, /^Not rotated: grace: must be from 0s to 7d/, "r-grace", "destination-rotate-error");
  if ((await api("/destinations/rotor")).signing_secret_rotation !== null) fail("a refused rotation rotated the secret");
  // The confirmation says how long the previous secret still signs; then the new secret, once.
  await page.fill("#r-grace", "24h");
  const { question, answer } = await rotateNow(path);
  if (!question.includes("The previous secret also signs for 24h")) fail(`the confirmation asks ${JSON.stringify(question)}`);
  const secret = (await answer.json()).signing_secret;
  // The state says until when the previous secret also signs: a day from now, local time.
  await page.locator("#signing-secret", { hasText: "rotating" }).waitFor();
  const line = await page.locator("#signing-secret").innerText();
  if (!new RegExp(`^set \\(write-only\\) · rotating: the previous secret also signs until ${inADay}$`).test(line)) fail(`the state shows the signing secret as ${JSON.stringify(line)}`);
  const rot = await api("/destinations/rotor");
  const left = hoursUntil(rot.signing_secret_rotation?.old_expires_at);
  if (!(left > 23.9 && left <= 24.01)) fail(`after the rotation the destination shows ${JSON.stringify(rot.signing_secret_rotation)}`);
  if (JSON.stringify(rot).includes(secret.slice(6))) fail("the destination's GET shows the new secret");
  await checkSecretShown(secret, oldSecret, "signing secret", "destination-rotate-secret");
  log(`rotated rotor's secret: ${secret.slice(0, 10)}… shown once, the previous one signs for 24 h`);

  // Meanwhile every request carries both signatures, the new one first.
  const ingested = await fetch(`${base}/in/rotor`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"rotated":true}' });
  if (ingested.status !== 202) fail(`ingest to rotor answered ${ingested.status}`);
  let hit;
  for (let i = 0; i < 100 && !hit; i++) {
    hit = sinkHits.find((x) => x.path === "/rotor");
    if (!hit) await new Promise((r) => setTimeout(r, 100));
  }
  if (!hit) fail("the sink did not receive the event to rotor");
  const sign = (s) => `v1,${standardSignature(s, hit.headers["webhook-id"], hit.headers["webhook-timestamp"], hit.body)}`;
  if (hit.headers["webhook-signature"] !== `${sign(secret)} ${sign(oldSecret)}`) fail(`rotor received webhook-signature ${hit.headers["webhook-signature"]}, not the new and the old secret's`);

  await rotateDone(secret);
  await page.evaluate(() => window.scrollTo(0, 0));
  await checkPage(page, "destination-rotating", "desktop");
  await visit(await phonePage(), "#/destinations/rotor", "destination-rotating", "phone", "#signing-secret time");
  // A config-file destination has no "Rotate secret": the file owns its secret.
  await page.goto(`${base}/ui/#/destinations/billing`);
  await page.getByText("Defined in the config file: read-only here").waitFor();
  if (await page.locator("#rotate-open, #rotate").count()) fail("a config destination offers to rotate its secret");
  log("both secrets sign during the grace period; Done removes the secret; config destinations have no Rotate");
});

// The Standard Webhooks signature (base64 HMAC-SHA256 of "id.timestamp.body") with a whsec_ secret.
function standardSignature(secret, id, ts, body) {
  return createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${id}.${ts}.${body}`).digest("base64");
}

// A source's verification secret rotated from its page: a typed secret the server refuses, then a
// generated one shown once, the state and the list saying until when the previous one also
// verifies, and both verifying meanwhile; a Stripe source needs the secret typed (Stripe makes it).
// After the page tests: its events would change what they show.
step("source detail: the verification secret rotated with a grace period, the new one shown once", async () => {
  const oldSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const path = "/sources/inbound/rotate-secret";
  await apiSend("POST", "/sources", { name: "inbound", verify: { scheme: "standard", secrets: [oldSecret] } });
  await apiSend("POST", "/sources", { name: "payments", verify: { scheme: "stripe", secrets: ["whsec_e2e_stripe_old_secret"] } });
  await apiSend("POST", "/sources", { name: "unsigned" });
  await page.goto(`${base}/ui/#/sources/inbound`);
  await page.locator("#verification").waitFor();
  if (await page.locator("#verification").innerText() !== "standard, 1 secret(s) set (write-only)") fail(`before the rotation the source shows ${await page.locator("#verification").innerText()}`);
  await openRotate();
  if (await page.locator("#r-secret").evaluate((x) => x.required)) fail("a standard source's new secret is required");
  // A typed secret the server refuses (not whsec_ + base64): nothing rotated.
  await page.fill("#r-secret", "whsec_not base64!");
  await rotateRefused(path, /^Not rotated: secret: must .*whsec_/, "r-secret", "source-rotate-error");
  if ((await api("/sources/inbound")).verify.secrets_rotation !== null) fail("a refused rotation rotated the secret");
  // A blank secret: the server generates one, shown this once.
  await page.fill("#r-secret", "");
  const { question, answer } = await rotateNow(path);
  if (!question.includes("The current secret also verifies for 24h")) fail(`the confirmation asks ${JSON.stringify(question)}`);
  if (JSON.stringify(answer.request().postDataJSON()) !== '{"grace":"24h"}') fail(`the rotation sent ${answer.request().postData()}`);
  const secret = (await answer.json()).secret;
  // The state says until when the previous secret also verifies: a day from now, local time.
  await page.locator("#verification", { hasText: "rotating" }).waitFor();
  const line = await page.locator("#verification").innerText();
  if (!new RegExp(`^standard, 1 secret\\(s\\) set \\(write-only\\) · rotating: the previous secret also verifies until ${inADay}$`).test(line)) fail(`the state shows the verification as ${JSON.stringify(line)}`);
  const rot = await api("/sources/inbound");
  const left = hoursUntil(rot.verify.secrets_rotation?.old_expires_at);
  if (rot.verify.secrets_rotation?.old_secrets !== 1 || !(left > 23.9 && left <= 24.01)) fail(`after the rotation the source shows ${JSON.stringify(rot.verify)}`);
  if (JSON.stringify(rot).includes(secret.slice(6))) fail("the source's GET shows the new secret");
  await checkSecretShown(secret, oldSecret, "verification secret", "source-rotate-secret");
  // Meanwhile a request signed with either secret is accepted.
  for (const [which, key] of [["new", secret], ["previous", oldSecret]]) {
    const body = `{"signed_with":"${which}"}`;
    const id = `msg_e2e_${which}`;
    const ts = String(Math.floor(Date.now() / 1000));
    const r = await fetch(`${base}/in/inbound`, { method: "POST", body,
      headers: { "Content-Type": "application/json", "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": `v1,${standardSignature(key, id, ts, body)}` } });
    if (r.status !== 202) fail(`a request signed with the ${which} secret answered ${r.status}`);
  }
  await rotateDone(secret);
  // The list says it too, in the Verification column.
  const row = 'tr:has(a[href="#/sources/inbound"])';
  await visit(page, "#/sources", "sources-rotating", "desktop", `${row} time`);
  const cell = await page.locator(`${row} td`).nth(2).innerText();
  if (!new RegExp(`^standard \\(1 secret\\)\\s+rotating: the previous secret also verifies until\\s+${inADay}$`).test(cell)) fail(`the sources list shows ${JSON.stringify(cell)}`);
  await visit(await phonePage(), "#/sources", "sources-rotating", "phone", `${row} time`);
  log(`rotated inbound's secret: ${secret.slice(0, 10)}… shown once; both secrets verify for 24 h`);

  // A Stripe source: the secret is required (Stripe makes it); without it the server's 400 names it.
  await page.goto(`${base}/ui/#/sources/payments`);
  await openRotate();
  if (!(await page.locator("#r-secret").evaluate((x) => x.required))) fail("a stripe source's new secret is not required");
  await page.getByText("Required: the new signing secret from Stripe's dashboard.").waitFor();
  await rotateRefused("/sources/payments/rotate-secret", /^Not rotated: secret: is required for a stripe source/, "r-secret", "source-rotate-required");
  await checkRotatePanel("source-rotate-stripe");
  // Typed, with no grace: the old secret stops at once; a typed secret is not shown back.
  const typed = "whsec_e2e_stripe_new_secret";
  await page.fill("#r-secret", typed);
  await page.fill("#r-grace", "0s");
  const stripe = await rotateNow("/sources/payments/rotate-secret");
  await page.locator("#rotate .secret-box").getByText("The previous secret no longer verifies: move the sender to the new one now.").waitFor();
  if (!stripe.question.includes("with no grace period")) fail(`the confirmation of a rotation without grace asks ${JSON.stringify(stripe.question)}`);
  if ((await page.content()).includes(typed) || await page.locator("#new-secret").count()) fail("a typed secret is shown back");
  if (await page.locator("#verification").innerText() !== "stripe, 1 secret(s) set (write-only)") fail(`after a rotation without grace the source shows ${await page.locator("#verification").innerText()}`);
  // Sources from the config file, and one that verifies nothing, have no "Rotate secret".
  for (const name of ["signed", "unsigned"]) {
    await page.goto(`${base}/ui/#/sources/${name}`);
    await page.locator("#verification").waitFor();
    if (await page.locator("#rotate-open, #rotate").count()) fail(`source ${name} offers to rotate its secret`);
  }
  log("a refused whsec and a missing stripe secret show the API's 400; config and unsigned sources have no Rotate");
});

// ---- Roles and API tokens (issue 28; docs/access.md): an admin makes a viewer and an operator
// token on the Tokens page, each shown once; each signs in and sees only what its role may do;
// a token revoked on the Tokens page is refused; the bootstrap token's revocation is refused while
// it is the only admin token. After the other page tests: they run as the bootstrap admin.
const made = {};  // name → the token the Tokens page showed

// GET /api/v1/whoami with `token`: {status, body}.
async function whoami(token) {
  const r = await fetch(`${base}/api/v1/whoami`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: r.status, body: await r.json().catch(() => null) };
}

// The page's buttons and button-like links (hidden ones too: a phone hides some columns) and
// whether it has selection checkboxes: what a role may or may not be offered.
async function controlsOn(p) {
  return p.evaluate(() => [...document.querySelectorAll("main button, main a.button, main input[type=checkbox]")]
    .map((el) => (el.type === "checkbox" ? "(checkbox)" : (el.getAttribute("aria-label") || el.textContent).trim())));
}
const CATALOG_EDITS = /^(New (destination|source|route)|Save changes|Create |Delete|Rotate secret|Preview transformed|Revoke)/;
const OPERATOR_ACTIONS = /^(Replay|Pause|Resume|Reset breaker|New bulk replay|Start bulk replay|Cancel$|\(checkbox\))/;

// A page signed in with `token` through sessionStorage (as a reload finds it).
async function signedIn(token, viewport) {
  const { page: p } = await newPage(viewport);
  await p.goto(`${base}/ui/`);
  await p.evaluate((t) => sessionStorage.setItem("hookrelay.token", t), token);
  return p;
}

// The pages a role's test looks at: [hash, name, ready, opts]. The admin's page tests ran axe on
// each; here it runs only where a role's page has markup of its own (opts.axe), to keep the time.
async function rolePages() {
  const apiDestination = (await api("/destinations")).items.find((d) => d.origin !== "config")?.name;
  const apiSource = (await api("/sources")).items.find((s) => s.origin !== "config" && s.verify)?.name;
  const apiRoute = (await api("/routes")).items.find((r) => r.origin !== "config")?.id;
  if (!apiDestination || !apiSource || !apiRoute) fail(`no API-owned destination, verifying source or route to look at (${apiDestination}, ${apiSource}, ${apiRoute})`);
  return [
    ["#/events", "events", "tbody tr", { axe: true }],
    [`#/events/${await lastEventId()}`, "event", ".delivery"],
    ["#/destinations", "destinations", 'tr[data-name="billing"]'],
    ["#/destinations/billing", "destination", "#state"],
    [`#/destinations/${apiDestination}`, "destination-api", "#edit-note", { axe: true }],
    ["#/sources", "sources", "tbody tr"],
    [`#/sources/${apiSource}`, "source-api", "#edit-note"],
    ["#/routes", "routes", "tbody tr"],
    [`#/routes/${apiRoute}`, "route-api", "#edit-note", { axe: true }],
    ["#/replays", "replays", "tbody tr"],
  ];
}

step("tokens: an admin makes a viewer and an operator token, each shown once", async () => {
  await page.goto(`${base}/ui/#/`);
  await page.locator("#whoami").getByText("signed in as bootstrap (admin)").waitFor();
  await page.locator("#nav").getByRole("link", { name: "Tokens" }).click();
  await page.locator('tr[data-name="bootstrap"]').waitFor();
  const boot = await page.locator('tr[data-name="bootstrap"]').innerText();
  if (!/bootstrap \(you\)/.test(boot) || !/at start-up/.test(boot) || !/never/.test(boot)) fail(`the bootstrap token's row shows ${JSON.stringify(boot)}`);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  for (const [name, role, expires] of [["e2e-viewer", "viewer", "90d"], ["e2e-operator", "operator", ""]]) {
    await page.fill("#t-name", name);
    await page.selectOption("#t-role", role);
    await page.fill("#t-expires", expires);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/api/v1/tokens")),
      page.getByRole("button", { name: "Create token" }).click(),
    ]);
    if (answer.status() !== 201) fail(`creating ${name} answered ${answer.status()}`);
    const box = page.locator("#new-token-box");
    await box.getByText("Copy it now: it will not be shown again.").waitFor();
    const token = await box.locator("#new-token").innerText();
    if (!/^hr_[0-9a-f]{64}$/.test(token) || token !== (await answer.json()).token) fail(`the token shown for ${name} is ${JSON.stringify(token)}`);
    if (await page.evaluate(() => document.activeElement?.className) !== "secret-heading") fail("the new token's box does not get the focus");
    if (await page.locator("form.token-form").isVisible()) fail("the form is still shown beside the new token");
    const me = await whoami(token);
    if (me.status !== 200 || me.body.name !== name || me.body.role !== role) fail(`whoami with ${name}'s token answered ${me.status} ${JSON.stringify(me.body)}`);
    await box.getByRole("button", { name: `Copy the new token ${name}` }).click();
    await box.locator(".copy").getByText("Copied", { exact: true }).waitFor({ timeout: 3000 }).catch(() => fail("Copy does not say Copied"));
    if (await page.evaluate(() => navigator.clipboard.readText()) !== token) fail("Copy did not put the new token on the clipboard");
    await page.waitForFunction(() => document.querySelector("#new-token-box .copy")?.textContent === "Copy");
    if (role === "viewer") {
      await checkPage(page, "token-created", "desktop");
      await page.setViewportSize({ width: 390, height: 844 });
      await page.locator("#new-token-box").scrollIntoViewIfNeeded();
      await checkPage(page, "token-created", "phone");
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    // Done: the token leaves the page for good; the form is back, its name focused.
    await box.getByRole("button", { name: "Done" }).click();
    await box.waitFor({ state: "detached" });
    if ((await page.content()).includes(token.slice(3))) fail(`${name}'s token is still in the page after Done`);
    if (await page.evaluate(() => document.activeElement?.id) !== "t-name") fail("Done does not return the focus to the name");
    made[name] = token;
  }
  // Listed with their roles; the viewer's expiry in 90 days, the operator's never.
  const row = (n) => page.locator(`tr[data-name="${n}"]`);
  await row("e2e-operator").waitFor();
  const viewerRow = await row("e2e-viewer").innerText();
  if (!/viewer/.test(viewerRow) || !/\(in 90 d\)/.test(viewerRow) || !/by bootstrap/.test(viewerRow)) fail(`the viewer's row shows ${JSON.stringify(viewerRow)}`);
  if (!/operator[\s\S]*never/.test(await row("e2e-operator").innerText())) fail(`the operator's row shows ${JSON.stringify(await row("e2e-operator").innerText())}`);
  // A name already taken: the server's 409 under the form, the name marked.
  await page.fill("#t-name", "e2e-viewer");
  await expecting([/status of 409/, /^409 POST .*\/api\/v1\/tokens$/], async () => {
    await page.getByRole("button", { name: "Create token" }).click();
    await page.locator("#t-form-status").getByRole("alert").getByText(/^Not created: /).waitFor();
  });
  if (await page.locator("#t-name").getAttribute("aria-invalid") !== "true") fail("the taken name is not marked invalid");
  await page.fill("#t-name", "");
  await checkPage(page, "tokens", "desktop");
  await visit(await phonePage(), "#/tokens", "tokens", "phone", 'tr[data-name="e2e-operator"]');
  log("made a viewer and an operator token on the Tokens page; each shown once, each works");
});

step("roles: a viewer's dashboard has no replay, pause, edit or delete", async () => {
  if (!made["e2e-viewer"]) fail("no viewer token (the Tokens step failed)");
  // Signed in through the form with the viewer's token.
  const { page: v } = await newPage({ width: 1280, height: 800 });
  await v.goto(`${base}/ui/`);
  await v.fill("#token", made["e2e-viewer"]);
  await v.click("button[type=submit]");
  await v.getByRole("heading", { name: "Overview" }).waitFor();
  await v.locator("#whoami").getByText("signed in as e2e-viewer (viewer)").waitFor();
  if (await v.locator("#nav-tokens").isVisible()) fail("a viewer's navigation has Tokens");
  const phoneV = await signedIn(made["e2e-viewer"], { width: 390, height: 844 });
  for (const [hash, name, ready, opts = { axe: false }] of [["", "overview", "#c-received"], ...await rolePages()]) {
    await visit(v, hash, `viewer-${name}`, "desktop", ready, opts);
    const offered = (await controlsOn(v)).filter((c) => CATALOG_EDITS.test(c) || OPERATOR_ACTIONS.test(c));
    if (offered.length) fail(`a viewer's ${name} page offers ${JSON.stringify(offered)}`);
    if (name === "overview" && await v.getByText("Replay all failed…").count()) fail("a viewer's overview links to replaying all failed");
    await visit(phoneV, hash, `viewer-${name}`, "phone", ready, opts);
  }
  await v.locator("#whoami").getByText("(viewer)").waitFor();
  // A view the role cannot use says so, without asking the server.
  await visit(v, "#/destinations/+new", "viewer-destination-new", "desktop", "main .msg.info");
  const note = await v.locator("main .msg.info").innerText();
  if (note !== "Creating, editing and deleting sources, destinations and routes needs the admin role; you are signed in as e2e-viewer, a viewer.") fail(`#/destinations/+new tells a viewer ${JSON.stringify(note)}`);
  await v.goto(`${base}/ui/#/tokens`);
  await v.getByText("Managing API tokens needs the admin role").waitFor();
  // Should a button slip through, the server's 403 is shown as it says it: the dashboard made to
  // believe it is an admin, Pause is refused.
  // (A change of hash, not a load: a load would ask whoami again.)
  await v.evaluate(async () => {
    (await import("/ui/js/access.js")).setPrincipal({ name: "e2e-viewer", role: "admin" });
    location.hash = "#/destinations";
  });
  await expecting([/status of 403/, /^403 POST .*\/api\/v1\/destinations\/billing\/pause$/], async () => {
    await v.getByRole("button", { name: "Pause billing" }).click();
    await v.getByRole("alert").getByText(/^Could not pause billing: POST \/api\/v1\/destinations\/(billing|\{name\})\/pause needs the operator role; token "e2e-viewer" is a viewer$/).waitFor();
  });
  await checkPage(v, "viewer-403", "desktop");
  if ((await api("/destinations/billing")).paused) fail("a viewer's refused pause paused billing");
  await v.context().close();
  await phoneV.context().close();
  log("a viewer sees no replay, pause, edit, delete or rotate; a 403 shows the server's message");
});

step("roles: an operator's dashboard has replay and pause, no edit or delete", async () => {
  if (!made["e2e-operator"]) fail("no operator token (the Tokens step failed)");
  // Signed in through sessionStorage: the dashboard asks whoami on load.
  const o = await signedIn(made["e2e-operator"], { width: 1280, height: 800 });
  const phoneO = await signedIn(made["e2e-operator"], { width: 390, height: 844 });
  const must = { events: ["Replay selected", "Replay all matching…", "(checkbox)"], event: ["Replay to all destinations", "Replay to billing"],
    destinations: ["Pause billing", "Reset breaker of billing"], destination: ["Pause billing"], replays: ["New bulk replay"] };
  for (const [hash, name, ready] of await rolePages()) {
    await visit(o, hash, `operator-${name}`, "desktop", ready, { axe: false });
    if (name === "events") await o.locator("#whoami").getByText("signed in as e2e-operator (operator)").waitFor();
    const offered = await controlsOn(o);
    const edits = offered.filter((c) => CATALOG_EDITS.test(c));
    if (edits.length) fail(`an operator's ${name} page offers ${JSON.stringify(edits)}`);
    const missing = (must[name] || []).filter((c) => !offered.includes(c));
    if (missing.length) fail(`an operator's ${name} page lacks ${JSON.stringify(missing)} (has ${JSON.stringify(offered)})`);
    if (["event", "destinations", "destination", "events", "destination-api"].includes(name)) await visit(phoneO, hash, `operator-${name}`, "phone", ready, { axe: false });
  }
  if (await o.locator("#nav-tokens").isVisible()) fail("an operator's navigation has Tokens");
  // And replaying works, recorded as the operator's.
  await o.goto(`${base}/ui/#/events/${await lastEventId()}`);
  await o.getByRole("button", { name: "Replay to billing" }).click();
  await o.getByText(/^Replay started: billing \(replay \d+\)/).waitFor();
  const last = (await api("/audit?limit=1")).items[0];
  if (last.actor !== "token:e2e-operator") fail(`the operator's replay is in the audit trail as ${JSON.stringify(last)}`);
  await o.context().close();
  await phoneO.context().close();
  log("an operator sees replay and pause, not edit, delete, rotate or Tokens; its replay is audited as its own");
});

step("scopes: a token scoped to shop and billing, made on the Tokens page, sees billing alone and no Tokens", async () => {
  // Made through the form: the scope sent only as named, shown in the new token's box and the list.
  await page.goto(`${base}/ui/#/tokens`);
  await page.locator('tr[data-name="e2e-operator"]').waitFor();
  await page.fill("#t-name", "e2e-scoped");
  await page.selectOption("#t-role", "operator");
  await page.fill("#t-sources", " shop ");
  await page.fill("#t-destinations", "billing,");
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/api/v1/tokens")),
    page.getByRole("button", { name: "Create token" }).click(),
  ]);
  if (answer.status() !== 201) fail(`creating e2e-scoped answered ${answer.status()}`);
  const sent = JSON.stringify(answer.request().postDataJSON().scope);
  if (sent !== '{"sources":["shop"],"destinations":["billing"]}') fail(`the form sent the scope ${sent}`);
  const box = page.locator("#new-token-box");
  await box.getByRole("heading", { name: "New token e2e-scoped (operator, scoped)" }).waitFor();
  await box.getByText("Scoped to sources: shop · destinations: billing.").waitFor();
  const token = await box.locator("#new-token").innerText();
  const row = page.locator('tr[data-name="e2e-scoped"]');
  await row.waitFor();
  const cell = async (name) => (await page.locator(`tr[data-name="${name}"] td.scope-cell`).innerText()).replace(/\s+/g, " ").trim();
  if (await cell("e2e-scoped") !== "sources: shop destinations: billing") fail(`the scoped token's row shows the scope ${JSON.stringify(await cell("e2e-scoped"))}`);
  if (await cell("bootstrap") !== "all") fail(`the bootstrap token's row shows the scope ${JSON.stringify(await cell("bootstrap"))}`);
  await checkPage(page, "tokens-scoped", "desktop", { axe: false });  // the form and the list had axe in the Tokens step
  await visit(await phonePage(), "#/tokens", "tokens-scoped", "phone", 'tr[data-name="e2e-scoped"]', { axe: false });
  await box.getByRole("button", { name: "Done" }).click();
  await box.waitFor({ state: "detached" });
  const me = await whoami(token);
  if (JSON.stringify(me.body?.scope) !== '{"sources":["shop"],"destinations":["billing"]}') fail(`whoami with the scoped token answered ${JSON.stringify(me.body)}`);
  // Signed in with it (through the form): it says so, lists billing alone, and has no Tokens.
  const { page: sc } = await newPage({ width: 1280, height: 800 });
  await sc.goto(`${base}/ui/`);
  await sc.fill("#token", token);
  await sc.click("button[type=submit]");
  await sc.locator("#whoami").getByText("signed in as e2e-scoped (operator, scoped)").waitFor();
  if (await sc.locator("#nav-tokens").isVisible()) fail("a scoped token's navigation has Tokens");
  await visit(sc, "#/destinations", "scoped-destinations", "desktop", 'tr[data-name="billing"]', { axe: false });
  const listed = await sc.locator("main tr[data-name]").evaluateAll((rows) => rows.map((r) => r.dataset.name));
  if (JSON.stringify(listed) !== '["billing"]') fail(`a token scoped to billing lists the destinations ${JSON.stringify(listed)}`);
  await sc.goto(`${base}/ui/#/tokens`);
  await sc.getByText("Managing API tokens needs an admin token without a scope; you are signed in as e2e-scoped, a scoped operator.").waitFor();
  await sc.context().close();
  log("a scoped token made on the Tokens page shows its scope; signed in with it, only billing and no Tokens");
});

step("tokens: a revoked token is refused; the bootstrap token stays while it is the only admin", async () => {
  if (!made["e2e-viewer"]) fail("no viewer token (the Tokens step failed)");
  // A tab signed in with the viewer's token, open while it is revoked.
  const v = await signedIn(made["e2e-viewer"], { width: 1280, height: 800 });
  await v.goto(`${base}/ui/#/destinations`);
  await v.locator('tr[data-name="billing"]').waitFor();
  await page.goto(`${base}/ui/#/tokens`);
  let question = "";
  page.once("dialog", (d) => { question = d.message(); d.accept(); });
  await page.getByRole("button", { name: "Revoke token e2e-viewer" }).click();
  await page.getByText("Revoked the token e2e-viewer.").waitFor();
  if (!question.startsWith("Revoke the token e2e-viewer?")) fail(`the revocation asks ${JSON.stringify(question)}`);
  await page.locator('tr[data-name="e2e-viewer"]').waitFor({ state: "detached" });
  const refused = await whoami(made["e2e-viewer"]);
  if (refused.status !== 401) fail(`the revoked token is answered ${refused.status}`);
  // The open tab: its next refresh is refused, and it asks to sign in again, saying why. (Refused
  // tokens are throttled per address: the same refresh's other request may be answered 429.)
  await expecting([/status of 401/, /^401 GET /, /status of 429/, /^429 GET /], async () => {
    await v.locator("#token").waitFor({ timeout: 10000 });
  });
  await v.getByText(/^The token was not accepted any more \(.+\); sign in again\.$/).waitFor();
  if (await v.evaluate(() => sessionStorage.getItem("hookrelay.token")) !== null) fail("the revoked token is still in the tab");
  await checkPage(v, "signin-revoked", "desktop");
  await v.context().close();
  // The bootstrap token: refused (409) while no other admin token exists; it keeps working.
  if ((await api("/tokens")).items.some((t) => t.role === "admin" && t.name !== "bootstrap" && !t.expired)) {
    log("another admin token exists: the bootstrap revocation is not tried");
  } else {
    page.once("dialog", (d) => { question = d.message(); d.accept(); });
    await expecting([/status of 409/, /^409 DELETE .*\/api\/v1\/tokens\/bootstrap$/], async () => {
      await page.getByRole("button", { name: "Revoke token bootstrap" }).click();
      await page.locator("#tokens-status").getByRole("alert").getByText(/^Not revoked: the bootstrap token is the only admin token/).waitFor();
    });
    if (!question.startsWith("Revoke the bootstrap token?") || !question.includes("It is the token you are signed in with")) fail(`the bootstrap revocation asks ${JSON.stringify(question)}`);
    await checkPage(page, "tokens-bootstrap-refused", "desktop");
  }
  if ((await whoami(TOKEN)).status !== 200) fail("the bootstrap token no longer works");
  log("a revoked token is refused at once and its tab signs out; the bootstrap revocation is refused (409)");
});

step("keyboard: the first Tab reaches the skip link, the second the navigation", async () => {
  await page.goto(`${base}/ui/#/events`);
  await page.reload();  // a fresh load: focus starts at the top of the document
  await page.locator("tbody tr").first().waitFor();
  await page.keyboard.press("Tab");
  if (await page.evaluate(() => document.activeElement?.textContent) !== "Skip to content") fail("the first Tab does not reach the skip link");
  await page.keyboard.press("Tab");
  if (!(await page.evaluate(() => document.activeElement?.closest("header") !== null))) fail("the second Tab does not reach the navigation");
});

step("sign out: the token leaves the tab", async () => {
  // 9. Sign out: the token leaves the tab.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.locator("#token").waitFor();
  if (await page.evaluate(() => sessionStorage.getItem("hookrelay.token")) !== null) fail("token still stored after sign-out");
  log("signed out");
});
