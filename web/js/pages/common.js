import { h, message, replace } from "../dom.js";
import { get } from "../api.js";

// How to send a first event (an empty store).
export function firstEventHelp(sourceNames) {
  const origin = location.origin;
  const src = sourceNames && sourceNames.length ? sourceNames[0] : "SOURCE";
  return h("div", { class: "panel", id: "first-event" },
    h("h2", null, "No events yet"),
    h("p", null, sourceNames && sourceNames.length
      ? "Send a first event to one of your sources, for example:"
      : "Create a source (config file or the Sources page), a destination and a route, then send a first event:"),
    h("pre", null, `curl -X POST ${origin}/in/${src} \\\n  -H 'Content-Type: application/json' \\\n  -d '{"hello": "world"}'`),
    h("p", { class: "muted" }, "It appears here within seconds, with its delivery to every routed destination."));
}

export async function names(kind) {
  try {
    const r = await get(`/${kind}`);
    return r.items.map((x) => x.name);
  } catch {
    return [];
  }
}

// Runs `load` again `ms` after the last run finished, while the page is shown: never two at once
// (a slow API delays the next refresh instead of stacking requests), and never after the page is
// left (ctx.alive() false) or the returned cleanup ran. A failed load shows `Could not refresh`
// in `status` (when given) and the refreshes go on.
export function refreshEvery(ms, ctx, load, status) {
  let timer = null;
  let stopped = false;
  const run = async () => {
    timer = null;
    if (stopped || !ctx.alive()) return;
    try {
      await load();
    } catch (e) {
      if (status && !stopped && ctx.alive()) replace(status, message("error", `Could not refresh: ${e.message}`));
    }
    if (!stopped && ctx.alive()) timer = setTimeout(run, ms);
  };
  timer = setTimeout(run, ms);
  return () => { stopped = true; if (timer !== null) clearTimeout(timer); };
}

// Shows the outcome of an action in `where` (replacing what was there).
export function outcome(where, kind, text) {
  replace(where, message(kind, text));
}

export function select(id, label, options, value, extra = {}) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("select", { id, name: id, ...extra },
      options.map((o) => {
        const [v, t] = Array.isArray(o) ? o : [o, o];
        return h("option", { value: v, selected: v === value }, t);
      })));
}

export function input(id, label, attrs = {}, hint) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, name: id, ...attrs }),
    hint ? h("p", { class: "hint" }, hint) : null);
}

export function yes(b) { return b ? "yes" : "no"; }

export function originNote(o) {
  return o.origin === "config"
    ? message("info", "Defined in the config file: read-only here. Change it in the file and restart; the file owns what it defines.")
    : "";  // DOM append() would print null
}

// An event's type (routing.md); an event without one shows a muted dash.
export function typeText(type) {
  return type == null ? h("span", { class: "muted", title: "No type" }, "—") : h("span", { class: "mono" }, type);
}
