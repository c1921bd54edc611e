// Overview: received / delivered / failed over the last hour and day (GET /api/v1/stats), the
// success rate, the due backlog and the age of its oldest delivery, destinations with an open
// breaker or paused, and the latest permanent failures.
import { h, message, badge, table, svg, replace, replaceInPlace } from "../dom.js";
import { get, enc } from "../api.js";
import { time, percent, relative, utc, clock, withTimes } from "../format.js";
import { firstEventHelp, names, refreshEvery } from "./common.js";
import { can } from "../access.js";

const SERIES = ["received", "delivered", "failed"];
const COLORS = { received: "#1f4e8c", delivered: "#17623a", failed: "#a11d1d" };

// Grouped bars per step: received, delivered, failed (hand-written SVG; no library).
function chart(stats, label) {
  const W = 640;
  const H = 160;
  const pad = { l: 36, r: 8, t: 8, b: 22 };
  const pts = stats.points;
  const max = Math.max(1, ...pts.flatMap((p) => SERIES.map((s) => p[s])));
  const slot = (W - pad.l - pad.r) / Math.max(pts.length, 1);
  const bw = Math.max(1, (slot * 0.8) / SERIES.length);
  const y = (v) => H - pad.b - (v / max) * (H - pad.t - pad.b);
  const bars = [];
  pts.forEach((p, i) => {
    SERIES.forEach((s, k) => {
      if (!p[s]) return;
      const x = pad.l + i * slot + slot * 0.1 + k * bw;
      bars.push(svg("rect", { x: x.toFixed(1), y: y(p[s]).toFixed(1), width: bw.toFixed(1),
        height: (H - pad.b - y(p[s])).toFixed(1), fill: COLORS[s] },
      svg("title", null, `${p[s]} ${s} from ${clock(new Date(p.at))}`)));
    });
  });
  const first = pts.length ? new Date(pts[0].at) : null;
  const total = (s) => pts.reduce((a, p) => a + p[s], 0);
  const desc = SERIES.map((s) => `${total(s)} ${s}`).join(", ");
  return h("figure", { class: "chart panel" },
    h("figcaption", null, h("strong", null, label), " ", h("span", { class: "muted" }, desc)),
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${label}: ${desc}` },
      svg("line", { x1: pad.l, y1: y(max), x2: W - pad.r, y2: y(max), stroke: "#d4d9e0" }),
      svg("line", { x1: pad.l, y1: H - pad.b, x2: W - pad.r, y2: H - pad.b, stroke: "#8a929c" }),
      svg("text", { x: pad.l - 4, y: y(max) + 4, "font-size": 11, fill: "#4d5560", "text-anchor": "end" }, String(max)),
      svg("text", { x: pad.l - 4, y: H - pad.b + 4, "font-size": 11, fill: "#4d5560", "text-anchor": "end" }, "0"),
      first ? svg("text", { x: pad.l, y: H - 6, "font-size": 11, fill: "#4d5560" }, relative(first)) : null,
      svg("text", { x: W - pad.r, y: H - 6, "font-size": 11, fill: "#4d5560", "text-anchor": "end" }, "now"),
      bars),
    h("div", { class: "legend" }, SERIES.map((s) => h("span", { class: `c-${s}` }, h("span", { class: "fg" }, s)))));
}

function card(k, v, extra, id) {
  return h("div", { class: "card", id }, h("div", { class: "k" }, k), h("div", { class: "v" }, v), extra ? h("div", { class: "muted" }, extra) : null);
}

export async function render(main, ctx) {
  main.append(h("h1", null, "Overview"));
  const body = h("div");
  const status = h("div", { "aria-live": "polite" });
  main.append(status, body);
  let firstShown = false;

  async function load() {
    const [hour, day, dests, failed] = await Promise.all([
      get("/stats?window=1h&step=1m"), get("/stats?window=24h&step=1h"), get("/destinations"),
      get("/events?status=failed&limit=5")]);
    // The reasons of the latest five failures (the list has statuses only).
    const reasons = new Map();
    await Promise.all(failed.items.slice(0, 5).map(async (e) => {
      try {
        const ev = await get(`/events/${enc(e.id)}?body=false`);
        for (const d of ev.deliveries) if (d.status === "failed" && d.reason) reasons.set(`${e.id} ${d.destination}`, d.reason);
      } catch { /* purged meanwhile: the row stays without a reason */ }
    }));
    const sum = (s, k) => s.points.reduce((a, p) => a + p[k], 0);
    const dh = sum(hour, "delivered");
    const fh = sum(hour, "failed");
    const dd = sum(day, "delivered");
    const fd = sum(day, "failed");
    const oldest = hour.due?.oldest_due_at;
    const troubled = dests.items.filter((d) => d.paused || (d.breaker && d.breaker.state !== "closed"));
    const parts = [
      h("div", { class: "cards" },
        card("Received (1 h)", String(sum(hour, "received")), `${sum(day, "received")} in 24 h`, "c-received"),
        card("Delivered (1 h)", String(dh), `${dd} in 24 h`),
        card("Failed (1 h)", String(fh), `${fd} in 24 h`),
        card("Success rate (1 h)", dh + fh ? percent(dh / (dh + fh)) : "—", dd + fd ? `${percent(dd / (dd + fd))} in 24 h` : "no final delivery in 24 h"),
        card("Due backlog", String(hour.due?.count ?? 0),
          oldest ? h("span", null, "oldest due ", h("time", { datetime: oldest, title: utc(new Date(oldest)), "data-rel": "only" }, relative(new Date(oldest))))
            // Counted, but none may go yet: ordered deliveries held behind their queue's head.
            : (hour.due?.count ? "held behind ordered queues' heads" : "nothing waiting"), "c-backlog")),
      h("div", { class: "charts" }, chart(hour, "Last hour (per minute)"), chart(day, "Last 24 hours (per hour)")),
      h("h2", null, "Destinations needing attention"),
      troubled.length === 0 ? h("p", { class: "muted" }, `All ${dests.items.length} destination${dests.items.length === 1 ? "" : "s"} running: no open breaker, none paused.`)
        : table(["Destination", "Breaker", "Paused"], troubled.map((d) => h("tr", null,
          h("td", null, h("a", { href: `#/destinations/${enc(d.name)}` }, d.name)),
          h("td", null, badge(d.breaker?.state || "closed"), d.breaker?.open_until ? h("span", null, " until ", time(d.breaker.open_until)) : null),
          h("td", null, d.paused ? ["yes: ", withTimes(d.paused_reason) || ""] : "no"))), { label: "Destinations needing attention" }),
      h("h2", null, "Latest permanent failures"),
      failed.items.length === 0 ? h("p", { class: "muted" }, "None.")
        : table(["Event", "Received", "Failed: why"], failed.items.map((e) => h("tr", null,
          h("td", null, h("a", { class: "mono", href: `#/events/${enc(e.id)}` }, e.id)), h("td", null, time(e.received_at)),
          h("td", null, e.deliveries.filter((d) => d.status === "failed").map((d) =>
            h("div", null, h("strong", null, d.destination), reasons.get(`${e.id} ${d.destination}`) ? [": ", withTimes(reasons.get(`${e.id} ${d.destination}`))] : ""))))),
        { label: "Latest permanent failures" }),
      failed.items.length ? h("p", null, h("a", { href: "#/events?status=failed" }, "All failed events"),
        can("replay") ? [" · ", h("a", { href: "#/replays/new?status=failed" }, "Replay all failed…")] : null) : null,
    ];
    if (sum(day, "received") === 0 && !firstShown) {
      const anyEvent = await get("/events?limit=1");
      if (anyEvent.items.length === 0) parts.unshift(firstEventHelp(await names("sources")));
    }
    replaceInPlace(body, ...parts);
  }
  await load();
  return refreshEvery(10000, ctx, load, status);
}
