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

// Runs `f` every `ms` while the page is shown; returns the cleanup.
export function every(ms, ctx, f) {
  const id = setInterval(() => { if (ctx.alive()) f(); }, ms);
  return () => clearInterval(id);
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
