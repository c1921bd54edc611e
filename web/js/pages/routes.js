// Routes: which source's events go to which destination, and which of them (types and a filter,
// docs/routing.md). The list; the editor, which creates a route or edits an API-owned one (a
// config-file route is shown read-only), with a dry run of its rule on the source's last 20
// events (POST /api/v1/routes/test) before anything is saved: on "Test" and, debounced, as the
// rule is typed. A value the API refuses is shown next to its field with the API's path
// ("filter.body.amount.$gt: expects a number or a string"). Creating, editing and deleting need
// the admin role (access.js): for another role every route is read-only, its dry run still runs.
import { h, message, table, replace, clear } from "../dom.js";
import { get, post, patch, del, enc, rawJson } from "../api.js";
import { time } from "../format.js";
import { names, select, originNote, typeText } from "./common.js";
import { can, roleNote } from "../access.js";

const DRY_RUN_EVENTS = 20;
const DEBOUNCE_MS = 600;

// A message for the next page shown: a create or a delete navigates, which clears the page.
let flash = null;
function showFlash(status) {
  if (flash) replace(status, message(flash[0], flash[1]));
  flash = null;
}

function typesView(types) {
  return types && types.length ? h("span", { class: "chips" }, types.map((t) => h("span", { class: "chip mono" }, t)))
    : h("span", { class: "muted" }, "all");
}

function deleteButton(r, status, after) {
  const b = h("button", { type: "button", class: "danger", "aria-label": `Delete route ${r.id}` }, "Delete");
  b.addEventListener("click", async () => {
    if (!window.confirm(`Delete route ${r.id}?`)) return;
    try {
      await del(`/routes/${enc(r.id)}`);
      after();
    } catch (e) {
      replace(status, message("error", e.message));
    }
  });
  return b;
}

async function list(main) {
  const status = h("div", { "aria-live": "polite" });
  const wrap = h("div");
  const edits = can("editCatalog");
  main.append(h("div", { class: "row" }, h("h1", null, "Routes"), h("span", { class: "spacer" }),
    edits ? h("a", { class: "button primary", href: "#/routes/+new" }, "New route") : null), status, wrap);
  showFlash(status);
  async function load() {
    const r = await get("/routes");
    replace(wrap, r.items.length === 0 ? message("info", "No route yet: events are stored but sent nowhere until a route links a source to a destination.")
      : table(["Id", "Source", "Destination", "Types", "Filter", "Origin", edits ? "" : null].filter((c) => c !== null), r.items.map((x) => h("tr", { dataset: { id: x.id } },
        h("td", { class: "mono" }, h("a", { href: `#/routes/${enc(x.id)}` }, x.id)),
        h("td", null, h("a", { href: `#/sources/${enc(x.source)}` }, x.source)),
        h("td", null, h("a", { href: `#/destinations/${enc(x.destination)}` }, x.destination)),
        h("td", null, typesView(x.types)),
        h("td", null, x.filter ? h("span", { title: JSON.stringify(x.filter) }, "yes") : h("span", { class: "muted" }, "none")),
        h("td", null, x.origin === "config" ? "config file" : "API"),
        !edits ? null : h("td", null, x.origin === "config" ? h("span", { class: "muted" }, "read-only")
          : deleteButton(x, status, () => { replace(status, message("ok", `Deleted route ${x.id}.`)); load().catch(() => {}); })))),
      { label: "Routes", stack: true }));
  }
  await load();
}

// A value that cannot be sent as typed, named like the API names its fields.
class FieldError extends Error {
  constructor(field, msg) { super(msg); this.field = field; }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// The error shown next to a field: the API's message, its leading path in code.
function errorText(e) {
  const f = e.field;
  if (f && e.message.startsWith(`${f}:`)) return [h("code", null, f), e.message.slice(f.length)];
  return e.message;
}

async function editor(main, ctx) {
  const id = ctx.view === "new" ? null : ctx.params[0];
  const status = h("div", { "aria-live": "polite" });
  main.append(h("p", null, h("a", { href: "#/routes" }, "← Routes")),
    h("h1", null, id ? ["Route ", h("span", { class: "mono" }, id)] : "New route"), status);
  let route = null;
  if (id) {
    try {
      route = await get(`/routes/${enc(id)}`);
    } catch (e) {
      if (e.status !== 404 && e.status !== 400) throw e;
      main.append(message("error", e.message), h("p", null, h("a", { href: "#/routes" }, "Back to the routes")));
      return null;
    }
  }
  const [sourceNames, destNames] = route ? [[], []] : await Promise.all([names("sources"), names("destinations")]);
  // A config-file route is the file's; anyone but an admin may look and dry-run, not change.
  const readOnly = route?.origin === "config" || !can("editCatalog");
  showFlash(status);

  const errorSlot = (name) => h("p", { class: "field-error", id: `${name}-error`, role: "alert", hidden: true });
  const typesArea = h("textarea", {
    id: "rt-types", name: "rt-types", rows: 5, spellcheck: "false", autocomplete: "off", readOnly,
    "aria-describedby": "rt-types-hint rt-types-error", placeholder: readOnly ? "(all types)" : "invoice.*\ncustomer.subscription.updated",
  });
  typesArea.value = (route?.types || []).join("\n");
  const filterArea = h("textarea", {
    id: "rt-filter", name: "rt-filter", rows: 9, spellcheck: "false", autocomplete: "off", readOnly,
    "aria-describedby": "rt-filter-hint rt-filter-error", placeholder: readOnly ? "(no filter)" : '{"body": {"livemode": true}}',
  });
  filterArea.value = route?.filter ? JSON.stringify(route.filter, null, 2) : "";

  const where = route
    ? h("dl", { class: "kv" },
      h("dt", null, "Source"), h("dd", { id: "rt-source-name" }, h("a", { href: `#/sources/${enc(route.source)}` }, route.source)),
      h("dt", null, "Destination"), h("dd", null, h("a", { href: `#/destinations/${enc(route.destination)}` }, route.destination)),
      h("dt", null, "Origin"), h("dd", null, route.origin === "config" ? "config file" : "API"))
    : h("div", { class: "route-where" },
      select("rt-source", "Source", sourceNames, sourceNames[0], { "aria-describedby": "rt-source-error" }), errorSlot("rt-source"),
      select("rt-destination", "Destination", destNames, destNames[0], { "aria-describedby": "rt-destination-error" }), errorSlot("rt-destination"),
      h("div", { class: "field" }, h("label", { for: "rt-id" }, "Id (optional)"),
        h("input", { id: "rt-id", name: "rt-id", placeholder: "source:destination", autocomplete: "off", spellcheck: "false",
          "aria-describedby": "rt-id-error" }), errorSlot("rt-id")));

  const testButton = h("button", { type: "button", id: "rt-test" }, "Test");
  const saveButton = readOnly ? null : h("button", { type: "submit", class: "primary", id: "rt-save" }, route ? "Save changes" : "Create route");
  const dry = h("div", { id: "rt-dry", "aria-live": "polite" });
  const form = h("form", { class: "route-form", novalidate: true, "aria-label": route ? `Route ${route.id}` : "New route" },
    route?.origin === "config" ? originNote(route) : readOnly ? roleNote("editCatalog", "edit-note") : null,
    where,
    h("div", { class: "rule" },
      h("div", { class: "field" }, h("label", { for: "rt-types" }, "Types"), typesArea,
        h("p", { class: "hint", id: "rt-types-hint" }, "One pattern per line: an exact type (invoice.paid) or a prefix ending in * (invoice.*). Empty: every event, with a type or not."),
        errorSlot("rt-types")),
      h("div", { class: "field" }, h("label", { for: "rt-filter" }, "Filter (JSON)"), filterArea,
        h("p", { class: "hint", id: "rt-filter-hint" }, 'A condition on "headers" and "body", e.g. {"body": {"amount": {"$gte": 1000}}}; operators in docs/routing.md. Empty: no filter.'),
        errorSlot("rt-filter"))),
    route && !readOnly ? h("p", { class: "muted" }, "Source and destination cannot change: create another route and delete this one.") : null,
    h("div", { class: "row" }, testButton, saveButton, h("span", { class: "spacer" }),
      route && !readOnly ? deleteButton(route, status, () => { flash = ["ok", `Deleted route ${route.id}.`]; location.hash = "#/routes"; }) : null));
  main.append(form,
    h("section", { class: "dry-run", "aria-labelledby": "dry-heading" },
      h("h2", { id: "dry-heading" }, "Dry run"),
      h("p", { class: "muted" }, `Which of the source's last ${DRY_RUN_EVENTS} events this rule would take, and why the others would be skipped. Nothing is sent or saved.`),
      dry));

  const sourceOf = () => route ? route.source : form.querySelector("#rt-source").value;
  const fieldEl = (field) => {
    const f = field || "";
    if (f === "types" || f.startsWith("types[") || f.startsWith("types.")) return "rt-types";
    if (f === "filter" || f.startsWith("filter.") || f.startsWith("filter[")) return "rt-filter";
    if (!route && ["source", "destination", "id"].includes(f)) return `rt-${f}`;
    return null;
  };
  function clearErrors() {
    for (const x of form.querySelectorAll("[aria-invalid]")) x.removeAttribute("aria-invalid");
    for (const x of form.querySelectorAll(".field-error")) { clear(x); x.hidden = true; }
  }
  // Shows `e` next to the field it names (or in the status line); focus only when the user asked.
  function showError(e, focus) {
    clearErrors();
    const fid = fieldEl(e.field);
    if (!fid) { replace(status, message("error", e.message)); return; }
    const el = form.querySelector(`#${fid}`);
    const slot = form.querySelector(`#${fid}-error`);
    replace(slot, errorText(e));
    slot.hidden = false;
    el.setAttribute("aria-invalid", "true");
    if (focus) el.focus();
  }

  // The rule as typed: types split on lines (and spaces, which no pattern may contain), the
  // filter parsed here only to catch a typo before the server sees it; its text is sent as typed.
  function readRule() {
    const types = typesArea.value.split(/\s+/).filter(Boolean);
    const text = filterArea.value.trim();
    let filter = null;
    if (text) {
      try { filter = JSON.parse(text); } catch (err) { throw new FieldError("filter", `filter: not valid JSON: ${err.message}`); }
      if (!isObject(filter)) throw new FieldError("filter", "filter: must be a JSON object (or empty for no filter)");
    }
    return { types, filter, text };
  }
  function ruleBody(rule) {
    const b = {};
    if (rule.types.length) b.types = rule.types;
    if (rule.filter) b.filter = rawJson(rule.text);
    return b;
  }

  let dryGen = 0;
  let timer = null;
  async function dryRun(focus) {
    if (timer) { clearTimeout(timer); timer = null; }
    const my = ++dryGen;
    let rule;
    try { rule = readRule(); } catch (e) {
      showError(e, focus);
      replace(dry, message("info", "Fix the error above to see which events this rule would take."));
      return;
    }
    const source = sourceOf();
    if (!source) { replace(dry, message("info", "Choose a source first.")); return; }
    dry.setAttribute("aria-busy", "true");
    let r;
    try {
      r = await post("/routes/test", { source, ...ruleBody(rule), last: DRY_RUN_EVENTS });
    } catch (e) {
      if (my !== dryGen || !ctx.alive()) return;
      dry.removeAttribute("aria-busy");
      if (fieldEl(e.field)) {
        showError(e, focus);
        replace(dry, message("info", "Fix the error above to see which events this rule would take."));
      } else {
        replace(dry, message("error", `The dry run failed: ${e.message}`));
      }
      return;
    }
    if (my !== dryGen || !ctx.alive()) return;
    dry.removeAttribute("aria-busy");
    clearErrors();
    replace(dry, dryResult(r));
  }
  function schedule() {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => dryRun(false), DEBOUNCE_MS);
  }
  testButton.addEventListener("click", () => dryRun(true));
  if (!readOnly) {
    typesArea.addEventListener("input", schedule);
    filterArea.addEventListener("input", schedule);
  }
  form.querySelector("#rt-source")?.addEventListener("change", () => dryRun(false));

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (readOnly) return;
    let rule;
    try { rule = readRule(); } catch (e) { showError(e, true); return; }
    try {
      if (!route) {
        const body = { source: sourceOf(), destination: form.querySelector("#rt-destination").value, ...ruleBody(rule) };
        const idValue = form.querySelector("#rt-id").value.trim();
        if (idValue) body.id = idValue;
        const r = await post("/routes", body);
        flash = ["ok", `Created route ${r.id}.`];
        location.hash = `#/routes/${enc(r.id)}`;
        return;
      }
      // PATCH replaces types and filter whole (not merged): only what changed, the filter as typed.
      const body = {};
      if (!same(route.types || [], rule.types)) body.types = rule.types;
      if (!same(route.filter, rule.filter)) body.filter = rule.filter === null ? null : rawJson(rule.text);
      if (Object.keys(body).length === 0) { clearErrors(); replace(status, message("info", "Nothing changed.")); return; }
      route = await patch(`/routes/${enc(route.id)}`, body);
      clearErrors();
      replace(status, message("ok", `Saved route ${route.id}.`));
    } catch (e) {
      showError(e, true);
      if (!fieldEl(e.field)) return;
      replace(status, message("error", "Not saved: see the field marked below."));
    }
  });

  await dryRun(false);
  if (!route) form.querySelector("#rt-source")?.focus();
  return () => { if (timer) clearTimeout(timer); dryGen += 1; };
}

function dryResult(r) {
  if (r.total === 0) return message("info", `${r.source} has no event yet to test against.`);
  const skipped = r.total - r.matched;
  return [
    h("p", { id: "dry-summary" }, h("strong", null, `${r.matched} of ${r.total}`),
      ` recent event${r.total === 1 ? "" : "s"} of ${r.source} would be taken, ${skipped} skipped.`),
    table(["Event", "Received", "Type", "Verdict", "Reason"], r.events.map((e) => h("tr", { dataset: { id: e.id } },
      h("td", { class: "id-cell" }, h("a", { class: "mono", href: `#/events/${enc(e.id)}` }, e.id)),
      h("td", null, time(e.received_at, { relativeOnly: true })),
      h("td", null, typeText(e.type)),
      h("td", null, e.matched ? h("span", { class: "badge s-ok" }, "taken") : h("span", { class: "badge s-skipped" }, "skipped")),
      h("td", { class: "reason" }, e.matched ? h("span", { class: "muted" }, "—") : e.reason))),
    { label: "Dry run: the source's recent events", stack: true }),
  ];
}

export async function render(main, ctx) {
  if (ctx.view === "list") return list(main, ctx);
  return editor(main, ctx);
}
