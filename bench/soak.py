#!/usr/bin/env python3
"""`make soak`: hookrelay under steady mixed load for SOAK_SECONDS (default 600), watched for leaks.

The release binary ingests SOAK_RATE events/s (default 200) from 4 keep-alive clients and delivers
them to a flaky local sink (seeded: 5 % answer 503, 5 % answer after 300 ms, the rest 200 at
once). Every 10 s it samples the server's RSS (/proc/PID/status), its open descriptors
(/proc/PID/fd), the p99 of the ingest latency seen by the clients in that window, and the backlog
(events ingested but not yet final, from /metrics; and the due backlog gauge). At the end the load
stops, every acknowledged event must reach the sink, and SIGTERM must end the server with exit 0.

Pass ("flat"), each a number:
  RSS at the end        <= 1.25 x RSS at the reference sample (minute 2; 1/5 of a shorter run)
  open fds at the end   <= fds at the reference sample + 16 + 64 (the connection pool's bound:
                           one kept-alive connection per concurrent request, max_concurrency 64)
  ingest p99            < 250 ms in every 10 s window
  backlog               <= 10 s of ingest (SOAK_RATE x 10) at every sample
  delivered             every acknowledged event reaches the sink within 180 s after the load
  SIGTERM               exit code 0 within 30 s

Writes bench/results/soak-<UTC>.json and soak-<UTC>.svg; exits 1 if any condition fails.
Python 3 standard library only. Usage: bench/soak.py [path/to/hookrelay]
"""

import datetime
import http.client
import http.server
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
RATE = int(os.environ.get("SOAK_RATE", "200"))
SAMPLE_EVERY = 10
CLIENTS = 4
MAX_CONCURRENCY = 64  # the destination's; the sender keeps up to this many connections open
TOKEN = "soak-admin-token-0123456789"

LIMITS = {
    "rss_growth_max": 1.25,
    # Descriptors may grow by the connection pool (one kept-alive connection per concurrent
    # request, up to the destination's max_concurrency) plus 16; a leak grows without bound.
    "fd_growth_max": 16 + MAX_CONCURRENCY,
    "p99_ms_max": 250.0,
    "backlog_max": RATE * 10,
    "drain_seconds_max": 180,
    "sigterm_seconds_max": 30,
}


class FlakySink:
    """A local HTTP/1.1 receiver that fails some deliveries and answers some slowly."""

    def __init__(self, seed=14):
        self.lock = threading.Lock()
        self.seen = set()
        self.requests = 0
        self.rng = random.Random(seed)
        sink = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(n)
                with sink.lock:
                    sink.requests += 1
                    roll = sink.rng.random()
                status, delay = 200, 0.0
                if roll < 0.05:
                    status = 503
                elif roll < 0.10:
                    delay = 0.3
                if delay:
                    time.sleep(delay)
                if status == 200:
                    with sink.lock:
                        sink.seen.add(self.headers.get("webhook-id", ""))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def delivered(self, ids):
        with self.lock:
            return sum(1 for i in ids if i in self.seen)

    def stop(self):
        self.server.shutdown()


class Ingest:
    """CLIENTS keep-alive clients sending RATE events/s in all, paced against the clock."""

    def __init__(self, port):
        self.port = port
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies = []  # (end time, seconds) since the last take()
        self.acked = []
        self.errors = 0
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(CLIENTS)]
        for t in self.threads:
            t.start()

    def run(self, k):
        conn = None
        per_client = RATE / CLIENTS
        start = time.monotonic()
        i = 0
        while not self.stop.is_set():
            due = start + i / per_client
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            i += 1
            body = json.dumps({"client": k, "i": i, "pad": "x" * 200})
            t0 = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("POST", "/in/soak", body=body,
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
                dt = time.monotonic() - t0
                with self.lock:
                    self.latencies.append(dt)
                    if r.status == 202:
                        self.acked.append(json.loads(data)["id"])
                    else:
                        self.errors += 1
            except (OSError, http.client.HTTPException):
                with self.lock:
                    self.errors += 1
                conn = None

    def take(self):
        with self.lock:
            out, self.latencies = self.latencies, []
            return out

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()


def p99(values):
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


def metrics(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics", headers={"Authorization": "Bearer " + TOKEN})
    text = conn.getresponse().read().decode()
    conn.close()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(hookrelay_[a-z_]+) ([0-9.e+-]+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid):
    """Open descriptors, and how many of them are sockets."""
    names = os.listdir(f"/proc/{pid}/fd")
    sockets = 0
    for n in names:
        try:
            sockets += os.readlink(f"/proc/{pid}/fd/{n}").startswith("socket:")
        except OSError:
            pass
    return len(names), sockets


def svg(samples, limits, ref_index, path):
    """Four stacked panels (RSS, fds, p99, backlog) against time, with each pass limit dashed."""
    width, panel_h, left, right, top = 760, 150, 70, 20, 40
    panels = [
        ("RSS (MiB)", [s["rss_kib"] / 1024 for s in samples],
         samples[ref_index]["rss_kib"] / 1024 * limits["rss_growth_max"]),
        ("open fds", [s["fds"] for s in samples], samples[ref_index]["fds"] + limits["fd_growth_max"]),
        ("ingest p99 (ms)", [s["p99_ms"] for s in samples], limits["p99_ms_max"]),
        ("backlog (events not final)", [s["pending"] for s in samples], limits["backlog_max"]),
    ]
    t_end = max(samples[-1]["t"], 1)
    h = top + len(panels) * (panel_h + 40) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15">hookrelay soak: {SECONDS} s at {RATE} events/s '
           f'(dashed: pass limit; grey line: reference sample)</text>']
    for i, (title, ys, limit) in enumerate(panels):
        y0 = top + i * (panel_h + 40) + 20
        y_max = max(max(ys) if ys else 1, limit) * 1.1 or 1
        plot_w = width - left - right

        def X(t):
            return left + plot_w * t / t_end

        def Y(v):
            return y0 + panel_h - panel_h * v / y_max

        out.append(f'<text x="{left}" y="{y0 - 6}" font-weight="bold">{title}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel_h}" fill="none" '
                   f'stroke="#999"/>')
        for frac in (0, 0.5, 1):
            v = y_max * frac
            out.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
        for t in range(0, int(t_end) + 1, max(60, int(t_end) // 10 // 60 * 60 or 60)):
            out.append(f'<text x="{X(t):.1f}" y="{y0 + panel_h + 14}" text-anchor="middle">'
                       f'{t // 60}m</text>')
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{Y(limit):.1f}" y2="{Y(limit):.1f}" '
                   f'stroke="#c00" stroke-dasharray="5,4"/>')
        tr = samples[ref_index]["t"]
        out.append(f'<line x1="{X(tr):.1f}" x2="{X(tr):.1f}" y1="{y0}" y2="{y0 + panel_h}" '
                   f'stroke="#bbb"/>')
        pts = " ".join(f"{X(s['t']):.1f},{Y(v):.1f}" for s, v in zip(samples, ys))
        out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "release",
                                                                 "hookrelay")
    load_at_start = os.getloadavg()[0]
    sink = FlakySink()
    work = tempfile.mkdtemp(prefix="hookrelay-soak-")
    config = os.path.join(work, "hookrelay.toml")
    with open(config, "w") as f:
        f.write(f"""[[sources]]
name = "soak"

[[destinations]]
name = "flaky"
url = "http://127.0.0.1:{sink.port}/hooks"
allow_private = true
max_concurrency = {MAX_CONCURRENCY}
breaker = {{ threshold = 1000 }}
policy = {{ strategy = "exponential", jitter = "full", base = "200ms", cap = "5s", max_attempts = 20, max_duration = "1h", timeout = "5s" }}

[[routes]]
source = "soak"
destination = "flaky"
""")
    log = open(os.path.join(work, "server.log"), "w")
    env = dict(os.environ, HOOKRELAY_ADMIN_TOKEN=TOKEN)
    proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--data",
                             os.path.join(work, "data"), "--config", config],
                            stdout=subprocess.PIPE, stderr=log, env=env, text=True)
    port = None
    deadline = time.monotonic() + 30
    while port is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
    if port is None:
        print("soak: the server did not start; see", log.name)
        proc.kill()
        return 1
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()

    print(f"soak: {SECONDS} s at {RATE} events/s, pid {proc.pid}, sink 127.0.0.1:{sink.port}")
    ingest = Ingest(port)
    samples = []
    start = time.monotonic()
    next_sample = start + SAMPLE_EVERY
    while next_sample <= start + SECONDS + 0.001:
        time.sleep(max(0, next_sample - time.monotonic()))
        m = metrics(port)
        open_fds, sockets = fds(proc.pid)
        final = m.get("hookrelay_deliveries_delivered_total", 0) + m.get(
            "hookrelay_deliveries_failed_total", 0)
        s = {
            "t": round(next_sample - start),
            "rss_kib": rss_kib(proc.pid),
            "fds": open_fds,
            "sockets": sockets,
            "p99_ms": round(p99(ingest.take()) * 1000, 2),
            "pending": int(m.get("hookrelay_events_ingested_total", 0) - final),
            "due_backlog": int(m.get("hookrelay_due_backlog", 0)),
            "attempts_in_flight": int(m.get("hookrelay_attempts_in_flight", 0)),
            "ingested": int(m.get("hookrelay_events_ingested_total", 0)),
            "delivered": int(m.get("hookrelay_deliveries_delivered_total", 0)),
        }
        samples.append(s)
        print(f"  t={s['t']:4d}s rss={s['rss_kib'] / 1024:7.1f} MiB fds={s['fds']:4d} "
              f"(sockets {s['sockets']:3d}) p99={s['p99_ms']:7.2f} ms pending={s['pending']:6d} due={s['due_backlog']:6d}",
              flush=True)
        next_sample += SAMPLE_EVERY
    ingest.finish()
    acked = list(ingest.acked)

    drain_start = time.monotonic()
    while (sink.delivered(acked) < len(acked) and
           time.monotonic() - drain_start < LIMITS["drain_seconds_max"]):
        time.sleep(0.5)
    drain_seconds = time.monotonic() - drain_start
    delivered = sink.delivered(acked)

    term_start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=LIMITS["sigterm_seconds_max"])
    except subprocess.TimeoutExpired:
        proc.kill()
        code = None
    term_seconds = time.monotonic() - term_start
    sink.stop()

    ref_index = min(len(samples) - 1, max(0, (120 if SECONDS >= 600 else SECONDS // 5)
                                          // SAMPLE_EVERY - 1))
    ref, end = samples[ref_index], samples[-1]
    checks = {
        "rss": end["rss_kib"] <= LIMITS["rss_growth_max"] * ref["rss_kib"],
        "fds": end["fds"] <= ref["fds"] + LIMITS["fd_growth_max"],
        "p99": all(s["p99_ms"] < LIMITS["p99_ms_max"] for s in samples),
        "backlog": all(s["pending"] <= LIMITS["backlog_max"] and
                       s["due_backlog"] <= LIMITS["backlog_max"] for s in samples),
        "all_delivered": delivered == len(acked),
        "sigterm": code == 0,
    }
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")
    results = os.path.join(HERE, "results")
    os.makedirs(results, exist_ok=True)
    report = {
        "suite": "soak",
        "utc": stamp,
        "binary": os.path.relpath(os.path.abspath(binary), os.path.join(HERE, "..")),
        "load_average_at_start": load_at_start,
        "nproc": os.cpu_count(),
        "seconds": SECONDS,
        "rate_per_second": RATE,
        "sink": "5% 503, 5% answered after 300 ms, seeded",
        "limits": LIMITS,
        "reference_sample_t": ref["t"],
        "samples": samples,
        "acknowledged": len(acked),
        "ingest_errors": ingest.errors,
        "sink_requests": sink.requests,
        "delivered_of_acknowledged": delivered,
        "drain_seconds": round(drain_seconds, 2),
        "sigterm_exit_code": code,
        "sigterm_seconds": round(term_seconds, 2),
        "rss_growth": round(end["rss_kib"] / max(1, ref["rss_kib"]), 3),
        "fd_growth": end["fds"] - ref["fds"],
        "p99_ms_max_window": max(s["p99_ms"] for s in samples),
        "backlog_max_sample": max(s["pending"] for s in samples),
        "checks": checks,
        "pass": all(checks.values()),
    }
    json_path = os.path.join(results, f"soak-{stamp}.json")
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
    svg(samples, LIMITS, ref_index, os.path.join(results, f"soak-{stamp}.svg"))
    print(f"soak: {len(acked)} acknowledged, {delivered} delivered ({drain_seconds:.1f} s to drain), "
          f"{sink.requests} requests at the sink, SIGTERM exit {code} in {term_seconds:.1f} s")
    print(f"soak: RSS x{report['rss_growth']} (limit {LIMITS['rss_growth_max']}), fds "
          f"{report['fd_growth']:+d} (limit +{LIMITS['fd_growth_max']}), worst p99 "
          f"{report['p99_ms_max_window']} ms (limit {LIMITS['p99_ms_max']}), worst backlog "
          f"{report['backlog_max_sample']} (limit {LIMITS['backlog_max']})")
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    print("soak:", json_path)
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
