// Destinations: health (success rate over the last hour, breaker, failures, open-until, paused,
// concurrency), operator controls, and create / edit / delete for API-owned ones. Secrets are
// write-only: the form never shows one, a blank field keeps it.
import { h, message, badge, table, replace } from "../dom.js";
import { get, post, patch, del, enc, qs } from "../api.js";
import { time, percent, withTimes } from "../format.js";
import { every, input, select, originNote, yes } from "./common.js";
import { herdSection } from "./herd.js";

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

function controls(d, onDone, where) {
  const act = async (what, label) => {
    try {
      const r = await post(`/destinations/${enc(d.name)}/${what}`, what === "pause" ? { reason: "paused from the dashboard" } : {});
      replace(where, message("ok", `${label} ${d.name}${r.note ? ` (${r.note})` : ""}.`));
      await onDone();
    } catch (e) {
      replace(where, message("error", `${label} ${d.name} failed: ${e.message}`));
    }
  };
  return h("span", { class: "row" },
    d.paused
      ? h("button", { type: "button", onclick: () => act("resume", "Resumed"), "aria-label": `Resume ${d.name}` }, "Resume")
      : h("button", { type: "button", onclick: () => act("pause", "Paused"), "aria-label": `Pause ${d.name}` }, "Pause"),
    h("button", { type: "button", onclick: () => act("reset-breaker", "Reset the breaker of"), "aria-label": `Reset breaker of ${d.name}`,
      disabled: (d.breaker?.state || "closed") === "closed" }, "Reset breaker"));
}

async function list(main, ctx) {
  const status = h("div", { "aria-live": "polite" });
  main.append(h("div", { class: "row" }, h("h1", null, "Destinations"), h("span", { class: "spacer" }),
    h("a", { class: "button primary", href: "#/destinations/+new" }, "New destination")), status);
  const wrap = h("div");
  main.append(wrap);
  async function load() {
    const [r, rates] = await Promise.all([get("/destinations"), lastHourRates()]);
    if (r.items.length === 0) {
      replace(wrap, message("info", "No destination yet. Create one with “New destination”, or in the config file."));
      return;
    }
    replace(wrap, table(["Name", "Health (1 h)", "Breaker", { text: "Failures", class: "num hide-narrow" }, "Paused",
      { text: "Concurrency", class: "num hide-narrow" }, { text: "Actions", class: "hide-narrow" }],
    r.items.map((d) => h("tr", { dataset: { name: d.name } },
      h("td", null, h("a", { href: `#/destinations/${enc(d.name)}` }, d.name),
        h("div", { class: "muted mono hide-narrow" }, d.url)),
      h("td", null, health(d, rates)),
      h("td", null, breakerCell(d)),
      h("td", { class: "num hide-narrow" }, String(d.breaker?.consecutive_failures ?? 0)),
      h("td", null, d.paused ? h("span", null, badge("paused"), d.paused_reason ? h("div", { class: "muted" }, withTimes(d.paused_reason)) : null) : "no"),
      h("td", { class: "num hide-narrow" }, `${d.allowed_concurrency} / ${d.max_concurrency ?? "?"}`),
      h("td", { class: "hide-narrow" }, controls(d, load, status)))),
    { label: "Destinations" }));
  }
  await load();
  return every(4000, ctx, () => load().catch((e) => replace(status, message("error", `Could not refresh: ${e.message}`))));
}

function formFields(d) {
  const policy = typeof d?.policy === "string" ? d.policy : "";
  return [
    d ? null : input("d-name", "Name", { required: true, pattern: "[A-Za-z0-9_.\\-]+", autocomplete: "off" }, "Letters, digits, _ - . (cannot change later)"),
    input("d-url", "URL", { type: "url", required: true, value: d?.url || "", size: 50, autocomplete: "off" }, "http(s); a loopback or private address needs “allow private”"),
    select("d-policy", "Retry policy preset", [["", d ? "(keep)" : "default"], ...PRESETS], policy),
    input("d-max-concurrency", "Max concurrency", { type: "number", min: 1, max: 1024, value: d?.max_concurrency ?? "" }),
    input("d-rate", "Rate limit", { value: d?.rate_limit ?? "", placeholder: "100/s" }, "Optional, e.g. 100/s or 6000/m"),
    input("d-secret", "Signing secret", { type: "password", autocomplete: "new-password", value: "" },
      d ? `Write-only. ${d.signing_secret_set ? "A secret is set; leave blank to keep it, or type a new one to replace it." : "None set."}`
        : "Write-only (whsec_…); optional"),
    input("d-bearer", "Bearer token", { type: "password", autocomplete: "new-password", value: "" },
      d?.auth ? `Write-only. A ${d.auth.type} credential is set; leave blank to keep it, or type a token to replace it.`
        : "Write-only; optional. Sent as “Authorization: Bearer …”."),
    h("details", { class: "field", open: !d?.tls ? null : "" },
      h("summary", null, "TLS client certificate and private CA"),
      pem("d-cert", "Client certificate (PEM)", d?.tls?.client_cert
        ? [`Set: ${d.tls.client_cert.subject}, expires `, time(d.tls.client_cert.not_after), ". Leave blank to keep it."] : "Optional; with the key below."),
      pem("d-key", "Client key (PEM)", d?.tls?.client_key_set
        ? "Write-only. A key is set; leave blank to keep it." : "Write-only; unencrypted."),
      pem("d-ca", "CA certificates (PEM)", d?.tls?.ca_file
        ? `Set: ${d.tls.ca_file.subjects.join(", ")}. Leave blank to keep them.` : "Optional: trusted for this destination instead of the system’s CAs.")),
    h("div", { class: "field" }, h("label", null, h("input", { type: "checkbox", id: "d-private", checked: !!d?.allow_private }), " Allow private/loopback address")),
  ];
}

// A PEM text field; its value is never filled in (the key is write-only, the rest is shown above).
function pem(id, label, hint) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("textarea", { id, name: id, rows: 3, cols: 64, spellcheck: "false", autocomplete: "off",
      placeholder: "-----BEGIN …-----", "aria-describedby": `${id}-hint` }),
    h("p", { class: "hint", id: `${id}-hint` }, hint));
}

function readForm(form, isNew) {
  const v = (id) => form.querySelector(`#${id}`)?.value.trim() ?? "";
  const body = {};
  if (isNew) body.name = v("d-name");
  body.url = v("d-url");
  if (v("d-policy")) body.policy = v("d-policy");
  if (v("d-max-concurrency")) body.max_concurrency = Number(v("d-max-concurrency"));
  if (v("d-rate")) body.rate_limit = v("d-rate");
  if (v("d-secret")) body.signing_secret = v("d-secret");
  if (v("d-bearer")) body.auth = { bearer: v("d-bearer"), basic: null };
  const tls = {};
  if (v("d-cert")) tls.client_cert = v("d-cert") + "\n";
  if (v("d-key")) tls.client_key = v("d-key") + "\n";
  if (v("d-ca")) tls.ca_file = v("d-ca") + "\n";
  if (Object.keys(tls).length) body.tls = tls;
  body.allow_private = form.querySelector("#d-private").checked;
  return body;
}

function fieldError(form, status, e) {
  replace(status, message("error", e.message));
  const map = { name: "d-name", url: "d-url", policy: "d-policy", max_concurrency: "d-max-concurrency", rate_limit: "d-rate", signing_secret: "d-secret",
    auth: "d-bearer", "auth.bearer": "d-bearer", "tls.client_cert": "d-cert", "tls.client_key": "d-key", "tls.ca_file": "d-ca" };
  const el = e.field && form.querySelector(`#${map[e.field] || ""}`);
  if (el) { el.setAttribute("aria-invalid", "true"); el.focus(); }
}

async function create(main) {
  const status = h("div", { "aria-live": "polite" });
  const form = h("form", { novalidate: true, "aria-label": "New destination" }, formFields(null),
    h("button", { type: "submit", class: "primary" }, "Create destination"), status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const d = await post("/destinations", readForm(form, true));
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

async function detail(main, ctx) {
  const name = ctx.params[0];
  const status = h("div", { "aria-live": "polite" });
  const body = h("div");
  main.append(h("p", null, h("a", { href: "#/destinations" }, "← Destinations")), h("h1", null, "Destination ", name), status, body);
  let formShown = false;
  let shownPolicy = "";
  async function load() {
    let d;
    try {
      d = await get(`/destinations/${enc(name)}`);
    } catch (e) {
      if (e.status === 404) { replace(body, message("error", e.message)); return false; }
      throw e;
    }
    const b = d.breaker || {};
    const state = h("section", { id: "state" }, h("h2", null, "State"),
      h("dl", { class: "kv" },
        h("dt", null, "URL"), h("dd", { class: "mono" }, d.url),
        h("dt", null, "Breaker"), h("dd", null, breakerCell(d), ` — ${b.consecutive_failures ?? 0} consecutive failures, ${b.trips ?? 0} trips`),
        h("dt", null, "Paused"), h("dd", null, d.paused ? ["yes: ", withTimes(d.paused_reason) || "paused"] : "no"),
        h("dt", null, "Concurrency"), h("dd", null, `${d.allowed_concurrency} allowed now (max ${d.max_concurrency ?? "?"}), ${d.in_flight ?? 0} in flight`),
        h("dt", null, "Ordered"), h("dd", null, orderingText(d)),
        h("dt", null, "Signing secret"), h("dd", null, d.signing_secret_set ? "set (write-only)" : "not set"),
        h("dt", null, "Credential"), h("dd", null, d.auth ? `${d.auth.type}${d.auth.username ? ` as ${d.auth.username}` : ""} (write-only)` : "none"),
        h("dt", null, "Client certificate"), h("dd", null, d.tls?.client_cert
          ? [`${d.tls.client_cert.subject}, issued by ${d.tls.client_cert.issuer}, expires `, time(d.tls.client_cert.not_after),
            `; key ${d.tls.client_key_set ? "set (write-only)" : "not set"}`]
          : "none"),
        d.tls?.ca_file ? [h("dt", null, "Trusted CAs"), h("dd", null, d.tls.ca_file.subjects.join(", "))] : null,
        h("dt", null, "Origin"), h("dd", null, d.origin === "config" ? "config file" : "API")),
      h("div", { class: "row toolbar" }, controls(d, load, status),
        h("a", { class: "button", href: `#/events?destination=${enc(name)}` }, "Events"),
        h("a", { class: "button", href: `#/events?destination=${enc(name)}&status=failed` }, "Failed events")));
    const existing = body.querySelector("#state");
    if (existing) existing.replaceWith(state); else body.append(state);
    const held = heldSection(d);
    const heldShown = body.querySelector("#held");
    if (heldShown) heldShown.replaceWith(held); else state.after(held);
    const stored = JSON.stringify(Object.fromEntries(Object.entries(d).filter(([k]) =>
      !["breaker", "paused_reason", "allowed_concurrency", "in_flight", "note", "held"].includes(k))), null, 2);
    const policy = JSON.stringify(d.policy);
    if (!formShown) {
      formShown = true;
      shownPolicy = policy;
      body.append(await scheduleSection(name));
      body.append(herdSection(name, d.policy));
      body.append(h("h2", null, "Configuration"), originNote(d), h("details", null, h("summary", null, "As stored (secrets redacted)"), h("pre", { id: "stored" }, stored)));
      if (d.origin !== "config") body.append(editForm(d, status, load));
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
  return every(4000, ctx, () => load().catch((e) => replace(status, message("error", `Could not refresh: ${e.message}`))));
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
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      // A merge patch of what changed only (the audit trail names the fields).
      const body = readForm(form, false);
      const was = { url: d.url, max_concurrency: d.max_concurrency, rate_limit: d.rate_limit, allow_private: !!d.allow_private };
      for (const k of Object.keys(was)) if (body[k] === was[k]) delete body[k];
      if (d.rate_limit && !form.querySelector("#d-rate").value.trim()) body.rate_limit = null;  // cleared
      if (Object.keys(body).length === 0) { replace(status, message("info", "Nothing changed.")); return; }
      await patch(`/destinations/${enc(d.name)}`, body);
      Object.assign(d, body);
      replace(status, message("ok", `Saved ${d.name}.`));
      for (const id of ["d-secret", "d-bearer", "d-cert", "d-key", "d-ca"]) form.querySelector(`#${id}`).value = "";
      form.querySelector("#d-policy").value = "";  // "(keep)": a later save sends it only if changed again
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
  return h("section", null, h("h2", null, "Edit"), form);
}

export async function render(main, ctx) {
  if (ctx.view === "new") return create(main, ctx);
  if (ctx.view === "detail") return detail(main, ctx);
  return list(main, ctx);
}

export { yes, qs };
