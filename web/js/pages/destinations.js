// Destinations: health (success rate over the last hour, breaker, failures, open-until, paused,
// concurrency), operator controls, and create / edit / delete for API-owned ones. Secrets are
// write-only: the form never shows one, a blank field keeps it; a rotated signing secret is shown
// once, in the answer to the rotation. The controls need the operator role, the rest the admin
// role (access.js): a role without them sees the state only.
import { h, message, badge, table, replace, replaceInPlace, updateNode } from "../dom.js";
import { get, post, patch, del, enc, qs } from "../api.js";
import { time, percent, millis, withTimes } from "../format.js";
import { refreshEvery, input, select, originNote, yes } from "./common.js";
import { herdSection } from "./herd.js";
import { rotatePanel, rotateButton, rotatingUntil, noGrace, SIGNS } from "./rotate.js";
import { can, roleNote } from "../access.js";

const PRESETS = ["default", "free", "pro", "scale"];

// 90 → "1m30s", 7200 → "2h".
function secs(x) {
  let s = Math.round(x);
  if (s < 60) return `${s}s`;
  const parts = [];
  for (const [u, n] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]]) {
    if (s >= n) { parts.push(`${Math.floor(s / n)}${u}`); s %= n; }
    if (parts.length === 2) break;
  }
  return parts.join("");
}

function breakerCell(d) {
  const b = d.breaker || {};
  return h("span", null, badge(b.state || "closed"),
    b.state === "open" && b.open_until ? h("span", null, " until ", time(b.open_until)) : null,
    b.state === "half_open" && b.probe_sent_at ? h("span", null, " probe sent ", time(b.probe_sent_at)) : null);
}

function health(d, rates) {
  const r = rates[d.name];
  return r && r.total > 0 ? `${percent(r.ok / r.total)} of ${r.total} attempts` : "no attempts";
}

// p50 / p99 of the destination's last attempts (at most 1000, since hookrelay started; the API's
// `latency`), or null before the first.
function latencyText(d) {
  const l = d.latency;
  if (!l || !l.samples || l.p50_ms == null) return null;
  // Each percentile stays on one line in a narrow column.
  return [h("span", { class: "nowrap" }, `p50 ${millis(l.p50_ms)}`), " · ", h("span", { class: "nowrap" }, `p99 ${millis(l.p99_ms)}`)];
}

// Success rate per destination over the last hour, from the stats endpoint (when present).
async function lastHourRates() {
  try {
    const s = await get("/stats?window=1h&step=1h");
    const out = {};
    for (const d of s.destinations || []) out[d.name] = { ok: d.attempts - d.attempt_failures, total: d.attempts };
    return out;
  } catch {
    return {};
  }
}

// Pause or resume, and reset the breaker (an operator's); null for a viewer.
function controls(d, onDone, where) {
  if (!can("pause")) return null;
  // `label` says what was done ("Paused"), `verb` what was refused ("pause").
  const act = async (what, label, verb) => {
    try {
      const r = await post(`/destinations/${enc(d.name)}/${what}`, what === "pause" ? { reason: "paused from the dashboard" } : {});
      replace(where, message("ok", `${label} ${d.name}${r.note ? ` (${r.note})` : ""}.`));
      await onDone();
    } catch (e) {
      replace(where, message("error", `Could not ${verb} ${d.name}: ${e.message}`));
    }
  };
  return h("span", { class: "row" },
    d.paused
      ? h("button", { type: "button", onclick: () => act("resume", "Resumed", "resume"), "aria-label": `Resume ${d.name}` }, "Resume")
      : h("button", { type: "button", onclick: () => act("pause", "Paused", "pause"), "aria-label": `Pause ${d.name}` }, "Pause"),
    h("button", { type: "button", onclick: () => act("reset-breaker", "Reset the breaker of", "reset the breaker of"), "aria-label": `Reset breaker of ${d.name}`,
      disabled: (d.breaker?.state || "closed") === "closed" }, "Reset breaker"));
}

async function list(main, ctx) {
  const status = h("div", { "aria-live": "polite" });
  main.append(h("div", { class: "row" }, h("h1", null, "Destinations"), h("span", { class: "spacer" }),
    can("editCatalog") ? h("a", { class: "button primary", href: "#/destinations/+new" }, "New destination") : null), status);
  const actions = can("pause");
  const wrap = h("div");
  main.append(wrap);
  async function load() {
    const [r, rates] = await Promise.all([get("/destinations"), lastHourRates()]);
    if (r.items.length === 0) {
      replaceInPlace(wrap, message("info", can("editCatalog") ? "No destination yet. Create one with “New destination”, or in the config file." : "No destination yet."));
      return;
    }
    replaceInPlace(wrap, table(["Name", "Health (1 h)", "Breaker", { text: "Failures", class: "num hide-narrow" }, "Paused",
      { text: "Concurrency", class: "num hide-narrow" }, actions ? { text: "Actions", class: "hide-narrow" } : null].filter(Boolean),
    r.items.map((d) => h("tr", { dataset: { name: d.name } },
      h("td", null, h("a", { href: `#/destinations/${enc(d.name)}` }, d.name),
        h("div", { class: "muted mono hide-narrow" }, d.url)),
      h("td", null, health(d, rates), d.latency?.samples ? h("div", { class: "muted latency" }, latencyText(d)) : null),
      h("td", null, breakerCell(d)),
      h("td", { class: "num hide-narrow" }, String(d.breaker?.consecutive_failures ?? 0)),
      h("td", null, d.paused ? h("span", null, badge("paused"), d.paused_reason ? h("div", { class: "muted" }, withTimes(d.paused_reason)) : null) : "no"),
      h("td", { class: "num hide-narrow" }, `${d.allowed_concurrency} / ${d.max_concurrency ?? "?"}`),
      actions ? h("td", { class: "hide-narrow" }, controls(d, load, status)) : null)),
    { label: "Destinations" }));
  }
  await load();
  return refreshEvery(4000, ctx, load, status);
}

// The form covers every field of the destination JSON (docs/api.md): url, policy (a preset or
// every field of a custom one), replay_window, headers, secret_headers, forward_headers,
// max_concurrency, rate_limit, breaker, ordered / order_key, signing_secret, auth, tls,
// allow_private, pause_on_gone. ("paused" is the Pause / Resume buttons.) An edit sends a merge
// patch of what changed only (the audit trail names the fields).
const POLICY_DEFAULT = { strategy: "exponential", jitter: "equal", delays: [], base: "1m", cap: "30m", max_attempts: 6, max_duration: "1h", timeout: "30s" };
const BREAKER_DEFAULT = { threshold: 20, open: ["10m", "30m", "2h", "24h"], escalation_reset: "24h" };
const JITTERS = ["none", "full", "equal", "decorrelated"];

const words = (text) => text.split(",").map((x) => x.trim()).filter(Boolean);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function group(legend, ...children) {
  return h("fieldset", { class: "group" }, h("legend", null, legend), children);
}

function check(id, label, checked, hint) {
  return h("div", { class: "field" }, h("label", null, h("input", { type: "checkbox", id, checked: !!checked }), ` ${label}`),
    hint ? h("p", { class: "hint" }, hint) : null);
}

let headerRows = 0;
// One header: name and value; a value the API shows redacted is not filled in (blank keeps it).
function headerRow(name = "", value = "") {
  const i = headerRows++;
  const redacted = value === "(redacted)";
  const nameIn = h("input", { id: `d-header-name-${i}`, class: "h-name", value: name, autocomplete: "off", "aria-label": `Header ${i + 1} name`, placeholder: "X-Env" });
  const valueIn = h("input", { id: `d-header-value-${i}`, class: "h-value", value: redacted ? "" : value, autocomplete: "off",
    "aria-label": `Header ${i + 1} value`, placeholder: redacted ? "(a secret: blank keeps it)" : "prod", type: redacted ? "password" : null });
  const remove = h("button", { type: "button", class: "link", "aria-label": `Remove header ${name || i + 1}` }, "Remove");
  const row = h("div", { class: "header-row row", dataset: { orig: name, redacted: redacted ? "1" : "" } }, nameIn, valueIn, remove);
  nameIn.addEventListener("input", () => remove.setAttribute("aria-label", `Remove header ${nameIn.value.trim() || i + 1}`));
  remove.addEventListener("click", () => row.remove());
  return row;
}

function orderingMode(d) {
  if (!d?.ordered) return "none";
  if (d.order_key?.header) return "header";
  if (d.order_key?.json) return "json";
  return "whole";
}

function formFields(d) {
  headerRows = 0;  // ids count from 0 in each form (one form per page)
  const p = d ? d.policy : POLICY_DEFAULT;
  const mode = d ? (d.policy?.preset || "custom") : "default";
  const b = d?.breaker_settings || BREAKER_DEFAULT;  // "breaker" is the live state
  const headers = Object.entries(d?.headers || {});
  const rows = h("div", { id: "d-headers" }, headers.length ? headers.map(([k, v]) => headerRow(k, v)) : headerRow());
  const fwd = d?.forward_headers ?? "all";
  const authType = d?.auth?.type || "none";
  return [
    d ? null : input("d-name", "Name", { required: true, pattern: "[A-Za-z0-9_.\\-]+", autocomplete: "off" }, "Letters, digits, _ - . (cannot change later)"),
    input("d-url", "URL", { type: "url", required: true, value: d?.url || "", size: 50, autocomplete: "off" }, "http(s); a loopback or private address needs “allow private”"),
    group("Retry policy",
      select("d-policy", "Policy", [...PRESETS.map((x) => [x, `${x} (preset)`]), ["custom", "custom: every field below"]], mode),
      h("div", { id: "d-custom" },
        select("d-strategy", "Strategy", [["exponential", "exponential (base · 2^(n-1))"], ["ladder", "ladder (the delays, the last repeats)"]], p.strategy),
        select("d-jitter", "Jitter", JITTERS, p.jitter),
        input("d-delays", "Delays", { value: (p.delays || []).join(", "), placeholder: "5m, 30m, 3h" }, "Ladder: the delays before each retry, comma-separated"),
        input("d-base", "Base", { value: p.base, size: 8 }, "Exponential: the first retry's delay"),
        input("d-cap", "Cap", { value: p.cap, size: 8 }, "No delay is longer"),
        input("d-max-attempts", "Max attempts", { type: "number", min: 1, max: 1000, value: p.max_attempts }),
        input("d-max-duration", "Max duration", { value: p.max_duration, size: 8 }, "No attempt after the first failure + this; 0 for no deadline"),
        input("d-timeout", "Attempt timeout", { value: p.timeout, size: 8 })),
      input("d-replay-window", "Replay window", { value: d?.replay_window ?? "", placeholder: "the policy's (30d)", size: 10 }, "How long events stay replayable")),
    group("Request",
      h("div", { class: "field" }, h("span", { class: "label", id: "d-headers-label" }, "Headers sent with every request"), rows,
        h("button", { type: "button", id: "d-add-header", onclick: () => rows.append(headerRow()) }, "Add header")),
      input("d-secret-headers", "Secret headers", { value: (d?.secret_headers || []).join(", "), placeholder: "X-Tenant-Id" },
        "Names whose values are shown redacted (credential-like names such as X-Api-Key always are)"),
      select("d-forward", "Forward received headers", [["all", "all (except hop-by-hop and credentials)"], ["none", "none"], ["list", "only these"]],
        Array.isArray(fwd) ? "list" : fwd),
      input("d-forward-names", "Forwarded header names", { value: Array.isArray(fwd) ? fwd.join(", ") : "", placeholder: "X-GitHub-Event, Stripe-Signature" }, "Comma-separated")),
    group("Capacity and ordering",
      input("d-max-concurrency", "Max concurrency", { type: "number", min: 1, max: 1024, value: d?.max_concurrency ?? "" }),
      input("d-rate", "Rate limit", { value: d?.rate_limit ?? "", placeholder: "100/s" }, "Optional, e.g. 100/s or 6000/m"),
      select("d-ordering", "Ordering", [["none", "none: sent as they come"], ["whole", "the whole destination, one at a time"],
        ["header", "per key, from a header"], ["json", "per key, from a JSON field of the body"]], orderingMode(d)),
      input("d-order-key", "Order key", { value: d?.order_key?.header || d?.order_key?.json || "", placeholder: "X-Shop-Domain or data.object.customer" })),
    group("Circuit breaker",
      input("d-breaker-threshold", "Threshold", { type: "number", min: 1, value: b.threshold }, "Consecutive failed attempts that open it"),
      input("d-breaker-open", "Open for", { value: b.open.join(", ") }, "On the 1st, 2nd, … trip; the last repeats"),
      input("d-breaker-reset", "Escalation reset", { value: b.escalation_reset, size: 8 }, "After this long closed, the next trip starts from the first")),
    group("Credentials",
      input("d-secret", "Signing secret", { type: "password", autocomplete: "new-password", value: "" },
        d ? `Write-only. ${d.signing_secret_set ? "A secret is set; leave blank to keep it, or type a new one to replace it." : "None set."}`
          : "Write-only (whsec_…); optional"),
      d?.signing_secret_set ? check("d-secret-remove", "Remove the signing secret (stop signing)") : null,
      select("d-auth", "Authorization header", [["none", "none"], ["bearer", "Bearer token"], ["basic", "Basic (user name and password)"]], authType),
      input("d-bearer", "Bearer token", { type: "password", autocomplete: "new-password", value: "" },
        d?.auth?.type === "bearer" ? "Write-only. A token is set; leave blank to keep it, or type one to replace it." : "Write-only. Sent as “Authorization: Bearer …”."),
      input("d-basic-user", "User name", { value: d?.auth?.username ?? "", autocomplete: "off" }),
      input("d-basic-password", "Password", { type: "password", autocomplete: "new-password", value: "" },
        d?.auth?.type === "basic" ? "Write-only. A password is set; leave blank to keep it." : "Write-only")),
    h("details", { class: "field", open: !d?.tls ? null : "" },
      h("summary", null, "TLS client certificate and private CA"),
      pem("d-cert", "Client certificate (PEM)", d?.tls?.client_cert
        ? [`Set: ${d.tls.client_cert.subject}, expires `, time(d.tls.client_cert.not_after), ". Leave blank to keep it."] : "Optional; with the key below."),
      pem("d-key", "Client key (PEM)", d?.tls?.client_key_set
        ? "Write-only. A key is set; leave blank to keep it." : "Write-only; unencrypted."),
      pem("d-ca", "CA certificates (PEM)", d?.tls?.ca_file
        ? `Set: ${d.tls.ca_file.subjects.join(", ")}. Leave blank to keep them.` : "Optional: trusted for this destination instead of the system’s CAs."),
      d?.tls ? check("d-tls-remove", "Remove the client certificate and CA") : null),
    check("d-private", "Allow private/loopback address", d?.allow_private),
    check("d-pause-on-gone", "Pause when the endpoint answers 410 Gone", d ? d.pause_on_gone : true),
  ];
}

// Shows the fields that apply to what is chosen (custom policy, ladder or exponential, forwarded
// names, order key, credential type).
function wire(form) {
  const v = (id) => form.querySelector(`#${id}`).value;
  const show = (id, on) => { form.querySelector(`#${id}`).closest(".field, #d-custom").hidden = !on; };
  const update = () => {
    form.querySelector("#d-custom").hidden = v("d-policy") !== "custom";
    show("d-delays", v("d-strategy") === "ladder");
    show("d-base", v("d-strategy") === "exponential");
    show("d-forward-names", v("d-forward") === "list");
    show("d-order-key", ["header", "json"].includes(v("d-ordering")));
    show("d-bearer", v("d-auth") === "bearer");
    show("d-basic-user", v("d-auth") === "basic");
    show("d-basic-password", v("d-auth") === "basic");
  };
  form.addEventListener("change", update);
  update();
}

// A PEM text field; its value is never filled in (the key is write-only, the rest is shown above).
function pem(id, label, hint) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("textarea", { id, name: id, rows: 3, cols: 64, spellcheck: "false", autocomplete: "off",
      placeholder: "-----BEGIN …-----", "aria-describedby": `${id}-hint` }),
    h("p", { class: "hint", id: `${id}-hint` }, hint));
}

class FormError extends Error {
  constructor(message, id) { super(message); this.id = id; }
}

// The body of the POST (d null) or the merge patch of what changed against `d` (the GET).
function readForm(form, d) {
  const v = (id) => form.querySelector(`#${id}`)?.value.trim() ?? "";
  const checked = (id) => !!form.querySelector(`#${id}`)?.checked;
  const body = {};
  // A field goes into a patch when it differs from what is stored; into a POST when it is not
  // the default.
  const put = (key, value, was, dflt) => {
    if (d ? !same(value, was) : !same(value, dflt)) body[key] = value;
  };
  if (!d) body.name = v("d-name");
  put("url", v("d-url"), d?.url, undefined);

  const mode = v("d-policy");
  if (mode !== "custom") {
    if (d ? d.policy.preset !== mode : mode !== "default") body.policy = mode;
  } else {
    const strategy = v("d-strategy");
    const p = { strategy, jitter: v("d-jitter"), base: v("d-base"), cap: v("d-cap"),
      max_attempts: Number(v("d-max-attempts")), max_duration: v("d-max-duration"), timeout: v("d-timeout") };
    if (strategy === "ladder") p.delays = words(v("d-delays"));
    const was = d && !d.policy.preset ? Object.fromEntries(Object.keys(p).map((k) => [k, d.policy[k]])) : null;
    // In a patch the stored policy may be a preset's name or hold fields this one drops.
    if (!same(p, was)) body.policy = d ? { preset: null, delays: null, ...p } : p;
  }
  if (v("d-replay-window") || d?.replay_window) put("replay_window", v("d-replay-window") || null, d?.replay_window, null);

  const rows = [...form.querySelectorAll(".header-row")].map((r) => ({
    name: r.querySelector(".h-name").value.trim(), value: r.querySelector(".h-value").value,
    orig: r.dataset.orig, redacted: r.dataset.redacted === "1",
  })).filter((r) => r.name);
  const headers = {};
  const kept = new Set();
  for (const r of rows) {
    kept.add(r.name);
    if (d && r.redacted && r.name === r.orig && r.value === "") continue;  // a secret kept
    if (!d || r.redacted || d.headers[r.name] !== r.value) headers[r.name] = r.value;
  }
  for (const k of Object.keys(d?.headers || {})) if (!kept.has(k)) headers[k] = null;
  if (Object.keys(headers).length) body.headers = headers;
  put("secret_headers", words(v("d-secret-headers")), d?.secret_headers, []);
  const fwd = v("d-forward") === "list" ? words(v("d-forward-names")) : v("d-forward");
  if (v("d-forward") === "list" && fwd.length === 0) throw new FormError("Name the headers to forward, or choose all or none.", "d-forward-names");
  put("forward_headers", fwd, d?.forward_headers, "all");

  if (v("d-max-concurrency")) put("max_concurrency", Number(v("d-max-concurrency")), d?.max_concurrency, undefined);
  put("rate_limit", v("d-rate") || null, d?.rate_limit ?? null, null);

  const ordering = v("d-ordering");
  const key = v("d-order-key");
  if (["header", "json"].includes(ordering) && !key) throw new FormError("Enter the order key (a header name or a JSON path).", "d-order-key");
  const orderKey = ordering === "header" || ordering === "json" ? { [ordering]: key } : null;
  if (d ? orderingMode(d) !== ordering || !same(orderKey, d.order_key) : ordering !== "none") {
    body.ordered = ordering !== "none";
    // A patch merges into the stored key: the other kind is removed, or both would be set.
    body.order_key = orderKey && d ? { header: null, json: null, ...orderKey } : orderKey;
  }

  const breaker = { threshold: Number(v("d-breaker-threshold")), open: words(v("d-breaker-open")), escalation_reset: v("d-breaker-reset") };
  put("breaker", breaker, d?.breaker_settings, BREAKER_DEFAULT);

  if (v("d-secret")) body.signing_secret = v("d-secret");
  else if (checked("d-secret-remove")) body.signing_secret = null;

  const auth = v("d-auth");
  const had = d?.auth?.type || "none";
  if (auth === "none") {
    if (had !== "none") body.auth = null;
  } else if (auth === "bearer") {
    if (v("d-bearer")) body.auth = { bearer: v("d-bearer"), basic: null };
    else if (had !== "bearer") throw new FormError("Enter the bearer token.", "d-bearer");
  } else {
    const user = v("d-basic-user");
    const password = form.querySelector("#d-basic-password").value;
    if (!user) throw new FormError("Enter the user name.", "d-basic-user");
    if (password) body.auth = { basic: { username: user, password }, bearer: null };
    else if (had !== "basic") throw new FormError("Enter the password.", "d-basic-password");
    else if (user !== d.auth.username) body.auth = { basic: { username: user } };  // the password is kept
  }
  if (!d && body.auth) body.auth = body.auth.bearer ? { bearer: body.auth.bearer } : { basic: body.auth.basic };

  const tls = {};
  if (v("d-cert")) tls.client_cert = v("d-cert") + "\n";
  if (v("d-key")) tls.client_key = v("d-key") + "\n";
  if (v("d-ca")) tls.ca_file = v("d-ca") + "\n";
  if (Object.keys(tls).length) body.tls = tls;
  else if (checked("d-tls-remove")) body.tls = null;
  put("allow_private", checked("d-private"), !!d?.allow_private, false);
  put("pause_on_gone", checked("d-pause-on-gone"), d?.pause_on_gone, true);
  return body;
}

// The form field an API error names ("policy.cap", "breaker.open[1]", "headers.X-Env").
function fieldFor(form, field) {
  if (!field) return null;
  if (field.startsWith("headers.")) {
    const name = field.slice("headers.".length);
    return [...form.querySelectorAll(".header-row .h-name")].find((x) => x.value.trim() === name) || null;
  }
  const base = field.replace(/\[\d+\]$/, "").replace(/\[\d+\].*$/, "");
  const map = {
    name: "d-name", url: "d-url", policy: "d-policy", "policy.preset": "d-policy", "policy.strategy": "d-strategy",
    "policy.jitter": "d-jitter", "policy.delays": "d-delays", "policy.base": "d-base", "policy.cap": "d-cap",
    "policy.max_attempts": "d-max-attempts", "policy.max_duration": "d-max-duration", "policy.timeout": "d-timeout",
    "policy.replay_window": "d-replay-window", replay_window: "d-replay-window",
    headers: "d-headers", secret_headers: "d-secret-headers", forward_headers: "d-forward-names",
    max_concurrency: "d-max-concurrency", rate_limit: "d-rate", ordered: "d-ordering", order_key: "d-order-key",
    "order_key.header": "d-order-key", "order_key.json": "d-order-key",
    breaker: "d-breaker-threshold", "breaker.threshold": "d-breaker-threshold", "breaker.open": "d-breaker-open",
    "breaker.escalation_reset": "d-breaker-reset", signing_secret: "d-secret",
    auth: "d-auth", "auth.bearer": "d-bearer", "auth.basic": "d-basic-user", "auth.basic.username": "d-basic-user",
    "auth.basic.password": "d-basic-password",
    "tls.client_cert": "d-cert", "tls.client_key": "d-key", "tls.ca_file": "d-ca", pause_on_gone: "d-pause-on-gone", allow_private: "d-private",
  };
  return map[base] ? form.querySelector(`#${map[base]}`) : null;
}

function fieldError(form, status, e) {
  replace(status, message("error", e.message));
  for (const x of form.querySelectorAll("[aria-invalid]")) x.removeAttribute("aria-invalid");
  const el = e instanceof FormError ? form.querySelector(`#${e.id}`) : fieldFor(form, e.field);
  if (el) { el.setAttribute("aria-invalid", "true"); el.focus(); }
}

async function create(main) {
  const status = h("div", { "aria-live": "polite" });
  const form = h("form", { novalidate: true, "aria-label": "New destination" }, formFields(null),
    h("button", { type: "submit", class: "primary" }, "Create destination"), status);
  wire(form);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const d = await post("/destinations", readForm(form, null));
      location.hash = `#/destinations/${enc(d.name)}`;
    } catch (e) {
      fieldError(form, status, e);
    }
  });
  main.append(h("p", null, h("a", { href: "#/destinations" }, "← Destinations")), h("h1", null, "New destination"),
    h("p", { class: "muted" }, "Sends nothing until a route points a source at it (Routes page)."), form);
  form.querySelector("#d-name").focus();
}

function orderingText(d) {
  if (!d.ordered) return "no: events are sent as they come";
  if (d.order_key?.header) return `per key, from the header ${d.order_key.header} (events without it are unordered)`;
  if (d.order_key?.json) return `per key, from the body's ${d.order_key.json} (events without it are unordered)`;
  return "the whole destination, one event at a time";
}

// The ordered queues held behind their head (issue 17): "cus_42: 2 held behind 01J… since
// 14:02 (attempt 3 of 10, next retry 14:05)", the longest waiting first.
function heldSection(d) {
  const held = d.held || { total: 0, queues: [] };
  if (!held.queues.length) {
    return d.ordered ? h("section", { id: "held" }, h("h2", null, "Held queues"),
      h("p", { class: "muted" }, "None: no ordered queue has events waiting for its head.")) : h("section", { id: "held", hidden: true });
  }
  const headState = (head) => {
    const of = `attempt ${head.attempt} of ${head.max_attempts}`;
    if (head.status === "scheduled" && head.next_attempt_at) {
      return [`${of}, next ${head.attempt === 0 ? "attempt" : "retry"} `, time(head.next_attempt_at)];
    }
    return head.status === "delivering" ? `${of}, sending now` : `${head.status}, ${of}`;
  };
  const rows = held.queues.map((q) => h("tr", { class: "held" },
    h("td", { class: "mono" }, q.order_key === "" ? "(whole destination)" : q.order_key),
    h("td", { class: "num" }, String(q.waiting)),
    h("td", null, h("a", { href: `#/events/${enc(q.head.event)}`, class: "mono" }, q.head.event)),
    h("td", null, time(q.waiting_since)),
    // One child per cell: a stacked (phone) table lays a cell's children out as grid items.
    h("td", null, h("div", null, h("div", null, headState(q.head)),
      q.head.reason ? h("div", { class: "muted" }, withTimes(q.head.reason)) : null))));
  const more = held.total - held.queues.length;
  return h("section", { id: "held" }, h("h2", null, "Held queues"),
    h("p", { class: "muted" }, `${held.total} ordered ${held.total === 1 ? "queue has" : "queues have"} events waiting behind their head (the oldest event of the queue not yet delivered or failed for good), the longest waiting first.`),
    table(["Key", { text: "Waiting", class: "num" }, "Held behind", "Since", "Head"], rows, { label: "Held queues", stack: true }),
    more > 0 ? h("p", { class: "muted" }, `and ${more} more held ${more === 1 ? "queue" : "queues"}`) : null);
}

// "set (write-only)", and while a rotation's grace period lasts, until when the previous secret
// still signs (each request then carries both signatures).
function secretText(d) {
  if (!d.signing_secret_set) return "not set";
  const old = d.signing_secret_rotation?.old_expires_at;
  return old ? ["set (write-only) · ", rotatingUntil(SIGNS, 1, old)] : "set (write-only)";
}

// The "Rotate secret" panel (POST /destinations/{name}/rotate-secret; rotate.js): the server
// always generates the new secret. `afterRotate(d)` refreshes the page with the destination as
// the rotation left it.
function destinationRotation(name, afterRotate) {
  return rotatePanel({
    name, noun: "signing secret", verb: SIGNS, path: `/destinations/${enc(name)}/rotate-secret`, answerSecret: "signing_secret", afterRotate,
    hint: (d) => (!d?.signing_secret_set
      ? "None is set now: hookrelay generates one and signs every request with it from then on."
      : d.signing_secret_rotation
        ? "A rotation is under way: rotating again makes the current secret the previous one, and the earlier previous secret stops signing at once."
        : "hookrelay generates a new secret and shows it once. For the grace period every request carries both signatures, the new and the previous one, so the receiver can move to the new secret without rejecting a request; then only the new one signs."),
    question: (d, g) => (!d?.signing_secret_set
      ? `Give ${name} a signing secret? hookrelay signs every request with it from now on.`
      : noGrace(g)
        ? `Rotate the signing secret of ${name} with no grace period? The previous secret stops signing at once: a receiver that still verifies with it rejects every request until it has the new one.`
        : `Rotate the signing secret of ${name}? The previous secret also signs for ${g || "24h"}: give the receiver the new one before then.`),
    outcome: (fresh, d) => {
      const old = fresh.signing_secret_rotation?.old_expires_at;
      return !d?.signing_secret_set ? "hookrelay signs every request with it from now on."
        : old ? ["The previous secret also signs until ", time(old), ": give the receiver the new one before then."]
          : "The previous secret no longer signs: give the receiver the new one now.";
    },
  });
}

async function detail(main, ctx) {
  const name = ctx.params[0];
  const status = h("div", { "aria-live": "polite" });
  const body = h("div");
  main.append(h("p", null, h("a", { href: "#/destinations" }, "← Destinations")), h("h1", null, "Destination ", name), status, body);
  let formShown = false;
  let shownPolicy = "";
  let rotation = null;  // the "Rotate secret" panel (destinationRotation), for an API-owned destination
  // After a rotation: a first secret rebuilds the edit form (its hint says whether one is set,
  // and it offers to remove it); then the page shows the rotation.
  async function afterRotate(fresh) {
    const edit = body.querySelector("#edit");
    if (edit && fresh.signing_secret_set && !edit.querySelector("#d-secret-remove")) edit.replaceWith(editForm(fresh, status, load));
    await load();
  }
  async function load() {
    let d, rates;
    try {
      [d, rates] = await Promise.all([get(`/destinations/${enc(name)}`), lastHourRates()]);
    } catch (e) {
      if (e.status === 404) { replace(body, message("error", e.message)); return false; }
      throw e;
    }
    const b = d.breaker || {};
    const lat = latencyText(d);
    if (d.origin !== "config" && !rotation && can("rotateSecret")) rotation = destinationRotation(name, afterRotate);
    rotation?.update(d);
    const state = h("section", { id: "state" }, h("h2", null, "State"),
      h("dl", { class: "kv" },
        h("dt", null, "URL"), h("dd", { class: "mono" }, d.url),
        h("dt", null, "Health (1 h)"), h("dd", { id: "health" }, health(d, rates)),
        h("dt", null, "Latency"), h("dd", { id: "latency" }, lat
          ? [...lat, h("span", { class: "muted" }, ` (last ${d.latency.samples} attempt${d.latency.samples === 1 ? "" : "s"})`)]
          : "no attempt yet"),
        h("dt", null, "Breaker"), h("dd", null, breakerCell(d), ` — ${b.consecutive_failures ?? 0} consecutive failures, ${b.trips ?? 0} trips`),
        h("dt", null, "Paused"), h("dd", null, d.paused ? ["yes: ", withTimes(d.paused_reason) || "paused"] : "no"),
        h("dt", null, "Concurrency"), h("dd", null, `${d.allowed_concurrency} allowed now (max ${d.max_concurrency ?? "?"}), ${d.in_flight ?? 0} in flight`),
        h("dt", null, "Ordered"), h("dd", null, orderingText(d)),
        h("dt", null, "Signing secret"), h("dd", { id: "signing-secret" }, secretText(d)),
        h("dt", null, "Credential"), h("dd", null, d.auth ? `${d.auth.type}${d.auth.username ? ` as ${d.auth.username}` : ""} (write-only)` : "none"),
        h("dt", null, "Client certificate"), h("dd", null, d.tls?.client_cert
          ? [`${d.tls.client_cert.subject}, issued by ${d.tls.client_cert.issuer}, expires `, time(d.tls.client_cert.not_after),
            `; key ${d.tls.client_key_set ? "set (write-only)" : "not set"}`]
          : "none"),
        d.tls?.ca_file ? [h("dt", null, "Trusted CAs"), h("dd", null, d.tls.ca_file.subjects.join(", "))] : null,
        h("dt", null, "Origin"), h("dd", null, d.origin === "config" ? "config file" : "API")),
      h("div", { class: "row toolbar" }, controls(d, load, status),
        rotation ? rotateButton(rotation) : null,
        h("a", { class: "button", href: `#/events?destination=${enc(name)}` }, "Events"),
        h("a", { class: "button", href: `#/events?destination=${enc(name)}&status=failed` }, "Failed events")));
    const existing = body.querySelector("#state");
    if (existing) updateNode(existing, state); else body.append(state);
    if (rotation && !rotation.panel.isConnected) body.querySelector("#state").after(rotation.panel);
    const held = heldSection(d);
    const heldShown = body.querySelector("#held");
    if (heldShown) updateNode(heldShown, held); else (rotation?.panel || body.querySelector("#state")).after(held);
    const stored = JSON.stringify(Object.fromEntries(Object.entries(d).filter(([k]) =>
      !["breaker", "paused_reason", "allowed_concurrency", "in_flight", "note", "held", "latency"].includes(k))), null, 2);
    const policy = JSON.stringify(d.policy);
    if (!formShown) {
      formShown = true;
      shownPolicy = policy;
      body.append(await scheduleSection(name));
      body.append(herdSection(name, d.policy));
      body.append(h("h2", null, "Configuration"), originNote(d), h("details", null, h("summary", null, "As stored (secrets redacted)"), h("pre", { id: "stored" }, stored)));
      if (d.origin !== "config") body.append(can("editCatalog") ? editForm(d, status, load) : roleNote("editCatalog", "edit-note"));
    } else {
      body.querySelector("#stored").textContent = stored;
      if (policy !== shownPolicy) {  // edited here or elsewhere: the plan follows the policy
        shownPolicy = policy;
        body.querySelector("#schedule").replaceWith(await scheduleSection(name));
        body.querySelector("#herd").replaceWith(herdSection(name, d.policy));
      }
    }
    return true;
  }
  if (!(await load())) return null;
  return refreshEvery(4000, ctx, load, status);
}

async function scheduleSection(name) {
  try {
    const s = await get(`/destinations/${enc(name)}/schedule`);
    return h("section", { id: "schedule" }, h("h2", null, "Retry schedule"),
      h("p", { class: "muted" }, "When every attempt fails (the same plan as hookrelay schedule; jitter sampled once)."),
      table(["Attempt", { text: "Delay", class: "num" }, { text: "Since the first attempt", class: "num" }], s.attempts.map((a) => h("tr", null,
        h("td", null, String(a.n)), h("td", { class: "num" }, a.n === 1 ? "—" : secs(a.delay_s)), h("td", { class: "num" }, `+${secs(a.at_s)}`))), { label: "Retry schedule" }),
      h("p", null, `Gives up at +${secs(s.gives_up.after_s)}: ${s.gives_up.reason}`));
  } catch (e) {
    return h("section", { id: "schedule" }, h("h2", null, "Retry schedule"), message("info", `Schedule not available: ${e.message}`));
  }
}

function editForm(d, status, reload) {
  const form = h("form", { novalidate: true, "aria-label": `Edit ${d.name}` }, formFields(d),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Save changes"),
      h("button", { type: "button", class: "danger", id: "delete" }, "Delete destination")));
  wire(form);
  const section = h("section", { id: "edit" }, h("h2", null, "Edit"), form);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const body = readForm(form, d);
      if (Object.keys(body).length === 0) { replace(status, message("info", "Nothing changed.")); return; }
      await patch(`/destinations/${enc(d.name)}`, body);
      replace(status, message("ok", `Saved ${d.name}.`));
      // The form again from what is stored now: the next save compares with it, and write-only
      // fields are blank again.
      const fresh = await get(`/destinations/${enc(d.name)}`);
      section.replaceWith(editForm(fresh, status, reload));
      await reload();  // the state, the stored configuration and the schedule show what was saved
    } catch (e) {
      fieldError(form, status, e);
    }
  });
  form.querySelector("#delete").addEventListener("click", async () => {
    if (!window.confirm(`Delete destination ${d.name}? Routes that name it must be deleted first.`)) return;
    try {
      await del(`/destinations/${enc(d.name)}`);
      location.hash = "#/destinations";
    } catch (e) {
      replace(status, message("error", `Not deleted: ${e.message}`));
    }
  });
  return section;
}

export async function render(main, ctx) {
  if (ctx.view === "new") return create(main, ctx);
  if (ctx.view === "detail") return detail(main, ctx);
  return list(main, ctx);
}

export { yes, qs };
