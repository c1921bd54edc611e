// The audit trail: who did what, newest first, paged.
import { h, message, table, replace } from "../dom.js";
import { get, qs } from "../api.js";
import { time } from "../format.js";

export async function render(main) {
  main.append(h("h1", null, "Audit trail"),
    h("p", { class: "muted" }, "The actor is “token:” and the name of the API token that made the change (token:bootstrap: HOOKRELAY_TOKEN or the token printed at the first start)."));
  const tbody = h("tbody");
  const wrap = h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Audit trail table" }, h("table", { "aria-label": "Audit trail", class: "stack" },
    h("thead", null, h("tr", null, ["When", "Actor", "Action", "Target", "Count", "Detail"].map((c) => h("th", { scope: "col" }, c)))), tbody));
  const pager = h("div", { class: "pager" });
  main.append(wrap, pager);
  let cursor = null;
  let n = 0;
  async function more() {
    const r = await get(`/audit${qs({ cursor, limit: 50 })}`);
    for (const a of r.items) {
      n += 1;
      // data-label: on a phone each row is stacked, its cells labelled (see .stack in app.css).
      tbody.append(h("tr", null, h("td", { "data-label": "When" }, time(a.at)),
        h("td", { class: "mono", "data-label": "Actor" }, a.actor), h("td", { "data-label": "Action" }, a.action),
        h("td", { class: "mono", "data-label": "Target" }, a.target), h("td", { "data-label": "Count" }, String(a.count ?? "")),
        h("td", { class: "mono", "data-label": "Detail" }, a.detail ? JSON.stringify(a.detail) : "")));
    }
    cursor = r.next_cursor;
    replace(pager, cursor ? h("button", { type: "button", onclick: () => more().catch((e) => replace(pager, message("error", e.message))) }, "Older entries")
      : h("span", { class: "muted" }, n ? `${n} entries, all shown.` : ""));
  }
  await more();
  if (n === 0) { wrap.hidden = true; main.append(message("info", "Nothing in the audit trail yet: changes made through the API or this dashboard (pause, replay, create…) are recorded here.")); }
}
