// Sources: the ingest URL to copy, verification scheme, dedup rule; create / edit / delete for
// API-owned ones. Verification secrets are write-only (shown as a count); a rotated one the
// server generated is shown once, in the answer to the rotation. A source's page lists its
// rejected requests (failed verification), newest first. Creating, editing, deleting and rotating
// need the admin role (access.js): another role sees the source only.
import { h, message, table, copyButton, replace, updateNode } from "../dom.js";
import { get, post, patch, del, enc, qs } from "../api.js";
import { time, bytes } from "../format.js";
import { input, select, originNote } from "./common.js";
import { rotatePanel, rotateButton, rotatingUntil, previousAlso, noGrace, VERIFIES } from "./rotate.js";
import { can, roleNote } from "../access.js";

const SCHEMES = ["none", "github", "stripe", "shopify", "standard", "hmac"];
const ingestUrl = (name) => `${location.origin}/in/${encodeURIComponent(name)}`;

const SCHEME_DEDUP = { github: "header X-GitHub-Delivery", stripe: "JSON field id", shopify: "header X-Shopify-Webhook-Id", standard: "header webhook-id" };

// While a rotation's grace period lasts, until when the previous secrets also verify; else null.
function rotationText(s) {
  const r = s.verify?.secrets_rotation;
  return r?.old_expires_at ? rotatingUntil(VERIFIES, r.old_secrets, r.old_expires_at) : null;
}

const secretsCount = (n) => `${n} secret${n === 1 ? "" : "s"}`;

function dedupText(s) {
  if (!s.dedup) return s.verify && SCHEME_DEDUP[s.verify.scheme] ? `${SCHEME_DEDUP[s.verify.scheme]} (the scheme's default)` : "none";
  if (s.dedup.header) return `header ${s.dedup.header}`;
  if (s.dedup.json) return `JSON field ${s.dedup.json}`;
  return JSON.stringify(s.dedup);
}

async function list(main) {
  const r = await get("/sources");
  main.append(h("div", { class: "row" }, h("h1", null, "Sources"), h("span", { class: "spacer" }),
    can("editCatalog") ? h("a", { class: "button primary", href: "#/sources/+new" }, "New source") : null));
  if (r.items.length === 0) {
    main.append(message("info", can("editCatalog") ? "No source yet. Create one with “New source” (or in the config file); events are POSTed to /in/<name>."
      : "No source yet. Events are POSTed to /in/<name>."));
    return;
  }
  main.append(table(["Name", "Ingest URL", "Verification", "Dedup", "Origin"], r.items.map((s) => h("tr", null,
    h("td", null, h("a", { href: `#/sources/${enc(s.name)}` }, s.name)),
    h("td", null, h("span", { class: "ingest" }, h("code", null, ingestUrl(s.name)), copyButton(ingestUrl(s.name)))),
    // One child per cell: on a phone each cell is a grid of its label and one column.
    h("td", null, s.verify ? h("div", null, `${s.verify.scheme} (${secretsCount(s.verify.secrets_set ?? 0)})`,
      rotationText(s) ? h("div", { class: "muted" }, rotationText(s)) : null) : "none"),
    h("td", null, dedupText(s)), h("td", null, s.origin))), { label: "Sources", stack: true }));
}

const REASONS = {
  missing_signature: "signature missing",
  malformed_signature: "signature malformed",
  timestamp_outside_tolerance: "timestamp outside tolerance",
  signature_mismatch: "signature mismatch",
};

// "Rejected requests": requests that failed verification (401, not forwarded). Counts are exact
// since the process started; the rows are a bounded sample (docs/ingest.md).
async function rejections(main, name, s) {
  const c = s.rejections || { since_start: 0, not_recorded: 0 };
  const section = h("section", { "aria-labelledby": "rejections-h" }, h("h2", { id: "rejections-h" }, "Rejected requests"));
  main.append(section);
  const summary = c.since_start
    ? `${c.since_start} refused since hookrelay started${c.last_at ? ", the last " : ""}`
    : "None refused since hookrelay started.";
  section.append(h("p", { class: "muted" }, summary, c.last_at ? time(c.last_at) : null,
    c.not_recorded ? ` (${c.not_recorded} counted but not kept: too many at once)` : null));
  const tbody = h("tbody");
  const wrap = h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Rejected requests table" },
    h("table", { "aria-label": "Rejected requests", class: "stack" },
      h("thead", null, h("tr", null, ["When", "Reason", "Size", "From", "Headers"].map((x) => h("th", { scope: "col" }, x)))), tbody));
  const pager = h("div", { class: "pager" });
  section.append(wrap, pager);
  let cursor = null;
  let n = 0;
  async function more() {
    const r = await get(`/sources/${enc(name)}/rejections${qs({ cursor, limit: 20 })}`);
    for (const x of r.items) {
      n += 1;
      tbody.append(h("tr", { class: "rejection" }, h("td", { "data-label": "When" }, time(x.received_at)),
        // One child per cell: on a phone each cell is a grid of its label and one column.
        h("td", { "data-label": "Reason" }, h("div", null, h("span", { class: "badge s-failed" }, REASONS[x.reason] || x.reason), h("div", { class: "muted" }, x.message))),
        h("td", { "data-label": "Size" }, h("div", null, bytes(x.size), h("div", { class: "mono muted", title: `SHA-256 ${x.sha256}` }, `sha256 ${x.sha256.slice(0, 12)}…`))),
        h("td", { class: "mono", "data-label": "From" }, x.remote_addr || ""),
        h("td", { "data-label": "Headers" }, h("details", null, h("summary", null, `${x.headers.length} header${x.headers.length === 1 ? "" : "s"}`),
          h("pre", { class: "headers" }, x.headers.map(([k, v]) => `${k}: ${v}`).join("\n"))))));
    }
    cursor = r.next_cursor;
    replace(pager, cursor ? h("button", { type: "button", onclick: () => more().catch((e) => replace(pager, message("error", e.message))) }, "Older rejections")
      : h("span", { class: "muted" }, n ? `${n} kept, all shown.` : ""));
  }
  try { await more(); } catch (e) { replace(pager, message("error", e.message)); }
  if (n === 0) wrap.hidden = true;
}

// Every field of the source JSON (docs/api.md): the scheme with several secrets (rotation: every
// one is accepted, so add the new one, move the provider over, then drop the old), the
// timestamp tolerance, the generic hmac scheme's header / algorithm / encoding / prefix, the
// dedup rule and max_body. Secrets are write-only: blank keeps them, any line replaces them all.
const DEDUP_DEFAULT = { github: { header: "X-GitHub-Delivery" }, stripe: { json: "id" }, shopify: { header: "X-Shopify-Webhook-Id" }, standard: { header: "webhook-id" } };
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function dedupMode(s) {
  if (!s?.dedup) return "default";
  if (same(s.dedup, DEDUP_DEFAULT[s.verify?.scheme] ?? null)) return "default";
  return s.dedup.header ? "header" : "json";
}

function secretsHint(s) {
  const n = s?.verify?.secrets_set;
  return h("p", { class: "hint", id: "s-secrets-hint" }, s
    ? `Write-only. ${n ? `${n} set; leave blank to keep them, or enter every secret to accept (they replace the ones set).` : "None set."}`
    : "Write-only. A request signed with any of them is accepted: to rotate, enter the new and the old one.");
}

function fields(s) {
  const vf = s?.verify;
  return [
    s ? null : input("s-name", "Name", { required: true, autocomplete: "off" }, "Letters, digits, _ - . — the URL is POST /in/<name>"),
    h("fieldset", { class: "group" }, h("legend", null, "Verification"),
      select("s-scheme", "Scheme", SCHEMES, vf?.scheme || "none"),
      h("div", { class: "field" },
        h("label", { for: "s-secrets" }, "Secrets, one per line"),
        h("textarea", { id: "s-secrets", name: "s-secrets", rows: 2, spellcheck: "false", autocomplete: "off", "aria-describedby": "s-secrets-hint" }),
        secretsHint(s)),
      input("s-tolerance", "Timestamp tolerance", { value: vf?.tolerance ?? "5m", size: 8 }, "stripe and standard: how old a signed timestamp may be"),
      input("s-header", "Signature header", { value: vf?.header ?? "", placeholder: "X-Signature", autocomplete: "off" }),
      select("s-algorithm", "Algorithm", ["sha256", "sha1", "sha512"], vf?.algorithm ?? "sha256"),
      select("s-encoding", "Encoding", ["hex", "base64"], vf?.encoding ?? "hex"),
      input("s-prefix", "Signature prefix", { value: vf?.prefix ?? "", placeholder: "sha256=", autocomplete: "off" }, "Optional, before the signature")),
    h("fieldset", { class: "group" }, h("legend", null, "Duplicates"),
      select("s-dedup", "Dedup key", [["default", "the scheme's default"], ["header", "a header"], ["json", "a top-level JSON field"]], dedupMode(s)),
      input("s-dedup-key", "Header or field name", { value: dedupMode(s) === "default" ? "" : (s.dedup.header || s.dedup.json), placeholder: "X-Delivery-Id or id", autocomplete: "off" },
        "A request with the key of one already received is not stored again")),
    input("s-max-body", "Max body", { value: s?.max_body ?? "", placeholder: "5MiB" }),
  ];
}

function wire(form) {
  const v = (id) => form.querySelector(`#${id}`).value;
  const show = (id, on) => { form.querySelector(`#${id}`).closest(".field").hidden = !on; };
  const update = () => {
    const scheme = v("s-scheme");
    show("s-secrets", scheme !== "none");
    show("s-tolerance", scheme === "stripe" || scheme === "standard");
    for (const id of ["s-header", "s-algorithm", "s-encoding", "s-prefix"]) show(id, scheme === "hmac");
    show("s-dedup-key", v("s-dedup") !== "default");
  };
  form.addEventListener("change", update);
  update();
}

// The POST body (s null) or the merge patch of what changed against `s` (the GET).
function read(form, s) {
  const v = (id) => form.querySelector(`#${id}`)?.value.trim() ?? "";
  const body = {};
  if (!s) body.name = v("s-name");
  const scheme = v("s-scheme");
  const vf = s?.verify;
  if (scheme === "none") {
    if (vf) body.verify = null;
  } else {
    const verify = {};
    if (scheme !== vf?.scheme) verify.scheme = scheme;
    const secrets = form.querySelector("#s-secrets").value.split("\n").map((x) => x.trim()).filter(Boolean);
    if (secrets.length) verify.secrets = secrets;
    if ((scheme === "stripe" || scheme === "standard") && v("s-tolerance") !== (vf?.tolerance ?? "5m")) verify.tolerance = v("s-tolerance");
    if (scheme === "hmac") {
      for (const [k, dflt] of [["header", ""], ["algorithm", "sha256"], ["encoding", "hex"], ["prefix", ""]]) {
        if (v(`s-${k}`) !== (vf?.[k] ?? dflt)) verify[k] = v(`s-${k}`);
      }
    }
    if (Object.keys(verify).length) body.verify = verify;
  }
  const mode = v("s-dedup");
  if (mode !== "default" && !v("s-dedup-key")) throw Object.assign(new Error("Enter the dedup key's header or field name."), { field: "dedup" });
  if (mode === "default") {
    if (s && dedupMode(s) !== "default") body.dedup = null;
  } else if (!same({ [mode]: v("s-dedup-key") }, s?.dedup ?? null)) {
    // A patch merges into the stored rule: the other kind is removed, or both would be set.
    body.dedup = s ? { header: null, json: null, [mode]: v("s-dedup-key") } : { [mode]: v("s-dedup-key") };
  }
  if (v("s-max-body") && v("s-max-body") !== s?.max_body) body.max_body = v("s-max-body");
  return body;
}

function fieldError(form, status, e) {
  replace(status, message("error", e.message));
  for (const x of form.querySelectorAll("[aria-invalid]")) x.removeAttribute("aria-invalid");
  const f = (e.field || "").replace(/\[\d+\]$/, "");
  const id = { name: "s-name", "verify.scheme": "s-scheme", "verify.secrets": "s-secrets", "verify.tolerance": "s-tolerance",
    "verify.header": "s-header", "verify.algorithm": "s-algorithm", "verify.encoding": "s-encoding", "verify.prefix": "s-prefix",
    dedup: "s-dedup-key", "dedup.header": "s-dedup-key", "dedup.json": "s-dedup-key", max_body: "s-max-body" }[f];
  const el = id && form.querySelector(`#${id}`);
  if (el) { el.setAttribute("aria-invalid", "true"); el.focus(); }
}

async function create(main) {
  const status = h("div", { "aria-live": "polite" });
  const form = h("form", { novalidate: true, "aria-label": "New source" }, fields(null), h("button", { type: "submit", class: "primary" }, "Create source"), status);
  wire(form);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { const s = await post("/sources", read(form, null)); location.hash = `#/sources/${enc(s.name)}`; } catch (e) { fieldError(form, status, e); }
  });
  main.append(h("p", null, h("a", { href: "#/sources" }, "← Sources")), h("h1", null, "New source"), form);
}

// Stripe and Shopify make a source's secret (it is copied from their dashboard): a rotation needs
// it typed in. For the other schemes the server generates one when none is typed.
const PROVIDER_MADE = { stripe: "Stripe", shopify: "Shopify" };

// The "Rotate secret" panel (POST /sources/{name}/rotate-secret; rotate.js), for an API-owned
// source that verifies. `afterRotate(s)` shows the source as the rotation left it.
function sourceRotation(name, afterRotate) {
  const provider = (s) => PROVIDER_MADE[s?.verify?.scheme];
  const one = (s) => (s?.verify?.secrets_set ?? 1) === 1;
  const current = (s) => (one(s) ? "current secret" : "current secrets");
  const verifies = (s) => (one(s) ? VERIFIES.one : VERIFIES.many);
  return rotatePanel({
    name, noun: "verification secret", verb: VERIFIES, path: `/sources/${enc(name)}/rotate-secret`, answerSecret: "secret", afterRotate,
    hint: (s) => [
      s?.verify?.secrets_rotation
        ? `A rotation is under way: rotating again makes the ${current(s)} the previous ${one(s) ? "one" : "ones"}, and the earlier previous ${
          s.verify.secrets_rotation.old_secrets > 1 ? "ones stop" : "one stops"} verifying at once. `
        : `The new secret verifies from now on. For the grace period the ${current(s)} also ${verifies(s)}, so a request still signed with ${one(s) ? "it" : "them"} is accepted while the sender moves to the new one; then only the new one does. `,
      provider(s)
        ? `${provider(s)} makes the secret: roll it in ${provider(s)}'s dashboard, then enter the new one here.`
        : "Leave the secret blank and hookrelay generates one and shows it once.",
    ],
    secretField: {
      required: (s) => !!provider(s),
      hint: (s) => (provider(s)
        ? `Required: the new signing secret from ${provider(s)}'s dashboard. Write-only.`
        : `Optional: blank generates one.${s?.verify?.scheme === "standard" ? " A typed one is whsec_ followed by base64." : ""} Write-only.`),
    },
    question: (s, g) => (noGrace(g)
      ? `Rotate the verification secret of ${name} with no grace period? The ${current(s)} ${one(s) ? "stops" : "stop"} verifying at once: a request still signed with ${one(s) ? "it" : "them"} is rejected (401) until the sender signs with the new one.`
      : `Rotate the verification secret of ${name}? The ${current(s)} also ${verifies(s)} for ${g || "24h"}: move the sender to the new one before then.`),
    outcome: (fresh, s, generated) => {
      const r = fresh.verify?.secrets_rotation;
      const todo = generated ? "give the sender the new one" : "move the sender to the new one";
      return r?.old_expires_at ? [`The ${previousAlso(VERIFIES, r.old_secrets)} until `, time(r.old_expires_at), `: ${todo} before then.`]
        : `The ${one(s) ? "previous secret no longer verifies" : "previous secrets no longer verify"}: ${todo} now.`;
    },
  });
}

// The verification line: the scheme, how many secrets are set, and a rotation under way.
function verifyText(s) {
  if (!s.verify) return "none: anyone who knows the URL can send";
  const rotating = rotationText(s);
  return [`${s.verify.scheme}, ${s.verify.secrets_set ?? 0} secret(s) set (write-only)`, rotating ? [" · ", rotating] : null];
}

async function detail(main, ctx) {
  const name = ctx.params[0];
  let s;
  try { s = await get(`/sources/${enc(name)}`); } catch (e) {
    if (e.status === 404) { main.append(h("h1", null, "Source ", name), message("error", e.message)); return; }
    throw e;
  }
  const status = h("div", { "aria-live": "polite" });
  const state = (x) => h("dl", { class: "kv", id: "state" },
    h("dt", null, "Ingest URL"), h("dd", null, h("code", null, ingestUrl(name)), copyButton(ingestUrl(name))),
    h("dt", null, "Verification"), h("dd", { id: "verification" }, verifyText(x)),
    h("dt", null, "Dedup"), h("dd", null, dedupText(x)),
    h("dt", null, "Origin"), h("dd", null, x.origin === "config" ? "config file" : "API"));
  const stored = (x) => JSON.stringify(x, null, 2);
  const storedPre = h("pre", { id: "stored" }, stored(s));
  let form = null;  // the edit form (API-owned sources)
  let rotation = null;  // the "Rotate secret" panel (sourceRotation)
  // A config-file source's secrets are the file's; one that verifies nothing has none to rotate.
  const rotatable = () => s.origin !== "config" && !!s.verify && can("rotateSecret");
  const toolbar = () => h("div", { class: "row toolbar", id: "actions" }, rotation && rotatable() ? rotateButton(rotation) : null,
    h("a", { class: "button", href: `#/events?source=${enc(name)}` }, "Events of this source"));
  // What the page shows of the source (first, and after a rotation or a save): the state, the
  // actions, the stored JSON, the secrets' hint; the next save compares with it.
  const show = (fresh) => {
    s = fresh;
    if (!rotation && rotatable()) {
      rotation = sourceRotation(name, async (rotated) => show(rotated));
      main.querySelector("#actions")?.after(rotation.panel);
    }
    if (rotation && !rotatable() && rotation.isOpen()) rotation.toggle();
    rotation?.update(s);
    updateNode(main.querySelector("#state"), state(s));
    updateNode(main.querySelector("#actions"), toolbar());
    storedPre.textContent = stored(s);
    if (form) updateNode(form.querySelector("#s-secrets-hint"), secretsHint(s));
  };
  main.append(h("p", null, h("a", { href: "#/sources" }, "← Sources")), h("h1", null, "Source ", name), status, state(s), toolbar(),
    originNote(s),
    h("details", null, h("summary", null, "As stored (secrets redacted)"), storedPre),
    // Where an admin has "Rotate secret" and, below, the edit form: why this role has neither.
    s.origin !== "config" && !can("editCatalog") ? roleNote("editCatalog", "edit-note") : "");  // DOM append() would print null
  show(s);
  if (s.verify) await rejections(main, name, s);
  if (s.origin === "config") return;
  if (!can("editCatalog")) return;
  form = h("form", { novalidate: true, "aria-label": `Edit ${name}` }, fields(s),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Save changes"), h("button", { type: "button", class: "danger", id: "delete" }, "Delete source")));
  wire(form);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const body = read(form, s);
      if (Object.keys(body).length === 0) { replace(status, message("info", "Nothing changed.")); return; }
      await patch(`/sources/${enc(name)}`, body);
      replace(status, message("ok", `Saved ${name}.`));
      form.querySelector("#s-secrets").value = "";
      show(await get(`/sources/${enc(name)}`));  // the next save compares with what is stored now
    } catch (e) { fieldError(form, status, e); }
  });
  form.querySelector("#delete").addEventListener("click", async () => {
    if (!window.confirm(`Delete source ${name}?`)) return;
    try { await del(`/sources/${enc(name)}`); location.hash = "#/sources"; } catch (e) { replace(status, message("error", `Not deleted: ${e.message}`)); }
  });
  main.append(h("h2", null, "Edit"), form);
}

export async function render(main, ctx) {
  if (ctx.view === "new") return create(main, ctx);
  if (ctx.view === "detail") return detail(main, ctx);
  return list(main, ctx);
}
