// Sources: the ingest URL to copy, verification scheme, dedup rule; create / edit / delete for
// API-owned ones. Verification secrets are write-only (shown as a count). A source's page lists
// its rejected requests (failed verification), newest first.
import { h, message, table, copyButton, replace } from "../dom.js";
import { get, post, patch, del, enc, qs } from "../api.js";
import { time, bytes } from "../format.js";
import { input, select, originNote } from "./common.js";

const SCHEMES = ["none", "github", "stripe", "shopify", "standard", "hmac"];
const ingestUrl = (name) => `${location.origin}/in/${encodeURIComponent(name)}`;

const SCHEME_DEDUP = { github: "header X-GitHub-Delivery", stripe: "JSON field id", shopify: "header X-Shopify-Webhook-Id", standard: "header webhook-id" };

function dedupText(s) {
  if (!s.dedup) return s.verify && SCHEME_DEDUP[s.verify.scheme] ? `${SCHEME_DEDUP[s.verify.scheme]} (the scheme's default)` : "none";
  if (s.dedup.header) return `header ${s.dedup.header}`;
  if (s.dedup.json) return `JSON field ${s.dedup.json}`;
  return JSON.stringify(s.dedup);
}

async function list(main) {
  const r = await get("/sources");
  main.append(h("div", { class: "row" }, h("h1", null, "Sources"), h("span", { class: "spacer" }),
    h("a", { class: "button primary", href: "#/sources/+new" }, "New source")));
  if (r.items.length === 0) {
    main.append(message("info", "No source yet. Create one with “New source” (or in the config file); events are POSTed to /in/<name>."));
    return;
  }
  main.append(table(["Name", "Ingest URL", "Verification", "Dedup", "Origin"], r.items.map((s) => h("tr", null,
    h("td", null, h("a", { href: `#/sources/${enc(s.name)}` }, s.name)),
    h("td", null, h("span", null, h("code", null, ingestUrl(s.name)), copyButton(ingestUrl(s.name)))),
    h("td", null, s.verify ? `${s.verify.scheme} (${s.verify.secrets_set ?? 0} secret${s.verify.secrets_set === 1 ? "" : "s"})` : "none"),
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

function fields(s) {
  return [
    s ? null : input("s-name", "Name", { required: true, autocomplete: "off" }, "Letters, digits, _ - . — the URL is POST /in/<name>"),
    select("s-scheme", "Verification scheme", SCHEMES, s?.verify?.scheme || "none"),
    input("s-secret", "Verification secret", { type: "password", autocomplete: "new-password" },
      s ? `Write-only. ${s.verify?.secrets_set ? `${s.verify.secrets_set} set; leave blank to keep them, or type one to replace them.` : "None set."}` : "Write-only"),
    input("s-max-body", "Max body", { value: s?.max_body ?? "", placeholder: "5MiB" }),
  ];
}

function read(form, isNew, s) {
  const v = (id) => form.querySelector(`#${id}`)?.value.trim() ?? "";
  const body = {};
  if (isNew) body.name = v("s-name");
  const scheme = v("s-scheme");
  if (scheme !== "none") {
    body.verify = { scheme };
    if (v("s-secret")) body.verify.secrets = [v("s-secret")];
  } else if (s?.verify) {
    body.verify = null;
  }
  if (v("s-max-body")) body.max_body = v("s-max-body");
  return body;
}

async function create(main) {
  const status = h("div", { "aria-live": "polite" });
  const form = h("form", { novalidate: true, "aria-label": "New source" }, fields(null), h("button", { type: "submit", class: "primary" }, "Create source"), status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { const s = await post("/sources", read(form, true)); location.hash = `#/sources/${enc(s.name)}`; } catch (e) { replace(status, message("error", e.message)); }
  });
  main.append(h("p", null, h("a", { href: "#/sources" }, "← Sources")), h("h1", null, "New source"), form);
}

async function detail(main, ctx) {
  const name = ctx.params[0];
  let s;
  try { s = await get(`/sources/${enc(name)}`); } catch (e) {
    if (e.status === 404) { main.append(h("h1", null, "Source ", name), message("error", e.message)); return; }
    throw e;
  }
  const status = h("div", { "aria-live": "polite" });
  main.append(h("p", null, h("a", { href: "#/sources" }, "← Sources")), h("h1", null, "Source ", name), status,
    h("dl", { class: "kv" },
      h("dt", null, "Ingest URL"), h("dd", null, h("code", null, ingestUrl(name)), copyButton(ingestUrl(name))),
      h("dt", null, "Verification"), h("dd", null, s.verify ? `${s.verify.scheme}, ${s.verify.secrets_set ?? 0} secret(s) set (write-only)` : "none: anyone who knows the URL can send"),
      h("dt", null, "Dedup"), h("dd", null, dedupText(s)),
      h("dt", null, "Origin"), h("dd", null, s.origin === "config" ? "config file" : "API")),
    h("p", null, h("a", { class: "button", href: `#/events?source=${enc(name)}` }, "Events of this source")),
    originNote(s),
    h("details", null, h("summary", null, "As stored (secrets redacted)"), h("pre", null, JSON.stringify(s, null, 2))));
  if (s.verify) await rejections(main, name, s);
  if (s.origin === "config") return;
  const form = h("form", { novalidate: true, "aria-label": `Edit ${name}` }, fields(s),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Save changes"), h("button", { type: "button", class: "danger", id: "delete" }, "Delete source")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try { await patch(`/sources/${enc(name)}`, read(form, false, s)); replace(status, message("ok", `Saved ${name}.`)); form.querySelector("#s-secret").value = ""; } catch (e) { replace(status, message("error", e.message)); }
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
