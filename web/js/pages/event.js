// Event detail: its type and what each route of its source did with it at ingest (took it, or
// skipped it and why); headers and payload; each delivery with "attempt 3 of 5 — next retry
// 14:05:31 (in 3 min)" or why it failed, the timeline of its attempts (with what a transform made
// each one send), and replay to all or one; a delivery that runs a transform now can preview the
// request it would make (POST /api/v1/transforms/test). An event no route took can be sent to any
// destination chosen from a list. Replaying needs the operator role and the preview the admin
// role (access.js): a role without them sees neither.
import { h, message, badge, table, svg, replace, updateNode } from "../dom.js";
import { get, post, enc } from "../api.js";
import { time, bytes, clock, relative, utc, withTimes, pauseCause } from "../format.js";
import { refreshEvery, typeText } from "./common.js";
import { prettyJson, looksLikeJson } from "../pretty.js";
import { can } from "../access.js";

const SHOW_LIMIT = 64 * 1024;  // larger bodies are cut in the view; the download has all of it
const PRETTY_DEPTH = 20;  // JSON nested deeper stays on the line of its level-20 parent

function decodeBody(b64) {
  const bin = atob(b64 || "");
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}

function hexView(bytesArr, limit) {
  const lines = [];
  const n = Math.min(bytesArr.length, limit);
  for (let off = 0; off < n; off += 16) {
    const chunk = bytesArr.slice(off, Math.min(off + 16, n));
    const hex = [...chunk].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = [...chunk].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${off.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}

function contentTypeOf(headers) {
  return (headers.find(([k]) => k.toLowerCase() === "content-type") || [])[1] || "";
}

// A body as the page shows it: UTF-8 text (JSON pretty-printed, to PRETTY_DEPTH levels) or hex,
// cut at SHOW_LIMIT (4 KiB of hex) with a notice. `label` names the <pre>; `whole` says what its
// full size is ("as received"), `more` ends a notice (where to get all of it). Returns the view and
// the kind shown ("JSON", "text", "binary", "empty").
function bodyView(body, { id, label, whole, more = "" }) {
  // Cut first, then format: only the first SHOW_LIMIT bytes are decoded and pretty-printed (a
  // 5 MB body used to be parsed and pretty-printed whole, freezing the tab for seconds).
  const cutBody = body.length > SHOW_LIMIT;
  let text = null;
  try {
    // stream: a UTF-8 sequence cut at the limit is left out, not an error.
    text = new TextDecoder("utf-8", { fatal: true }).decode(body.subarray(0, SHOW_LIMIT), { stream: cutBody });
  } catch { text = null; }
  if (body.length === 0) return { view: h("p", { class: "muted" }, "Empty body."), kind: "empty" };
  if (text === null) {
    const cut = body.length > 4096;
    return { kind: "binary", view: h("div", null,
      h("pre", { tabindex: "0", "aria-label": `${label} (hex)`, id }, hexView(body, 4096)),
      cut ? message("info", `Binary: showing the first 4 KiB of ${bytes(body.length)} as hex${more}.`) : null) };
  }
  let shownText = text;
  let cut = cutBody;
  let kind = "text";
  // A whole body is JSON when it parses; a cut one when it starts like JSON.
  let json = false;
  if (cutBody) json = looksLikeJson(text);
  else { try { JSON.parse(text); json = true; } catch { /* not JSON */ } }
  if (json) {
    const p = prettyJson(text, { maxDepth: PRETTY_DEPTH, maxOut: SHOW_LIMIT });
    shownText = p.text;
    cut = cut || p.cut;
    kind = "JSON";
  }
  return { kind, view: h("div", null,
    h("pre", { tabindex: "0", "aria-label": label, id }, shownText),
    cut ? message("info", cutBody
      ? `Showing the first ${bytes(SHOW_LIMIT)} of ${bytes(body.length)}${more}.`
      : `Showing the first ${bytes(SHOW_LIMIT)} of it pretty-printed (${bytes(body.length)} ${whole})${more}.`) : null) };
}

function payloadView(ev) {
  const body = decodeBody(ev.body_base64);
  const type = contentTypeOf(ev.headers);
  const blob = new Blob([body], { type: "application/octet-stream" });
  const url = URL.createObjectURL(blob);
  const download = h("a", { href: url, download: `${ev.id}.body`, class: "button" }, `Download (${bytes(body.length)})`);
  const { view, kind } = bodyView(body, { id: "payload", label: "Payload", whole: "as received", more: "; download for all of it" });
  return { el: h("section", null, h("h2", null, "Payload ", h("span", { class: "muted" }, `(${kind}${type ? `, ${type}` : ""})`)),
    view, h("p", null, download)), url };
}

function headersTable(headers, label) {
  return table(["Name", "Value"], headers.map(([k, v]) => h("tr", null, h("td", { class: "mono header-name" }, k), h("td", { class: "mono" }, v))), { label });
}

// "attempt 3 of 5 — next retry 14:05:31 (in 3 min)" or the reason.
function promise(d) {
  const of = `attempt ${d.attempt} of ${d.max_attempts}`;
  // Ordered delivery: it waits for the head of its queue ("held behind 01J… (attempt 2, next retry 14:05)").
  if (d.held_behind) {
    const head = d.held_behind;
    const key = d.order_key ? ` (key ${d.order_key})` : "";
    const state = head.status === "scheduled" && head.next_attempt_at
      ? `attempt ${head.attempt}, next ${head.attempt === 0 ? "attempt" : "retry"} ${clock(new Date(head.next_attempt_at))}`
      : `${head.status}, attempt ${head.attempt}`;
    return h("span", { class: "promise" }, `${of} — ordered${key}: held behind `,
      h("a", { href: `#/events/${enc(head.event)}`, class: "mono" }, head.event), ` (${state})`);
  }
  if (d.status === "scheduled" && d.next_attempt_at) {
    const at = new Date(d.next_attempt_at);
    const label = d.attempt === 0 ? "first attempt" : "next retry";
    return h("span", { class: "promise" }, `${of} — ${label} `,
      h("time", { datetime: d.next_attempt_at, title: utc(at), "data-rel": "with" }, `${clock(at)} (${relative(at)})`));
  }
  // The attempt being sent is the next one: "attempt 1 of 5 — sending now", not "attempt 0".
  if (d.status === "delivering") return h("span", { class: "promise" }, `attempt ${d.attempt + 1} of ${d.max_attempts} — sending now`);
  if (d.status === "delivered") return h("span", { class: "promise" }, `delivered at attempt ${d.attempt} of ${d.max_attempts}`);
  if (d.status === "failed") return h("span", { class: "promise" }, `failed after ${of}: `, withTimes(d.reason) || "no reason recorded");
  if (d.status === "paused") {
    const done = d.attempt === 0 ? `no attempt yet (of ${d.max_attempts})` : of;
    // What holds it (paused_by): "paused (breaker open until 14:05:31)", "paused (by operator)".
    const cause = pauseCause(d);
    return h("span", { class: "promise" }, `${done} — paused${cause ? ` (${cause})` : ""}: `,
      withTimes(d.reason) || "destination paused");
  }
  return h("span", { class: "promise" }, of);
}

function plural(n, what) { return `${n} ${what}${n === 1 ? "" : "s"}`; }

function resultOf(a) {
  if (a.status_code != null && a.error) return `${a.status_code}, then ${a.error}`;
  if (a.status_code != null) return String(a.status_code);
  return a.error || "—";
}

// The breaker's half-open probe: a failed one did not spend one of the event's attempts.
function probeNote(a) {
  if (!a.probe) return null;
  return h("span", { class: "muted probe" }, a.counted === false ? " breaker probe, not counted" : " breaker probe");
}

function attemptClass(a) {
  if (a.status_code != null && a.status_code >= 200 && a.status_code < 300 && !a.error) return "ok";
  return "bad";
}

// A small SVG timeline: one dot per attempt (green delivered, red not) on a time axis, and the
// next retry as a hollow dot.
function timelineSvg(d) {
  const times = d.attempts.map((a) => new Date(a.started_at).getTime());
  if (d.next_attempt_at) times.push(new Date(d.next_attempt_at).getTime());
  if (times.length === 0) return null;
  const min = Math.min(...times);
  const max = Math.max(...times);
  const span = Math.max(max - min, 1);
  const W = 600;
  const x = (t) => 12 + ((t - min) / span) * (W - 24);
  const dots = d.attempts.map((a) => svg("circle", {
    cx: x(new Date(a.started_at).getTime()), cy: 14, r: 6,
    fill: attemptClass(a) === "ok" ? "#17623a" : "#a11d1d",
  }, svg("title", null, `attempt ${a.n}${a.probe ? (a.counted === false ? " (breaker probe, not counted)" : " (breaker probe)") : ""}: ${resultOf(a)} at ${utc(new Date(a.started_at))}`)));
  if (d.next_attempt_at) {
    dots.push(svg("circle", { cx: x(new Date(d.next_attempt_at).getTime()), cy: 14, r: 6, fill: "#fff", stroke: "#7a4a00", "stroke-width": 2 },
      svg("title", null, `next attempt at ${utc(new Date(d.next_attempt_at))}`)));
  }
  return svg("svg", { class: "timeline", viewBox: `0 0 ${W} 28`, width: "100%", height: 28, role: "img",
    "aria-label": `Timeline of ${d.attempts.length} attempt${d.attempts.length === 1 ? "" : "s"}` },
  svg("line", { x1: 12, y1: 14, x2: W - 12, y2: 14, stroke: "#8a929c", "stroke-width": 1 }), dots);
}

// What a transform made the attempt send (the API's `transformed`): the body's size, its SHA-256
// (the first 12 hex digits; all of it on hover) and the headers it changed. One block, so a
// stacked cell on a phone keeps it beside its label.
function sentView(t) {
  if (!t) return h("span", { class: "muted", title: "No transform ran for this attempt" }, "—");
  const changed = t.headers_changed || [];
  return h("div", { class: "sent" },
    h("div", null, h("span", { class: "nowrap" }, bytes(t.body_size)), " · SHA-256 ",
      h("abbr", { class: "mono sha", title: t.body_sha256 }, t.body_sha256.slice(0, 12))),
    h("div", null, changed.length
      ? ["changed ", h("span", { class: "chips" }, changed.map((n) => h("span", { class: "chip mono" }, n)))]
      : h("span", { class: "muted" }, "no header changed")));
}

function attemptsTable(d) {
  if (d.attempts.length === 0) return h("p", { class: "muted" }, "No attempt yet.");
  // The Transform column only where a transform made one of the chain's requests.
  const transformed = d.attempts.some((a) => a.transformed);
  const headers = ["#", "Started", { text: "Duration", class: "num" }, "Result", "Retry-After"];
  if (transformed) headers.push("Transform");
  headers.push("Response");
  return table(headers,
    d.attempts.map((a) => h("tr", null,
      h("td", null, String(a.n)),
      h("td", null, time(a.started_at)),
      h("td", { class: "num" }, `${a.duration_ms} ms`),
      h("td", null, h("div", null, h("span", { class: `badge s-${attemptClass(a)}` }, resultOf(a)), probeNote(a))),
      h("td", null, a.retry_after ?? "—"),
      transformed ? h("td", { class: "transformed" }, sentView(a.transformed)) : null,
      h("td", null, a.response_snippet == null ? h("span", { class: "muted" }, "—")
        : h("details", null, h("summary", null, a.response_snippet_encoding === "base64" ? "binary (base64)" : "snippet"),
          h("pre", null, a.response_snippet))))),
  { label: `Attempts to ${d.destination}, chain ${d.chain}`, stack: true });
}

// What each route of the source did with the event when it arrived. A route deleted since is
// named by its destination only (route null).
function routesSection(ev, destNames, send, choice) {
  const rows = (ev.routes || []).map((r) => h("tr", { dataset: { destination: r.destination } },
    h("td", null, r.route == null ? h("span", { class: "muted" }, "(no longer defined)")
      : h("a", { class: "mono", href: `#/routes/${enc(r.route)}` }, r.route)),
    h("td", null, h("a", { href: `#/destinations/${enc(r.destination)}` }, r.destination)),
    h("td", null, r.matched ? h("span", { class: "badge s-ok" }, "took it") : h("span", { class: "badge s-skipped" }, "skipped")),
    h("td", { class: "reason" }, r.matched ? h("span", { class: "muted" }, "—") : (r.reason || h("span", { class: "muted" }, "no reason recorded")))));
  const none = ev.routed === false ? "No route took this event: its source had no route when it arrived." : "No route is recorded for this event.";
  return h("section", { id: "routing" },
    h("h2", null, "Routes"),
    rows.length ? table(["Route", "Destination", "Verdict", "Reason"], rows, { label: "What each route did with this event", stack: true })
      : h("p", { class: "muted" }, none),
    ev.routed === false && can("replay") ? sendPanel(destNames, send, choice) : null);
}

// An unrouted event sent by hand to a destination (once the routes are fixed, or to try one).
// `choice` keeps the destination chosen across the page's refreshes.
function sendPanel(destNames, send, choice) {
  if (!destNames.length) return h("p", { class: "muted" }, "No destination is configured to send it to.");
  const sel = h("select", { id: "send-destination", name: "send-destination", onchange: (ev) => { choice.value = ev.target.value; } },
    destNames.map((n) => h("option", { value: n, selected: n === choice.value }, n)));
  const go = h("button", { type: "submit", class: "primary", id: "send-button" }, "Replay to destination");
  const form = h("form", { class: "panel send", id: "send", "aria-label": "Replay this unrouted event to a destination" },
    h("p", { class: "send-note" }, h("span", { class: "badge s-unrouted" }, "unrouted"),
      " No route took this event. Replay it to a destination of your choice (a new delivery chain, as for any replay):"),
    h("div", { class: "row" }, h("div", { class: "field" }, h("label", { for: "send-destination" }, "Destination"), sel), go));
  form.addEventListener("submit", (ev) => { ev.preventDefault(); send(sel.value); });
  return form;
}

// The catalog as this page needs it: the destinations' names, and which destinations an event of
// `source` goes to through a transform. null when it cannot be read (the page keeps what it had).
async function readCatalog() {
  try {
    const [d, r] = await Promise.all([get("/destinations"), get("/routes")]);
    return { destinations: d.items, routes: r.items };
  } catch {
    return null;
  }
}

// Whether a delivery from `source` to `destination` runs a transform now: the server's rule
// (Catalog::TransformFor), a route's transform replacing its destination's.
function hasTransform(catalog, source, destination) {
  const route = catalog.routes.find((r) => r.source === source && r.destination === destination && r.transform);
  if (route) return true;
  return Boolean(catalog.destinations.find((d) => d.name === destination)?.transform);
}

// The request the delivery's current transform makes of this event (POST /api/v1/transforms/test
// with no script; nothing is sent), or why there is none. `p` is {busy} while it runs, then {r} or
// {e}; `close` hides it.
function previewView(name, p, close) {
  const closeButton = h("button", { type: "button", class: "link", "aria-label": `Close the preview of the request to ${name}`, onclick: close }, "Close");
  const head = h("div", { class: "row preview-head" },
    h("h3", { tabindex: "-1", class: "preview-heading" }, "Transformed request (preview)"), h("span", { class: "spacer" }), closeButton);
  const section = (...children) => h("section", { class: "preview", dataset: { id: "preview" }, "aria-label": `Preview of the request to ${name}`,
    "aria-busy": p.busy ? "true" : null }, head, ...children);
  if (p.busy) return section(h("p", { class: "muted" }, "Running the transform on this event…"));
  if (p.e) {
    const e = p.e;
    if (e.status === 422 && e.code === "transform_error") {
      return section(message("error", "The transform fails on this event: ", h("code", { class: "script-error" }, e.message),
        ". A delivery or replay of this event would fail now, for good and without an HTTP attempt."));
    }
    if (e.status === 400) return section(message("info", `No transform to preview: ${e.message}`));
    return section(message("error", `The preview failed: ${e.message}`));
  }
  const r = p.r;
  const cpu = `${r.cpu_ms.toFixed(2)} ms`;
  if (r.result === "skip" || !r.request) {
    return section(message("info", "The transform returns ", h("code", null, "null"), ": this delivery would be skipped."),
      h("p", { class: "muted" }, `It took ${cpu} of CPU and ${bytes(r.memory_bytes)} of memory. Nothing was sent.`));
  }
  const q = r.request;
  const sent = q.body_base64 != null ? decodeBody(q.body_base64) : new TextEncoder().encode(q.body || "");
  const type = contentTypeOf(q.headers);
  const { view, kind } = bodyView(sent, { label: `Body of the request to ${name}`, whole: "as it would be sent" });
  return section(
    h("p", { class: "request-line" }, h("code", null, `${q.method} ${q.path}${q.query ? `?${q.query}` : ""}`)),
    h("dl", { class: "kv" },
      h("dt", null, "Body"), h("dd", null, `${bytes(q.size)}, ${kind}${type ? ` (${type})` : ""}`),
      h("dt", null, "SHA-256"), h("dd", { class: "mono sha" }, q.sha256),
      h("dt", null, "CPU"), h("dd", null, cpu),
      h("dt", null, "Memory"), h("dd", null, bytes(r.memory_bytes))),
    h("h4", null, "Headers"),
    q.headers.length ? headersTable(q.headers, `Headers of the request to ${name}`) : h("p", { class: "muted" }, "No header."),
    h("h4", null, "Body"), view,
    h("p", { class: "muted" }, "Nothing was sent. A delivery adds hookrelay's webhook-id, webhook-timestamp and webhook-signature headers (signed over this body) and the destination's credential to this request."));
}

export async function render(main, ctx) {
  const id = ctx.params[0];
  let catalog = (await readCatalog()) || { destinations: [], routes: [] };
  const choice = { value: catalog.destinations[0]?.name };
  const status = h("div", { "aria-live": "polite" });
  const body = h("div");
  main.append(h("p", null, h("a", { href: "#/events" }, "← Events")), h("h1", null, "Event ", h("span", { class: "mono" }, id)), status, body);
  let urls = [];
  let payloadShown = false;
  let last = "";
  let ev = null;
  // The previews shown, by destination: kept across refreshes, redrawn with the page.
  const previews = new Map();

  async function load() {
    const [fresh, cat] = await Promise.all([get(`/events/${enc(id)}${payloadShown ? "?body=false" : ""}`), readCatalog()]);
    if (cat) catalog = cat;
    const withTransform = catalog.destinations.map((d) => d.name).filter((n) => hasTransform(catalog, fresh.source, n));
    const key = JSON.stringify([fresh.deliveries, fresh.routes, fresh.routed, fresh.type, catalog.destinations.map((d) => d.name), withTransform]);
    if (payloadShown && key === last) return fresh;  // nothing changed: keep the DOM (and the focus)
    last = key;
    ev = fresh;
    draw();
    return ev;
  }

  function draw() {
    const destNames = catalog.destinations.map((d) => d.name);
    const byDest = new Map();
    for (const d of ev.deliveries) {
      if (!byDest.has(d.destination)) byDest.set(d.destination, []);
      byDest.get(d.destination).push(d);
    }
    const dests = [...byDest.keys()];
    const replayAll = h("button", { type: "button", class: "primary", id: "replay-all" }, "Replay to all destinations");
    replayAll.addEventListener("click", () => replay(undefined));
    const deliveries = h("section", { id: "deliveries" },
      h("div", { class: "row" }, h("h2", null, "Deliveries"), h("span", { class: "spacer" }), dests.length && can("replay") ? replayAll : null),
      dests.length === 0 ? h("p", { class: "muted" }, "No route sent this event anywhere.") : null,
      dests.map((name) => {
        const chains = byDest.get(name).sort((a, b) => b.chain - a.chain);
        const cur = chains[0];
        const rb = can("replay") ? h("button", { type: "button", "data-destination": name }, `Replay to ${name}`) : null;
        rb?.addEventListener("click", () => replay(name));
        const pb = can("testTransform") && hasTransform(catalog, ev.source, name)
          ? h("button", { type: "button", dataset: { id: "preview-button" }, "aria-label": `Preview transformed request to ${name}`,
            onclick: () => preview(name) }, "Preview transformed request")
          : null;
        const p = previews.get(name);
        return h("div", { class: "panel delivery", dataset: { destination: name } },
          h("div", { class: "delivery-head" },
            h("h3", null, h("a", { href: `#/destinations/${enc(name)}` }, name)), badge(cur.status), promise(cur),
            h("span", { class: "spacer" }), pb, rb),
          cur.deadline && ["scheduled", "delivering", "paused"].includes(cur.status)
            ? h("p", { class: "muted" }, "Gives up at ", time(cur.deadline), " at the latest") : null,
          p ? previewView(name, p, () => closePreview(name)) : null,
          chains.map((d) => h("div", { class: "chain" },
            h("h3", null, d.chain === 0 ? "Original delivery" : `Replay ${d.chain}`, " ", chains.length > 1 ? badge(d.status) : null),
            chains.length > 1 && d !== cur ? h("p", null, promise(d)) : null,
            timelineSvg(d), attemptsTable(d))));
      }));
    const info = h("dl", { class: "kv" },
      h("dt", null, "Source"), h("dd", null, h("a", { href: `#/sources/${enc(ev.source)}` }, ev.source)),
      h("dt", null, "Type"), h("dd", { id: "event-type" }, typeText(ev.type)),
      h("dt", null, "Routed"), h("dd", null, ev.routed === false ? h("span", { class: "badge s-unrouted" }, "unrouted")
        : `yes, by ${plural((ev.routes || []).filter((r) => r.matched).length, "route")}`),
      h("dt", null, "Received"), h("dd", null, time(ev.received_at)),
      h("dt", null, "Size"), h("dd", null, bytes(ev.size)));
    const routing = routesSection(ev, destNames, replay, choice);
    const parts = [info, routing, deliveries];
    if (!payloadShown) {
      const headers = h("section", null, h("h2", null, "Headers"), headersTable(ev.headers, "Received headers"));
      const p = payloadView(ev);
      urls.push(p.url);
      replace(body, ...parts, headers, p.el);
      payloadShown = true;
    } else {
      updateNode(body.firstChild, info);
      updateNode(body.querySelector("#routing"), routing);
      updateNode(body.querySelector("#deliveries"), deliveries);
    }
  }

  const panelOf = (name) => [...body.querySelectorAll(".delivery")].find((x) => x.dataset.destination === name);
  // Runs the delivery's current transform on this event (no script: the server picks the route's
  // or the destination's, as a delivery would) and shows what it would send. A click while one
  // runs starts another; only the last one's answer is shown.
  let previewGen = 0;
  async function preview(name) {
    const my = ++previewGen;
    previews.set(name, { busy: true, gen: my });
    draw();
    let shown;
    try {
      shown = { r: await post("/transforms/test", { event: id, destination: name }) };
    } catch (e) {
      shown = { e };
    }
    if (previews.get(name)?.gen !== my || !ctx.alive()) return;  // closed, or asked again since
    previews.set(name, { ...shown, gen: my });
    draw();
    panelOf(name)?.querySelector(".preview-heading")?.focus();
  }
  function closePreview(name) {
    previews.delete(name);
    draw();
    panelOf(name)?.querySelector('[data-id="preview-button"]')?.focus();
  }

  async function replay(destination) {
    try {
      const r = await post(`/events/${enc(id)}/replay`, destination ? { destination } : {});
      replace(status, message("ok", `Replay started: ${r.replays.map((x) => `${x.destination} (replay ${x.chain})`).join(", ")}.`));
      await load();
    } catch (e) {
      replace(status, message("error", `Replay refused: ${e.message}`));
    }
  }

  try {
    await load();
  } catch (e) {
    if (e.status === 404 || e.status === 400) {
      replace(body, message("error", e.message), h("p", null, h("a", { href: "#/events" }, "Back to the events")));
      return null;
    }
    throw e;
  }
  const stop = refreshEvery(2000, ctx, load, status);
  return () => { stop(); for (const u of urls) URL.revokeObjectURL(u); urls = []; };
}
