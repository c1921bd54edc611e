// The destination page's "Thundering herd" section: GET /api/v1/simulate for the destination's
// policy and the same policy with the jitter switched (none ↔ equal), against a scenario the
// user can change; a chart of requests per second drawn here from the JSON (arrivals_per_second),
// and the figures as a table.
//
// Drawn here rather than served as the CLI's SVG: the chart is laid out for the width it gets
// (a phone's 390 px keeps 12 px text; a scaled-down 900 px drawing would not), it follows the
// dashboard's colours, and no markup from the server is ever inserted into the page.
import { h, svg, message, table, replace, clear } from "../dom.js";
import { get } from "../api.js";
import { input } from "./common.js";

const DEFAULTS = { events: "500", fail_window: "60s", recover_at: "4m", capacity: "50/s", seed: "1" };
const FIELDS = [
  ["events", "Events", "Whose first attempt fails", { type: "number", min: 1, max: 100000, inputmode: "numeric" }],
  ["fail_window", "Fail window", "They fail at random within it", {}],
  ["recover_at", "Recovers at", "Refused connections until then", {}],
  ["capacity", "Capacity", "Served per second; the rest 503", {}],
  ["seed", "Seed", "Same seed, same run", { type: "number", min: 0, inputmode: "numeric" }],
];
// Colour-blind safe (Okabe–Ito), each with a dash pattern of its own, so two lines are told
// apart without colour too.
const COLORS = ["#0060a8", "#c23b00", "#00795c", "#a3348f", "#6b5a00", "#3b3b3b"];
const DASHES = ["", "7 4", "2 3", "10 3 2 3", "4 4", "1 2"];

// The form field of a parameter: "fail_window" → #h-fail-window.
const fieldId = (key) => `h-${key.replace("_", "-")}`;

// "1h30m" → 5400, "250ms" → 0.25 (the API's durations).
function durationSecs(text) {
  const units = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };
  let total = 0;
  for (const [, n, u] of String(text).matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * units[u];
  return total;
}

// 75 → "1m15s", 3600 → "1h", 0 → "0".
function clockLabel(s) {
  if (s === 0) return "0";
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = Math.round(s % 60);
  return `${hh ? `${hh}h` : ""}${mm ? `${mm}m` : ""}${ss ? `${ss}s` : ""}`;
}

function drain(s) {
  return s >= 3600 ? `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(1)} s`;
}

// 1, 2, 5 × 10^k: the smallest step giving at most `n` ticks up to `max`.
function niceStep(max, n) {
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || raw;
}
// Time ticks in whole seconds, minutes or hours.
function timeStep(span, n) {
  return [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400]
    .find((s) => span / s <= n) || 86400 * Math.ceil(span / n / 86400);
}

// The chart of requests per second, `width` px wide: one line per strategy, the capacity, the
// recovery, axes with ticks, a title and (outside, in HTML) a legend.
function chart(doc, labels, width) {
  const narrow = width < 520;
  const W = width;
  const H = narrow ? 250 : 320;
  const pad = { l: 0, r: 12, t: 34, b: 40 };
  const recover = durationSecs(doc.scenario.recover_at);
  const capacity = doc.scenario.capacity_per_second;
  const last = Math.max(recover + 1, ...doc.strategies.map((s) => {
    const a = s.arrivals_per_second;
    return a.length ? a[a.length - 1][0] + 1 : 0;
  }));
  // As the CLI's chart: up to an hour past the recovery (later retries are in the table).
  const end = Math.min(last, recover + 3600);
  const plotH = H - pad.t - pad.b;
  // About one point per 2 px of the plot's width.
  const bucket = Math.max(1, Math.ceil(end / Math.max(60, Math.floor((W - 80) / 2))));
  const buckets = Math.ceil(end / bucket);
  const series = doc.strategies.map((s) => {
    const v = new Array(buckets).fill(0);
    for (const [sec, n] of s.arrivals_per_second) {
      if (sec < end) v[Math.floor(sec / bucket)] = Math.max(v[Math.floor(sec / bucket)], n);
    }
    return v;
  });
  const top = Math.max(capacity, ...series.flat());
  const yStep = Math.max(1, niceStep(top * 1.05, narrow ? 4 : 6));  // whole requests
  const yMax = Math.ceil((top * 1.05) / yStep) * yStep;
  // Room for the longest tick label (about 7 px a digit at 12 px) and the rotated axis label.
  pad.l = String(yMax).length * 7 + 28;
  const plotW = W - pad.l - pad.r;
  const x = (sec) => pad.l + (sec / end) * plotW;
  const y = (v) => pad.t + plotH - (v / yMax) * plotH;
  const tStep = timeStep(end, narrow ? 4 : 8);
  const text = (attrs, t) => svg("text", { "font-size": 12, fill: "#4d5560", ...attrs }, t);
  const grid = [];
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    grid.push(svg("line", { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), stroke: v ? "#e3e7ec" : "#8a929c" }),
      text({ x: pad.l - 5, y: y(v) + 4, "text-anchor": "end" }, String(v)));
  }
  for (let t = 0; t <= end + 1e-9; t += tStep) {
    grid.push(svg("line", { x1: x(t), x2: x(t), y1: pad.t + plotH, y2: pad.t + plotH + 4, stroke: "#8a929c" }),
      text({ x: x(t), y: pad.t + plotH + 17, "text-anchor": t === 0 ? "start" : x(t) > W - pad.r - 24 ? "end" : "middle" }, clockLabel(t)));
  }
  const lines = series.map((v, i) => svg("polyline", {
    class: "strategy", "data-strategy": doc.strategies[i].strategy, fill: "none",
    stroke: COLORS[i % COLORS.length], "stroke-width": 2, "stroke-dasharray": DASHES[i % DASHES.length] || null,
    "stroke-linejoin": "round",
    points: v.map((n, k) => `${x(k * bucket + bucket / 2).toFixed(1)},${y(n).toFixed(1)}`).join(" "),
  }, svg("title", null, `${labels[i]}: peak ${doc.strategies[i].peak_per_second}/s after the recovery`)));
  const per = bucket === 1 ? "requests per second" : `requests per second (highest in each ${clockLabel(bucket)})`;
  const desc = doc.strategies.map((s, i) => `${labels[i]}: peak ${s.peak_per_second}/s after the recovery`).join("; ");
  return svg("svg", { class: "herd-chart", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
    "aria-label": `Requests per second at the endpoint over time. Capacity ${capacity}/s. ${desc}.` },
  svg("text", { class: "title", x: pad.l, y: 16, "font-size": 14, "font-weight": 600, fill: "#1b1f24" },
    "Requests per second at the endpoint"),
  grid,
  svg("line", { class: "recovery", x1: x(recover), x2: x(recover), y1: pad.t, y2: pad.t + plotH, stroke: "#4d5560", "stroke-dasharray": "2 3" }),
  // Right of its line, or left of it when the recovery is near the right edge (a policy that
  // gives up before it: the run ends a second after the recovery), so it is never cut off.
  x(recover) + 4 + 60 > W - pad.r
    ? text({ x: x(recover) - 4, y: pad.t + 12, "text-anchor": "end" }, "recovery")
    : text({ x: x(recover) + 4, y: pad.t + 12 }, "recovery"),
  svg("line", { class: "capacity", x1: pad.l, x2: W - pad.r, y1: y(capacity), y2: y(capacity), stroke: "#a11d1d", "stroke-dasharray": "6 4" }),
  text({ x: W - pad.r - 2, y: y(capacity) - 5, "text-anchor": "end", fill: "#a11d1d" }, `capacity ${capacity}/s`),
  lines,
  text({ x: pad.l + plotW / 2, y: H - 4, "text-anchor": "middle" }, "time since the outage began"),
  text({ x: 12, y: pad.t + plotH / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${pad.t + plotH / 2})` }, narrow ? "requests/s" : per));
}

function legend(doc, labels) {
  return h("ul", { class: "herd-legend", "aria-label": "Legend" }, doc.strategies.map((s, i) => h("li", null,
    svg("svg", { width: 30, height: 10, "aria-hidden": "true" },
      svg("line", { x1: 0, x2: 30, y1: 5, y2: 5, stroke: COLORS[i % COLORS.length], "stroke-width": 3, "stroke-dasharray": DASHES[i % DASHES.length] || null })),
    h("span", null, labels[i]))));
}

// "12.5 min", or what happened when nothing was left to drain: every event gave up.
function drainCell(s, events) {
  if (s.exhausted >= events) {
    return s.drain_seconds > 0 ? `never: all gave up (the last ${drain(s.drain_seconds)} after the recovery)`
      : "never: all gave up before the recovery";
  }
  return drain(s.drain_seconds);
}

// The figures count from the recovery on, as `hookrelay simulate herd` prints them; the chart
// also shows the first failures before it, so the table says so (a "Peak/s 0" beside a chart
// peaking at 45/s read as a contradiction).
function figures(doc, labels) {
  const events = doc.scenario.events;
  const firstPeak = Math.max(0, ...doc.strategies.map((s) => s.peak_failures_per_second ?? 0));
  return [
    table(["Strategy", { text: "Peak/s after the recovery", class: "num" }, { text: "p99/s after the recovery", class: "num" },
      { text: "Requests", class: "num" }, { text: "Failed", class: "num" }, { text: "Gave up", class: "num" },
      { text: "Drained after the recovery", class: "num" }],
    doc.strategies.map((s, i) => h("tr", null, h("td", null, labels[i]), h("td", { class: "num" }, String(s.peak_per_second)),
      h("td", { class: "num" }, String(s.p99_per_second)), h("td", { class: "num" }, String(s.requests)),
      h("td", { class: "num" }, String(s.failed_requests)), h("td", { class: "num" }, String(s.exhausted)),
      h("td", { class: "num" }, drainCell(s, events)))), { label: "Simulation figures", stack: true }),
    h("p", { class: "muted herd-note" },
      "Peak and p99 per second are counted from the recovery on (p99 over the seconds with any request), as hookrelay simulate herd counts them; ",
      `before it, the first failures reached ${firstPeak}/s (the chart's left part). `,
      "Requests and failed count every attempt. Drained: from the recovery to the last event's outcome, delivered or given up."),
  ];
}

// `policy` is the destination's policy as GET /destinations/{name} shows it.
export function herdSection(name, policy) {
  const jittered = policy && policy.jitter && policy.jitter !== "none";
  // Compared with the same policy without jitter, or, for one without, with equal jitter.
  const other = { ...policy, jitter: jittered ? "none" : "equal" };
  const labels = [`${name}'s policy (jitter ${policy?.jitter || "?"})`, jittered ? "the same without jitter" : "the same with equal jitter"];
  const status = h("div", { "aria-live": "polite" });
  const out = h("div", { class: "herd-out" });
  const form = h("form", { class: "filters", novalidate: true, "aria-label": "Herd scenario" },
    FIELDS.map(([key, label, hint, attrs]) => input(fieldId(key), label, { ...attrs, value: DEFAULTS[key], autocomplete: "off" }, hint)),
    h("div", { class: "field wide" }, h("button", { type: "submit", class: "primary", id: "h-run" }, "Run simulation")));
  let last = null;
  const draw = () => {
    if (!last) return;
    // The figure's padding and border: 2 × 13 px.
    const width = Math.max(260, Math.min(960, (out.clientWidth || 666) - 26));
    replace(out, h("figure", { class: "chart panel herd" }, chart(last, labels, width), legend(last, labels)), figures(last, labels));
  };
  async function run() {
    const params = new URLSearchParams({ destination: name });
    params.append("policy_json", JSON.stringify(other));
    for (const [key] of FIELDS) {
      const el = form.querySelector(`#${fieldId(key)}`);
      el.removeAttribute("aria-invalid");
      params.set(key, el.value.trim());
    }
    const button = form.querySelector("#h-run");
    button.disabled = true;
    replace(status, message("info", "Simulating…"));
    try {
      last = await get(`/simulate?${params}`);
      clear(status);
      draw();
    } catch (e) {
      replace(status, message("error", e.message));
      const el = e.field && FIELDS.some(([key]) => key === e.field) && form.querySelector(`#${fieldId(e.field)}`);
      if (el) { el.setAttribute("aria-invalid", "true"); el.focus(); }
    } finally {
      button.disabled = false;
    }
  }
  form.addEventListener("submit", (ev) => { ev.preventDefault(); run(); });
  let timer = 0;
  const onResize = () => {
    if (!section.isConnected) { window.removeEventListener("resize", onResize); return; }
    clearTimeout(timer);
    timer = setTimeout(draw, 150);
  };
  window.addEventListener("resize", onResize);
  const section = h("section", { id: "herd" }, h("h2", null, "Thundering herd"),
    h("p", { class: "muted" }, "What this policy sends to the endpoint when it comes back from an outage: events fail at random within the fail window, the endpoint refuses connections until it recovers and then serves the capacity per second (the rest get 503 and are retried). Simulated with the retry code that delivers, as hookrelay simulate herd does; nothing is sent."),
    form, status, out);
  run();  // drawn when the answer comes, by then in the page (the chart takes its width)
  return section;
}
