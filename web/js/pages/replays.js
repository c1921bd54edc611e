// Bulk replays: start one from a filter (with the number of matching events shown first),
// watch its progress, cancel it; the list of past jobs. Starting and cancelling need the operator
// role (access.js): a viewer watches only.
import { h, message, badge, table, replace, replaceInPlace } from "../dom.js";
import { get, post, del, qs, enc } from "../api.js";
import { time, localInputToIso, isoToLocalInput, percent } from "../format.js";
import { refreshEvery, names, select, input } from "./common.js";
import { can } from "../access.js";

function progress(j) {
  const done = j.done + j.failed + (["done", "cancelled", "failed"].includes(j.state) ? (j.skipped || 0) : 0);
  const frac = j.total > 0 ? Math.min(done / j.total, 1) : (j.state === "done" ? 1 : 0);
  return h("div", { class: "row" },
    h("div", { class: "progress", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100",
      "aria-valuenow": String(Math.round(frac * 100)), "aria-label": `Progress of job ${j.id}` },
    h("div", { style: null, dataset: { w: String(Math.round(frac * 100)) } })),
    h("span", { class: "pct" }, percent(frac)));
}

// A job's filter as words ("failed deliveries to legacy, from shop, received from 14:00 until
// 15:00"), not as JSON; a field this page does not know is still shown, as "name: value".
function filterText(f) {
  if (!f) return "—";
  const known = ["status", "destination", "source", "since", "until", "type", "routed"];
  const out = [f.routed === false ? "unrouted events" : `${f.status || "failed"} deliveries`];
  out.push(f.destination ? ` to ${f.destination}` : " to any destination");
  if (f.type) out.push(`, of type ${f.type}`);
  if (f.source) out.push(`, from ${f.source}`);
  if (f.since) out.push(", received from ", time(f.since));
  if (f.until) out.push(f.since ? " until " : ", received until ", time(f.until));
  for (const [k, v] of Object.entries(f)) {
    if (!known.includes(k)) out.push(`, ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  }
  return out;
}

// The CSP forbids inline styles set from markup, but CSSOM assignments are allowed.
function sizeBars(root) {
  for (const el of root.querySelectorAll(".progress > div[data-w]")) el.style.width = `${el.dataset.w}%`;
}

async function list(main, ctx) {
  const status = h("div", { "aria-live": "polite" });
  const wrap = h("div");
  main.append(h("div", { class: "row" }, h("h1", null, "Bulk replays"), h("span", { class: "spacer" }),
    can("replay") ? h("a", { class: "button primary", href: "#/replays/new" }, "New bulk replay") : null), status, wrap);
  async function load() {
    const r = await get("/replays?limit=100");
    if (r.items.length === 0) {
      replaceInPlace(wrap, message("info", can("replay") ? "No bulk replay yet. Start one from a filter with “New bulk replay”, or “Replay all matching” on the Events page."
        : "No bulk replay yet."));
      return;
    }
    const n = "num hide-narrow";
    replaceInPlace(wrap, table(["Job", "State", "Progress", { text: "Total", class: n }, { text: "Done", class: n },
      { text: "Failed", class: n }, { text: "Filter", class: "hide-narrow" }, "Created"],
    r.items.map((j) => h("tr", { dataset: { id: j.id } },
      h("td", { class: "id-cell" }, h("a", { class: "mono", href: `#/replays/${enc(j.id)}` }, j.id)),
      h("td", null, badge(j.state)), h("td", null, progress(j)),
      h("td", { class: n }, String(j.total)), h("td", { class: n }, String(j.done)), h("td", { class: n }, String(j.failed)),
      h("td", { class: "hide-narrow" }, filterText(j.filter)),
      h("td", null, time(j.created_at, { relativeOnly: true })))), { label: "Bulk replay jobs" }));
    sizeBars(wrap);
  }
  await load();
  return refreshEvery(3000, ctx, load, status);
}

async function create(main, ctx) {
  const q = ctx.query;
  const [sourceNames, destNames] = await Promise.all([names("sources"), names("destinations")]);
  const status = h("div", { "aria-live": "polite" });
  const count = h("p", { id: "match-count", "aria-live": "polite" });
  const form = h("form", { novalidate: true, "aria-label": "New bulk replay" },
    select("r-status", "Status of the delivery to replay", ["failed", "delivered", "paused", "scheduled"], q.get("status") || "failed"),
    select("r-destination", "Destination", [["", "any"], ...destNames], q.get("destination") || ""),
    select("r-source", "Source", [["", "any"], ...sourceNames], q.get("source") || ""),
    input("r-since", "Received from", { type: "datetime-local", value: isoToLocalInput(q.get("since")) }),
    input("r-until", "until", { type: "datetime-local", value: isoToLocalInput(q.get("until")) }),
    input("r-type", "Type", { value: q.get("type") || "", placeholder: "invoice.*", autocomplete: "off", spellcheck: "false" },
      "Optional: an exact type (invoice.paid) or a prefix ending in * (invoice.*)"),
    select("r-routed", "Events", [["", "routed or not"], ["false", "unrouted only (no route took them)"]], q.get("routed") === "false" ? "false" : ""),
    input("r-rate", "Rate", { value: "", placeholder: "50/s" }, "Optional: 100/s, 6000/m; default the destination's rate limit or 50/s"),
    count,
    h("button", { type: "submit", class: "primary" }, "Start bulk replay"), status);
  const v = (id) => form.querySelector(`#${id}`).value.trim();
  // The events counted. An unrouted event has no delivery: no status, and the destination is where
  // the job sends it, not one it was delivered to.
  const filter = () => ({
    status: unroutedOnly() ? "" : v("r-status"), destination: unroutedOnly() ? "" : v("r-destination"), source: v("r-source"),
    since: localInputToIso(v("r-since")), until: localInputToIso(v("r-until")),
    type: v("r-type"), routed: v("r-routed"),
  });
  // Unrouted events have no delivery to be in a status, and go to the one destination named.
  const unroutedOnly = () => v("r-routed") === "false";
  function showFields() {
    form.querySelector("#r-status").closest(".field").hidden = unroutedOnly();
    const any = form.querySelector('#r-destination option[value=""]');
    any.disabled = unroutedOnly();
    any.textContent = unroutedOnly() ? "choose one" : "any";
  }
  // Counts matching events by paging through the event list (ids only), up to 10 000.
  let counting = 0;
  async function recount() {
    const my = ++counting;
    count.textContent = "Counting matching events…";
    let n = 0;
    let cursor = null;
    try {
      do {
        const page = await get(`/events${qs({ ...filter(), cursor, limit: 1000 })}`);
        if (my !== counting) return;
        n += page.items.length;
        cursor = page.next_cursor;
      } while (cursor && n < 10000);
      count.textContent = `${cursor ? "More than " : ""}${n} event${n === 1 ? "" : "s"} match${n === 1 ? "es" : ""} this filter now.`;
    } catch (e) {
      count.textContent = `Could not count: ${e.message}`;
    }
  }
  form.addEventListener("change", () => { showFields(); recount(); });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = filter();
    if (unroutedOnly()) { f.routed = false; f.destination = v("r-destination"); }
    const body = Object.fromEntries(Object.entries(f).filter(([k, x]) => x || (k === "routed" && x === false)));
    if (v("r-rate")) body.rate = /^\d+(\.\d+)?$/.test(v("r-rate")) ? Number(v("r-rate")) : v("r-rate");
    try {
      const j = await post("/replays", body);
      location.hash = `#/replays/${enc(j.id)}`;
    } catch (e) {
      replace(status, message("error", `Not started: ${e.message}`));
    }
  });
  main.append(h("p", null, h("a", { href: "#/replays" }, "← Bulk replays")), h("h1", null, "New bulk replay"),
    h("p", { class: "muted" }, "Every matching event gets a new delivery to each of its destinations whose latest delivery is in the chosen status, paced at the rate; unrouted events, to the destination chosen."), form);
  showFields();
  await recount();
}

async function detail(main, ctx) {
  const id = ctx.params[0];
  const status = h("div", { "aria-live": "polite" });
  const body = h("div");
  main.append(h("p", null, h("a", { href: "#/replays" }, "← Bulk replays")), h("h1", null, "Bulk replay ", h("span", { class: "mono" }, id)), status, body);
  async function load() {
    const j = await get(`/replays/${enc(id)}`);
    const cancel = h("button", { type: "button", class: "danger", id: "cancel" }, "Cancel");
    cancel.addEventListener("click", async () => {
      try { await del(`/replays/${enc(id)}`); replace(status, message("ok", "Cancelled.")); await load(); } catch (e) { replace(status, message("error", `Not cancelled: ${e.message}`)); }
    });
    replaceInPlace(body,
      h("div", { class: "row" }, badge(j.state), progress(j), ["queued", "running"].includes(j.state) && can("cancelReplay") ? cancel : null),
      j.waiting ? message("info", `Waiting: ${j.waiting.message}`) : null,
      j.error ? message("error", j.error) : null,
      h("dl", { class: "kv" },
        h("dt", null, "Total"), h("dd", { id: "job-total" }, String(j.total)),
        h("dt", null, "Done"), h("dd", { id: "job-done" }, String(j.done)),
        h("dt", null, "Failed"), h("dd", null, String(j.failed)),
        h("dt", null, "Skipped"), h("dd", null, String(j.skipped ?? 0)),
        h("dt", null, "Rate"), h("dd", null, `${j.rate}/s`),
        h("dt", null, "Replays"), h("dd", { id: "job-filter" }, filterText(j.filter)),
        h("dt", null, "Created"), h("dd", null, time(j.created_at)),
        h("dt", null, "Updated"), h("dd", null, time(j.updated_at))));
    sizeBars(body);
  }
  try {
    await load();
  } catch (e) {
    if (e.status === 404 || e.status === 400) { replace(body, message("error", e.message)); return null; }
    throw e;
  }
  return refreshEvery(1000, ctx, load, status);
}

export async function render(main, ctx) {
  if (ctx.view === "new") return create(main, ctx);
  if (ctx.view === "detail") return detail(main, ctx);
  return list(main, ctx);
}
