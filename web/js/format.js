import { h } from "./dom.js";

// Times are shown in the browser's zone with a relative time; the UTC time is on hover (title).
const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false,
});

export function relative(date, now = Date.now()) {
  const s = Math.round((date.getTime() - now) / 1000);
  const a = Math.abs(s);
  let text;
  if (a < 5) return "now";
  if (a < 60) text = `${a} s`;
  else if (a < 3600) text = `${Math.round(a / 60)} min`;
  else if (a < 86400 * 2) text = `${Math.round(a / 3600)} h`;
  else text = `${Math.round(a / 86400)} d`;
  return s > 0 ? `in ${text}` : `${text} ago`;
}

function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

// "14:05:31" today, "Nov 30, 2026, 14:05:31" otherwise.
export function clock(date) {
  return sameDay(date, new Date()) ? timeFmt.format(date) : dateTimeFmt.format(date);
}

// What holds a paused delivery back (the API's paused_by), as words after "paused": "breaker open
// until 14:05:31", "by operator", "410 Gone", "in config"; "" when it is not paused or the server
// does not say.
export function pauseCause(d) {
  if (!d || d.status !== "paused") return "";
  switch (d.paused_by) {
    case "breaker": return d.breaker_open_until ? `breaker open until ${clock(new Date(d.breaker_open_until))}` : "breaker half-open";
    case "operator": return "by operator";
    case "gone": return "410 Gone";
    case "config": return "in config";
    default: return "";
  }
}

export function utc(date) {
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

// <time> with the local clock time and the relative time: "14:05:31 (in 3 min)".
export function time(iso, opts = {}) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const d = new Date(iso);
  const text = opts.relativeOnly ? relative(d) : `${clock(d)} (${relative(d)})`;
  return h("time", { datetime: iso, title: utc(d), "data-rel": opts.relativeOnly ? "only" : "with" }, text);
}

// Text from the API with RFC 3339 times inside (a reason: "circuit breaker open until
// 2026-12-01T01:34:30.101Z") as nodes, each time shown like every other one.
const kIsoTime = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
export function withTimes(text) {
  if (!text) return text;
  const out = [];
  let last = 0;
  for (const m of text.matchAll(kIsoTime)) {
    out.push(text.slice(last, m.index), time(m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

// Refreshes every <time data-rel> under `root` (relative times age while a page is open).
export function refreshTimes(root) {
  for (const t of root.querySelectorAll("time[data-rel]")) {
    const d = new Date(t.getAttribute("datetime"));
    t.textContent = t.dataset.rel === "only" ? relative(d) : `${clock(d)} (${relative(d)})`;
  }
}

export function bytes(n) {
  if (n == null) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function percent(x) {
  if (x == null || Number.isNaN(x)) return "—";
  return `${(x * 100).toFixed(x >= 0.999 || x === 0 ? 0 : 1)} %`;
}

// An attempt's duration in milliseconds: "84 ms", "1.2 s", "45 s".
export function millis(ms) {
  if (ms == null || Number.isNaN(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 1000)} s`;
}

export function shortId(id) { return id && id.length > 12 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id; }

// A datetime-local input's value (local time) → RFC 3339 UTC; "" stays "".
export function localInputToIso(v) {
  if (!v) return "";
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

export function isoToLocalInput(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
