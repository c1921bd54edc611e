// Routes: which source's events go to which destination; create and delete API-owned ones.
import { h, message, table, replace } from "../dom.js";
import { get, post, del, enc } from "../api.js";
import { names, select, input } from "./common.js";

export async function render(main) {
  const status = h("div", { "aria-live": "polite" });
  const wrap = h("div");
  main.append(h("h1", null, "Routes"), status, wrap);
  async function load() {
    const r = await get("/routes");
    replace(wrap, r.items.length === 0 ? message("info", "No route yet: events are stored but sent nowhere until a route links a source to a destination.")
      : table(["Id", "Source", "Destination", "Origin", ""], r.items.map((x) => {
        const rm = x.origin === "config" ? h("span", { class: "muted" }, "config file: read-only")
          : h("button", { type: "button", class: "danger", "aria-label": `Delete route ${x.id}` }, "Delete");
        if (x.origin !== "config") {
          rm.addEventListener("click", async () => {
            if (!window.confirm(`Delete route ${x.id}?`)) return;
            try { await del(`/routes/${enc(x.id)}`); replace(status, message("ok", `Deleted route ${x.id}.`)); await load(); } catch (e) { replace(status, message("error", e.message)); }
          });
        }
        return h("tr", null, h("td", { class: "mono" }, x.id), h("td", null, h("a", { href: `#/sources/${enc(x.source)}` }, x.source)),
          h("td", null, h("a", { href: `#/destinations/${enc(x.destination)}` }, x.destination)), h("td", null, x.origin), h("td", null, rm));
      }), { label: "Routes" }));
  }
  await load();
  const [s, d] = await Promise.all([names("sources"), names("destinations")]);
  const form = h("form", { class: "filters", "aria-label": "New route" },
    select("rt-source", "Source", s, s[0]), select("rt-destination", "Destination", d, d[0]),
    input("rt-id", "Id (optional)", { placeholder: "source:destination", autocomplete: "off" }),
    h("button", { type: "submit", class: "primary" }, "Create route"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = (id) => form.querySelector(`#${id}`).value.trim();
    const body = { source: v("rt-source"), destination: v("rt-destination") };
    if (v("rt-id")) body.id = v("rt-id");
    try { const r = await post("/routes", body); replace(status, message("ok", `Created route ${r.id}.`)); await load(); } catch (e) { replace(status, message("error", e.message)); }
  });
  main.append(h("h2", null, "New route"), form);
}
