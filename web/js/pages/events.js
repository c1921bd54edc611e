// Events: filters (kept in the URL: status, source, destination, time range, type pattern,
// unrouted only), cursor pagination, new events appear live without moving the page, select
// several and replay them, or replay all matching as a bulk replay job (an operator's or an
// admin's: a viewer has no selection and no replay). An event no route took shows an "unrouted"
// badge where its deliveries would be.
import { h, clear, message, badge, table, replace, updateNode } from "../dom.js";
import { get, post, qs, enc } from "../api.js";
import { time, bytes, localInputToIso, isoToLocalInput, pauseCause } from "../format.js";
import { firstEventHelp, names, refreshEvery, select, input, typeText } from "./common.js";
import { can } from "../access.js";

const STATUSES = ["", "scheduled", "delivering", "delivered", "failed", "paused"];

export async function render(main, ctx) {
  const q = ctx.query;
  const filter = {
    status: q.get("status") || "", source: q.get("source") || "", destination: q.get("destination") || "",
    since: q.get("since") || "", until: q.get("until") || "",
    type: q.get("type") || "", routed: q.get("routed") === "false" ? "false" : "",
  };
  const idQuery = q.get("id") || "";
  const [sourceNames, destNames] = await Promise.all([names("sources"), names("destinations")]);

  main.append(h("h1", null, "Events"));
  const form = h("form", { class: "filters", role: "search", "aria-label": "Filter events" },
    select("f-status", "Status", STATUSES.map((s) => [s, s || "any"]), filter.status),
    select("f-source", "Source", [["", "any"], ...sourceNames], filter.source),
    select("f-destination", "Destination", [["", "any"], ...destNames], filter.destination),
    input("f-since", "Received from", { type: "datetime-local", value: isoToLocalInput(filter.since) }),
    input("f-until", "until", { type: "datetime-local", value: isoToLocalInput(filter.until) }),
    input("f-type", "Type", { type: "text", value: filter.type, placeholder: "invoice.*", size: 16, autocomplete: "off",
      spellcheck: "false", "aria-describedby": "f-type-hint" }),
    select("f-routed", "Routed", [["", "all"], ["false", "unrouted only"]], filter.routed),
    h("div", { class: "wide" }, input("f-id", "Event id", { type: "text", value: idQuery, placeholder: "01J…", size: 28, autocomplete: "off", spellcheck: "false" })),
    h("button", { type: "submit", class: "primary" }, "Apply"),
    h("a", { href: "#/events", class: "button" }, "Clear"),
    h("p", { class: "hint wide", id: "f-type-hint" }, "Type: an exact type (invoice.paid) or a prefix ending in * (invoice.*)."));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = (id) => form.querySelector(`#${id}`).value.trim();
    const id = v("f-id");
    if (id) { location.hash = `#/events/${enc(id)}`; return; }
    location.hash = `#/events${qs({
      status: v("f-status"), source: v("f-source"), destination: v("f-destination"),
      since: localInputToIso(v("f-since")), until: localInputToIso(v("f-until")),
      type: v("f-type"), routed: v("f-routed"),
    })}`;
  });
  main.append(form);

  const status = h("div", { "aria-live": "polite" });
  const replays = can("replay");
  const countSel = h("span", { class: "muted", id: "selected-count" }, "0 selected");
  const replaySel = h("button", { type: "button", disabled: true, id: "replay-selected" }, "Replay selected");
  const replayAll = h("a", { class: "button", href: `#/replays/new${qs(filter)}`, id: "replay-all" }, "Replay all matching…");
  const newNote = h("span", { class: "muted", "aria-live": "polite" });
  main.append(h("div", { class: "row toolbar" }, replays ? [replaySel, countSel, replayAll] : null, h("span", { class: "spacer" }), newNote), status);

  const tbody = h("tbody");
  const selectAll = h("input", { type: "checkbox", "aria-label": "Select all events shown" });
  const tableEl = h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Events table" }, h("table", { "aria-label": "Events" },
    h("thead", null, h("tr", null,
      replays ? h("th", { scope: "col" }, selectAll) : null, h("th", { scope: "col" }, "Event"), h("th", { scope: "col", class: "hide-narrow" }, "Type"),
      h("th", { scope: "col", class: "hide-narrow" }, "Source"),
      h("th", { scope: "col" }, "Received"), h("th", { scope: "col" }, "Deliveries"),
      h("th", { scope: "col", class: "num hide-narrow" }, "Size"))),
    tbody));
  const pager = h("div", { class: "pager" });
  main.append(tableEl, pager);

  const shown = new Set();
  const selected = new Set();
  let cursor = null;
  let newest = null;

  function updateSelection() {
    countSel.textContent = `${selected.size} selected`;
    replaySel.disabled = selected.size === 0;
  }

  function row(e) {
    const cb = h("input", { type: "checkbox", "aria-label": `Select event ${e.id}`, value: e.id });
    cb.checked = selected.has(e.id);
    cb.addEventListener("change", () => { if (cb.checked) selected.add(e.id); else selected.delete(e.id); updateSelection(); });
    return h("tr", { dataset: { id: e.id } },
      replays ? h("td", null, cb) : null,
      h("td", { class: "id-cell" }, h("a", { href: `#/events/${enc(e.id)}`, class: "mono", title: e.id },
        // The whole id on a wide screen; on a phone its ends on two lines, so the column stays narrow.
        h("span", { class: "hide-narrow" }, e.id), h("span", { class: "show-narrow" }, `${e.id.slice(0, 6)}…`, h("wbr"), e.id.slice(-6))),
        // On a phone the type goes under the id rather than into a column of its own.
        // It may break after a dot or a slash only ("customer." / "created").
        e.type ? h("span", { class: "show-narrow type-narrow mono" }, e.type.split(/(?<=[./])/).map((part) => [part, h("wbr")])) : null),
      h("td", { class: "hide-narrow type-cell" }, typeText(e.type)),
      h("td", { class: "hide-narrow" }, e.source),
      h("td", null, time(e.received_at)),
      h("td", null,
        // No route took it at ingest (deliveries shown beside it are replays sent by hand).
        e.routed === false ? h("span", { class: "dl" }, h("span", { class: "badge s-unrouted", title: "No route took this event" }, "unrouted")) : null,
        e.deliveries.length === 0 && e.routed !== false ? h("span", { class: "muted" }, "no delivery") : null,
        e.deliveries.map((d) => h("span", { class: "dl" }, `${d.destination} `, badge(d.status),
          // Paused by what: the breaker (the destination itself is not paused), the operator, …
          pauseCause(d) ? h("span", { class: "muted cause" }, ` (${pauseCause(d)})`) : null))),
      h("td", { class: "num hide-narrow" }, bytes(e.size)));
  }

  selectAll.addEventListener("change", () => {
    for (const cb of tbody.querySelectorAll("input[type=checkbox]")) {
      cb.checked = selectAll.checked;
      if (cb.checked) selected.add(cb.value); else selected.delete(cb.value);
    }
    updateSelection();
  });

  async function loadPage() {
    const page = await get(`/events${qs({ ...filter, cursor, limit: 50 })}`);
    for (const e of page.items) {
      if (shown.has(e.id)) continue;
      shown.add(e.id);
      if (!newest || e.id > newest) newest = e.id;
      tbody.append(row(e));
    }
    cursor = page.next_cursor;
    clear(pager);
    if (cursor) pager.append(h("button", { type: "button", onclick: () => loadPage().catch(showError) }, "Load older events"));
    else if (shown.size > 0) pager.append(h("span", { class: "muted" }, `${shown.size} event${shown.size === 1 ? "" : "s"}, all shown.`));
  }

  function showError(e) { replace(status, message("error", `Could not load events: ${e.message}`)); }

  await loadPage();
  const anyFilter = Object.values(filter).some((v) => v);
  if (shown.size === 0) {
    tableEl.hidden = true;
    main.append(anyFilter ? message("info", "No event matches these filters.") : firstEventHelp(sourceNames));
  }

  // Live: new events (ids sort by time) are added at the top; the rows already shown, the
  // filters and the scroll position stay as they are. Statuses of shown rows are refreshed.
  async function poll() {
    try {
      const page = await get(`/events${qs({ ...filter, limit: 50 })}`);
      const fresh = page.items.filter((e) => !shown.has(e.id) && (!newest || e.id > newest)).reverse();
      for (const e of page.items) {
        const tr = tbody.querySelector(`tr[data-id="${CSS.escape(e.id)}"]`);
        if (tr) updateNode(tr, row(e));
      }
      if (fresh.length) {
        const y = window.scrollY;
        const h0 = document.documentElement.scrollHeight;
        for (const e of fresh) { shown.add(e.id); newest = e.id > (newest || "") ? e.id : newest; tbody.prepend(row(e)); }
        if (y > 0) window.scrollTo(0, y + document.documentElement.scrollHeight - h0);
        tableEl.hidden = false;
        document.getElementById("first-event")?.remove();
        newNote.textContent = `${fresh.length} new event${fresh.length === 1 ? "" : "s"} added`;
      }
    } catch (e) {
      showError(e);
    }
  }

  replaySel.addEventListener("click", async () => {
    const ids = [...selected];
    replaySel.disabled = true;
    let ok = 0;
    const errors = [];
    for (const id of ids) {
      try { await post(`/events/${enc(id)}/replay`); ok += 1; } catch (e) { errors.push(`${id}: ${e.message}`); }
    }
    replace(status, message(errors.length ? "error" : "ok",
      `Replayed ${ok} of ${ids.length} event${ids.length === 1 ? "" : "s"}.`, errors.length ? ` ${errors.join("; ")}` : ""));
    selected.clear();
    for (const cb of tbody.querySelectorAll("input[type=checkbox]")) cb.checked = false;
    selectAll.checked = false;
    updateSelection();
    poll();
  });

  return refreshEvery(3000, ctx, poll);
}
