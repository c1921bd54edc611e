#!/usr/bin/env python3
"""bench/report.py: the figures of one suite's repeated runs, as the raw JSON and a Markdown section.

    bench/report.py SUITE RUNS_JSONL RAW_JSON_OUT RAW_JSON_NAME

RUNS_JSONL has one flat JSON object per run (numbers, or null for a figure that run could not
measure), written by bench/run. Each run's ratios are computed from that run's own figures (the
ceiling and hookrelay measured back to back), then every figure is summarised over the runs as
median and min-max. Writes RAW_JSON_OUT ({"suite", "repeat", "runs", "summary"}) and prints the
suite's Markdown section (the per-run table, then the targets, judged on the median).
"""
import json
import statistics
import sys

# Per suite:
#   intro:   the first paragraph, formatted with the first run's figures;
#   ratios:  name -> (numerator, denominator), computed per run;
#   columns: the per-run table: (header, format with the run's figures);
#   targets: (what, figure, "<=" or ">=", threshold, unit shown after the figures).
SUITES = {
    "herd": {
        "intro": "`hookrelay simulate herd --events {events:,.0f}` (500 → 1,000,000 events failing "
                 "within 60 s, recovery at 4m, 50/s): the default preset alone "
                 "({default_requests:,.0f} simulated requests, each decided by policy::Decide), "
                 "then the whole comparison set of 8 strategies. One thread, pure CPU.",
        "ratios": {
            "default_events_per_s": ("events", "default_seconds"),
            "default_requests_per_s": ("default_requests", "default_seconds"),
        },
        "columns": [
            ("default preset", "{default_seconds:.2f} s"),
            ("events/s", "{default_events_per_s:,.0f}"),
            ("requests/s", "{default_requests_per_s:,.0f}"),
            ("8 strategies", "{all_seconds:.2f} s"),
        ],
        "targets": [
            ("1,000,000 events, default preset", "default_seconds", "<=", 10, " s"),
            ("1,000,000 events, all 8 strategies", "all_seconds", "<=", 60, " s"),
        ],
    },
    "ingest": {
        "intro": "wrk -t2 -c{connections} -d{seconds}s, keep-alive POST of a 1 KiB JSON body; "
                 "durability on (SQLite WAL, group commit, answered after the fsync of the "
                 "log); then hey at half of hookrelay's peak (32 workers), then the store "
                 "alone (bench/prestore, "
                 "{connections} appends in flight, no HTTP).",
        "ratios": {
            "ratio_to_nginx": ("hookrelay_events_per_s", "nginx_requests_per_s"),
            "store_alone_ratio_to_nginx": ("store_alone_events_per_s", "nginx_requests_per_s"),
        },
        "columns": [
            ("nginx (ceiling)", "{nginx_requests_per_s:,.0f} req/s"),
            ("hookrelay", "{hookrelay_events_per_s:,.0f} events/s"),
            ("p50 / p99", "{hookrelay_p50_ms:.2f} / {hookrelay_p99_ms:.2f} ms"),
            ("/ nginx", "**{ratio_to_nginx:.2f}**"),
            ("at half peak", "{half_achieved_per_s:,.0f}/s, p99 **{half_p99_ms:.2f} ms**"),
            ("store alone", "{store_alone_events_per_s:,.0f} events/s"),
            ("store / nginx", "**{store_alone_ratio_to_nginx:.2f}**"),
            ("peak RSS", "{hookrelay_peak_rss_kib:,.0f} KiB"),
            ("non-2xx", "{hookrelay_non_2xx:.0f}"),
        ],
        "targets": [
            ("hookrelay / nginx", "ratio_to_nginx", ">=", 0.50, ""),
            ("the store alone / nginx", "store_alone_ratio_to_nginx", ">=", 0.65, ""),
            ("p99 at half of hookrelay's peak", "half_p99_ms", "<=", 10, " ms"),
        ],
    },
    "deliver": {
        "intro": "{events:.0f} pre-stored events (1 KiB) delivered to nginx answering 200, every "
                 "attempt and result recorded durably, max_concurrency {max_concurrency:.0f}; the "
                 "rate is from start-up until the last is delivered. Beside it, against the same "
                 "nginx in the same run: wrk -t2 -c64 (the ceiling), bare libcurl multi and "
                 "hookrelay's Sender with no store ({max_concurrency:.0f} in flight).",
        "ratios": {
            "ratio_to_bare_libcurl": ("deliveries_per_s", "bare_libcurl_requests_per_s"),
            "ratio_to_wrk": ("deliveries_per_s", "wrk_requests_per_s"),
            "bare_libcurl_ratio_to_wrk": ("bare_libcurl_requests_per_s", "wrk_requests_per_s"),
            "sender_alone_ratio_to_wrk": ("sender_alone_requests_per_s", "wrk_requests_per_s"),
        },
        "columns": [
            ("wrk (ceiling)", "{wrk_requests_per_s:,.0f} req/s"),
            ("bare libcurl", "{bare_libcurl_requests_per_s:,.0f} req/s ({bare_libcurl_ratio_to_wrk:.2f} of wrk)"),
            ("Sender alone", "{sender_alone_requests_per_s:,.0f} req/s ({sender_alone_ratio_to_wrk:.2f} of wrk)"),
            ("hookrelay end to end", "{deliveries_per_s:,.0f}/s ({delivered:.0f} in {seconds:.2f} s)"),
            ("/ bare libcurl", "**{ratio_to_bare_libcurl:.2f}**"),
            ("/ wrk", "**{ratio_to_wrk:.2f}**"),
            ("peak RSS", "{peak_rss_kib:,.0f} KiB"),
        ],
        "targets": [
            ("end to end / bare libcurl multi", "ratio_to_bare_libcurl", ">=", 0.75, ""),
            ("end to end / wrk", "ratio_to_wrk", ">=", 0.30, ""),
        ],
    },
    "ingest_filtered": {
        "intro": "Issue 27. wrk -t2 -c{connections:.0f} -d{seconds:.0f}s POSTing 8 Stripe-like "
                 "~1 KiB JSON events in turn (8 types) to one source (its type read from the "
                 "body) with {routes:.0f} routes to {routes:.0f} destinations (each allowed one "
                 "request an hour: every event writes its delivery rows, nothing is sent); "
                 "durable, as the ingest suite. Three servers, each on a fresh data directory: "
                 "**unfiltered** (no types, no filter: {routes:.0f} deliveries per event, the "
                 "ceiling), **filtered, all match** (each route has `types` and a filter of "
                 "{conditions:.0f} conditions, 1 header and 4 body ones down to data.object, that "
                 "every event passes: the same {routes:.0f} deliveries per event, so the ratio "
                 "is the cost of matching alone) and **filtered, some match** (the same shape of "
                 "routes as a real fan-out: about 2 of the {routes:.0f} take each event, the "
                 "others' reasons are kept with it; a reference). The first two swap places "
                 "every run. CPU: hookrelay's user + system time during wrk per stored event; "
                 "busy: the whole machine (wrk included). Then bench/routing_bench: the same "
                 "events and routes matched alone (no HTTP, no store), CPU per event: the body's "
                 "parse, and the 10 routes on the parsed body (with the reasons of the routes "
                 "that miss, as ingest does).",
        "ratios": {
            "filtered_ratio": ("filtered_all_events_per_s", "unfiltered_events_per_s"),
            "filtered_some_ratio": ("filtered_some_events_per_s", "unfiltered_events_per_s"),
            "filtered_cpu_ratio": ("filtered_all_cpu_us_per_event", "unfiltered_cpu_us_per_event"),
        },
        "columns": [
            ("load", "{load1:.2f}"),
            ("unfiltered (ceiling)", "{unfiltered_events_per_s:,.0f} events/s, p99 {unfiltered_p99_ms:.2f} ms, "
             "{unfiltered_cpu_us_per_event:.0f} µs CPU, {unfiltered_deliveries_per_event:.2f} deliveries/event"),
            ("filtered, all match", "{filtered_all_events_per_s:,.0f} events/s, p99 {filtered_all_p99_ms:.2f} ms, "
             "{filtered_all_cpu_us_per_event:.0f} µs CPU, {filtered_all_deliveries_per_event:.2f} deliveries/event"),
            ("all match / unfiltered", "**{filtered_ratio:.2f}**"),
            ("matching's CPU per event", "{match_cpu_us_per_event:.1f} µs"),
            ("filtered, some match", "{filtered_some_events_per_s:,.0f} events/s, p99 {filtered_some_p99_ms:.2f} ms, "
             "{filtered_some_cpu_us_per_event:.0f} µs CPU, {filtered_some_deliveries_per_event:.2f} deliveries/event"),
            ("some match / unfiltered", "{filtered_some_ratio:.2f}"),
            ("matching alone (routing_bench): parse, all, some",
             "{bench_parse_ns:,.0f} / {bench_route_all_ns:,.0f} / {bench_route_some_ns:,.0f} ns"),
            ("busy: unfiltered / all / some", "{unfiltered_busy_pct:.0f} / {filtered_all_busy_pct:.0f} / {filtered_some_busy_pct:.0f} %"),
            ("non-2xx", "{unfiltered_non_2xx:.0f} / {filtered_all_non_2xx:.0f} / {filtered_some_non_2xx:.0f}"),
        ],
        "targets": [
            ("filtered (all match, same deliveries) / unfiltered", "filtered_ratio", ">=", 0.90, ""),
        ],
        "references": [
            ("filtered (some match, ~2 deliveries per event) / unfiltered", "filtered_some_ratio"),
            ("hookrelay CPU per event, all match / unfiltered", "filtered_cpu_ratio"),
            ("matching's CPU per event (µs; all match - unfiltered)", "match_cpu_us_per_event"),
            ("matching alone, 10 routes all match (routing_bench, ns per event)", "bench_route_all_ns"),
            ("the same, some match, reasons included (ns per event)", "bench_route_some_ns"),
            ("the body's parse alone (ns per event; paid unfiltered too)", "bench_parse_ns"),
            ("matching alone / hookrelay's CPU per event unfiltered", "bench_route_all_share"),
            ("p99, unfiltered (ms)", "unfiltered_p99_ms"),
            ("p99, filtered, all match (ms)", "filtered_all_p99_ms"),
            ("p99, filtered, some match (ms)", "filtered_some_p99_ms"),
        ],
    },
    "deliver_transform": {
        "intro": "Issue 27. {events:.0f} pre-stored Stripe-like events (1 KiB, invoice.paid; "
                 "bench/prestore) delivered end to end to nginx answering 200, every attempt "
                 "and result recorded durably, max_concurrency {max_concurrency:.0f}, as the "
                 "deliver suite; the rate is from start-up until the last is delivered. "
                 "**plain**: the destination without a transform (the ceiling); **transform**: "
                 "the same destination with a transform that adds a header and renames two JSON "
                 "fields (`const {{ id, type, ...rest }} = request.json; request.json = "
                 "{{ event_id: id, event_type: type, ...rest }}; request.headers['x-relayed-by'] "
                 "= 'hookrelay'`). The two swap places every run. At the sink: nginx's requests "
                 "with the added header, and their rate from the first to the last (without "
                 "start-up). CPU: hookrelay's user + system time over its whole life per "
                 "delivery. Beside them, the engine alone: bench/transform_bench on the same script "
                 "and a ~1 KiB event in a destination's kept realm (BM_TransformKeptRealm, what a "
                 "delivery pays), one thread, 2 s: CPU per call, memory per context (the kept "
                 "realm's size: standard classes, frozen, and the script; `realm_bytes`), and "
                 "the most its two worker threads could do if that call were all they did.",
        "ratios": {
            "transform_ratio": ("transform_deliveries_per_s", "plain_deliveries_per_s"),
            "transform_sink_ratio": ("transform_sink_per_s", "plain_sink_per_s"),
            "transform_cpu_ratio": ("transform_cpu_us_per_delivery", "plain_cpu_us_per_delivery"),
        },
        "columns": [
            ("load", "{load1:.2f}"),
            ("plain (ceiling)", "{plain_deliveries_per_s:,.0f}/s ({plain_delivered:.0f} in {plain_seconds:.2f} s), "
             "{plain_cpu_us_per_delivery:.0f} µs CPU"),
            ("transform", "{transform_deliveries_per_s:,.0f}/s ({transform_delivered:.0f} in {transform_seconds:.2f} s), "
             "{transform_cpu_us_per_delivery:.0f} µs CPU"),
            ("transform / plain", "**{transform_ratio:.2f}**"),
            ("at the sink: plain / transform (first to last)", "{plain_sink_per_s:,.0f} / {transform_sink_per_s:,.0f} per s ({transform_sink_ratio:.2f})"),
            ("with the header", "{transform_transformed_at_sink:.0f} of {transform_at_sink:.0f}"),
            ("engine alone: CPU (wall) per call, memory per context",
             "{engine_cpu_us_per_call:.0f} ({engine_wall_us_per_call:.0f}) µs, {engine_memory_bytes_per_context:,.0f} B"),
            ("2 workers' bound", "{engine_two_workers_bound_per_s:,.0f}/s"),
            ("peak RSS: plain / transform", "{plain_peak_rss_kib:,.0f} / {transform_peak_rss_kib:,.0f} KiB"),
            ("failed", "{plain_failed:.0f} / {transform_failed:.0f}"),
        ],
        "targets": [
            ("delivery with a transform / without", "transform_ratio", ">=", 0.70, ""),
        ],
        "references": [
            ("the same at the sink, first to last request", "transform_sink_ratio"),
            ("hookrelay CPU per delivery, transform / plain", "transform_cpu_ratio"),
            ("the transform's extra CPU per delivery (µs)", "transform_extra_cpu_us_per_delivery"),
            ("engine alone: CPU per call (µs)", "engine_cpu_us_per_call"),
            ("engine alone: memory per context (bytes)", "engine_memory_bytes_per_context"),
            ("two workers' bound from that call (per s)", "engine_two_workers_bound_per_s"),
        ],
    },
    "slowsink": {
        "intro": "A sink (bench/slow_sink) answering every request with 200 after {delay_ms:.0f} ms. "
                 "First `hey -c {connections:.0f}` against it for {seconds_hey:.0f} s (the ceiling; at "
                 "most {connections:.0f} / {delay_ms:.0f} ms = {sink_bound_per_s:,.0f}/s), then "
                 "hookrelay delivers {events:.0f} pre-stored events (1 KiB) to it with "
                 "max_concurrency {max_concurrency:.0f} and the default adaptive pacing; the rate is "
                 "from start-up until the last is delivered. allowed_concurrency and in-flight "
                 "attempts are sampled from /metrics every {sample_ms:.0f} ms. The sink's hold "
                 "time (request read to answer written) shows whether the sink kept up "
                 "({delay_ms:.0f} ms is keeping up), and its peak open connections how many "
                 "requests were really on the wire (the `hookrelay_attempts_in_flight` gauge also "
                 "counts requests waiting inside libcurl for a connection, and finished ones "
                 "whose result is not recorded yet).",
        "ratios": {
            "ratio_to_hey": ("deliveries_per_s", "hey_requests_per_s"),
            "hey_ratio_to_bound": ("hey_requests_per_s", "sink_bound_per_s"),
            "allowed_concurrency_reached": ("allowed_concurrency_end", "max_concurrency"),
        },
        "columns": [
            ("hey (ceiling)", "{hey_requests_per_s:,.0f} req/s ({hey_ratio_to_bound:.2f} of the bound), p99 {hey_p99_ms:.0f} ms"),
            ("sink under hey: hold mean / max, peak conns", "{sink_hey_hold_mean_ms:.1f} / {sink_hey_hold_max_ms:.1f} ms, {sink_hey_peak_open:.0f}"),
            ("hookrelay end to end", "{deliveries_per_s:,.0f}/s ({delivered:.0f} in {seconds:.2f} s)"),
            ("/ hey", "**{ratio_to_hey:.2f}**"),
            ("allowed_concurrency: min / max / at end",
             "{allowed_concurrency_min:.0f} / {allowed_concurrency_max:.0f} / {allowed_concurrency_end:.0f}"),
            ("in flight (gauge): max", "{in_flight_max:.0f}"),
            ("sink under hookrelay: hold mean / max, peak conns", "{sink_hr_hold_mean_ms:.1f} / {sink_hr_hold_max_ms:.1f} ms, {sink_hr_peak_open:.0f}"),
            ("peak RSS", "**{peak_rss_kib:,.0f} KiB**"),
            ("failed", "{failed:.0f}"),
        ],
        "targets": [
            ("end to end / hey -c 1000", "ratio_to_hey", ">=", 0.80, ""),
            ("peak RSS", "peak_rss_mib", "<=", 256, " MiB"),
            ("allowed_concurrency at the end / max_concurrency", "allowed_concurrency_reached", ">=",
             1.0, ""),
        ],
    },
    "ordered": {
        "intro": "{events:.0f} events over {keys:.0f} keys (an X-Key header), ingested while three "
                 "destinations on one sink answering after {delay_ms:.0f} ms were paused, then "
                 "each resumed alone and timed until it had delivered them all: unordered, "
                 "ordered per key (order_key) and ordered as a whole (ordered = true), "
                 "max_concurrency {max_concurrency:.0f}. Ceilings in the same run: the sink's bound "
                 "with {max_concurrency:.0f} in flight ({bound_per_s:.0f}/s) for the first two, one "
                 "request at a time ({one_at_a_time_bound_per_s:.0f}/s) for the whole destination.",
        "ratios": {
            "per_key_ratio_to_unordered": ("per_key_per_s", "unordered_per_s"),
            "whole_ratio_to_unordered": ("whole_per_s", "unordered_per_s"),
            "unordered_ratio_to_bound": ("unordered_per_s", "bound_per_s"),
            "whole_ratio_to_one_at_a_time": ("whole_per_s", "one_at_a_time_bound_per_s"),
        },
        "columns": [
            ("unordered", "{unordered_per_s:,.0f}/s ({unordered_delivered:.0f} in {unordered_seconds:.2f} s; {unordered_ratio_to_bound:.2f} of the bound)"),
            ("per key", "{per_key_per_s:,.0f}/s ({per_key_delivered:.0f} in {per_key_seconds:.2f} s)"),
            ("whole destination", "{whole_per_s:,.1f}/s ({whole_delivered:.0f} in {whole_seconds:.2f} s; {whole_ratio_to_one_at_a_time:.2f} of one at a time)"),
            ("per key / unordered", "**{per_key_ratio_to_unordered:.2f}**"),
            ("whole / unordered", "**{whole_ratio_to_unordered:.3f}**"),
            ("peak RSS", "{peak_rss_kib:,.0f} KiB"),
        ],
        "targets": [],
    },
    "backlog": {
        "intro": "{future_deliveries:.0f} deliveries scheduled an hour ahead (pre-stored once), "
                 "then in each run {due_deliveries:.0f} more due 10-15 s after a fresh start of "
                 "`hookrelay serve` on that directory: the server's RSS once they are delivered, "
                 "and how late each reached nginx (nginx's access log against its due time).",
        "ratios": {},
        "columns": [
            ("RSS (peak)", "{rss_kib:,.0f} KiB ({peak_rss_kib:,.0f} KiB)"),
            ("lateness p50 / p99 / max", "{lateness_p50_ms:.0f} / {lateness_p99_ms:.0f} / **{lateness_max_ms:.0f} ms**"),
            ("due sent", "{due_delivered:.0f}"),
        ],
        "targets": [
            ("RSS of the running server (peak)", "peak_rss_mib", "<=", 200, " MiB"),
            ("lateness of due deliveries (max)", "lateness_max_ms", "<=", 100, " ms"),
        ],
    },
    "postgres": {
        "intro": "A private PostgreSQL cluster started by bench/run (initdb into a temporary "
                 "directory, 127.0.0.1; fsync, synchronous_commit and full_page_writes on: every "
                 "COMMIT waits for the WAL's flush to disk). pgbench: single-row INSERT "
                 "transactions of a 1 KiB bytea by {connections:.0f} clients, then by 1 (commits "
                 "one after the other), {seconds:.0f} s each. Then wrk -t2 -c{connections:.0f} "
                 "-d{seconds:.0f}s POSTing 1 KiB events to one node on the embedded store, to one "
                 "node on PostgreSQL, and to two nodes on one database (one wrk thread and half "
                 "the connections per node). Commits are the append transactions that stored "
                 "events (distinct xmin of the events rows). CPU: the cores the nodes and "
                 "PostgreSQL used during the wrk run, and how busy the whole machine was (wrk "
                 "and anything else running share its cores). Peak connections: the database's "
                 "(pg_stat_activity, sampled). Delivery: "
                 "{deliver_events:.0f} events stored beforehand (bench/prestore) delivered to "
                 "nginx answering 200 by the embedded store, then by 1 and 2 nodes on "
                 "PostgreSQL (max_concurrency 256 each), from start-up until the last is "
                 "delivered, and at the sink from its first request to its last (nginx's access "
                 "log: the delivering alone, without the nodes' start-up); PostgreSQL's "
                 "transactions/s for the database meanwhile; lock waits: the backend samples "
                 "(pg_stat_activity, every poll) waiting on a heavyweight lock (a row or "
                 "transaction another holds) / the samples of backends in a transaction.",
        "ratios": {
            "ingest_scale": ("pg2_events_per_s", "pg1_events_per_s"),
            "deliver_scale": ("pg2_deliveries_per_s", "pg1_deliveries_per_s"),
            "deliver_scale_at_sink": ("pg2_sink_deliveries_per_s", "pg1_sink_deliveries_per_s"),
            "pg1_ingest_to_sqlite": ("pg1_events_per_s", "sqlite_events_per_s"),
            "pg1_deliver_to_sqlite": ("pg1_deliveries_per_s", "sqlite_deliveries_per_s"),
            "pg1_commits_to_pgbench_one": ("pg1_commits_per_s", "pgbench_one_tps"),
            "pg2_commits_to_pgbench_one": ("pg2_commits_per_s", "pgbench_one_tps"),
            "pg2_events_to_pgbench_many": ("pg2_events_per_s", "pgbench_many_tps"),
        },
        "columns": [
            ("pgbench INSERT tx/s: many clients / 1", "{pgbench_many_tps:,.0f} / {pgbench_one_tps:,.0f}"),
            ("embedded store: ingest, p50 / p99", "{sqlite_events_per_s:,.0f} events/s, {sqlite_p50_ms:.2f} / {sqlite_p99_ms:.2f} ms"),
            ("1 node: ingest, p50 / p99", "{pg1_events_per_s:,.0f} events/s, {pg1_p50_ms:.2f} / {pg1_p99_ms:.2f} ms"),
            ("1 node: commits/s × events; CPU cores: node / PostgreSQL, machine busy", "{pg1_commits_per_s:,.0f} × {pg1_events_per_commit:.1f}; {pg1_node_cores:.2f} / {pg1_pg_cores:.2f}, {pg1_cpu_busy_pct:.0f} %"),
            ("2 nodes: ingest, p50 / p99", "{pg2_events_per_s:,.0f} events/s, {pg2_p50_ms:.2f} / {pg2_p99_ms:.2f} ms"),
            ("2 nodes: commits/s × events; CPU cores: nodes / PostgreSQL, machine busy", "{pg2_commits_per_s:,.0f} × {pg2_events_per_commit:.1f}; {pg2_node_cores:.2f} / {pg2_pg_cores:.2f}, {pg2_cpu_busy_pct:.0f} %"),
            ("ingest 2 / 1", "**{ingest_scale:.2f}**"),
            ("delivery: embedded / 1 node / 2 nodes", "{sqlite_deliveries_per_s:,.0f} / {pg1_deliveries_per_s:,.0f} / {pg2_deliveries_per_s:,.0f} per s"),
            ("delivery: PostgreSQL tx/s, 1 / 2 nodes", "{pg1_deliver_xacts_per_s:,.0f} / {pg2_deliver_xacts_per_s:,.0f}"),
            ("delivery at the sink, first to last request: 1 node / 2 nodes; first request after start", "{pg1_sink_deliveries_per_s:,.0f} / {pg2_sink_deliveries_per_s:,.0f} per s; {pg1_first_request_s:.1f} / {pg2_first_request_s:.1f} s"),
            ("delivery, 1 / 2 nodes: lock waits / samples; CPU cores: nodes / PostgreSQL, machine busy", "{pg1_deliver_lock_samples:.0f} / {pg1_deliver_samples:.0f}, {pg2_deliver_lock_samples:.0f} / {pg2_deliver_samples:.0f}; {pg1_deliver_node_cores:.2f} / {pg1_deliver_pg_cores:.2f}, {pg1_deliver_busy_pct:.0f} % and {pg2_deliver_node_cores:.2f} / {pg2_deliver_pg_cores:.2f}, {pg2_deliver_busy_pct:.0f} %"),
            ("delivery 2 / 1: from start; at the sink", "**{deliver_scale:.2f}**; **{deliver_scale_at_sink:.2f}**"),
            ("limit (2 nodes' ingest)", "{limit}"),
            ("peak connections, 1 / 2 nodes: ingest; delivery", "{pg1_peak_connections:.0f} / {pg2_peak_connections:.0f}; {pg1_deliver_peak_connections:.0f} / {pg2_deliver_peak_connections:.0f}"),
            ("non-2xx, 1 / 2 nodes", "{pg1_non_2xx:.0f} / {pg2_non_2xx:.0f}"),
        ],
        "targets": [
            ("ingest, 2 nodes / 1 node", "ingest_scale", ">=", 1.6, ""),
            ("delivery, 2 nodes / 1 node (from start-up)", "deliver_scale", ">=", 1.6, ""),
            ("delivery at the sink, 2 nodes / 1 node (first to last request)",
             "deliver_scale_at_sink", ">=", 1.6, ""),
        ],
        "references": [
            ("1 node's ingest / the embedded store's", "pg1_ingest_to_sqlite"),
            ("1 node's delivery / the embedded store's", "pg1_deliver_to_sqlite"),
            ("1 node's commits/s / pgbench with 1 client", "pg1_commits_to_pgbench_one"),
            ("2 nodes' commits/s / pgbench with 1 client", "pg2_commits_to_pgbench_one"),
            ("2 nodes' events/s / pgbench's INSERTs/s with as many clients",
             "pg2_events_to_pgbench_many"),
            ("machine CPU busy, 2 nodes' ingest (%)", "pg2_cpu_busy_pct"),
        ],
    },
}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def postgres_limit(run):
    """What bounded the two nodes' ingest, read from the run's own figures: PostgreSQL's commit
    rate when the append transactions (which take the event-key row lock in turn, so commit one
    after the other whatever the node count) come near pgbench's one-client commit rate; else the
    machine's CPU when it was nearly all busy; else neither (hookrelay itself)."""
    commits, serial, busy = (run.get("pg2_commits_per_s"), run.get("pgbench_one_tps"),
                             run.get("pg2_cpu_busy_pct"))
    if number(commits) and number(serial) and serial > 0 and commits >= 0.8 * serial:
        return "PostgreSQL's commit rate"
    if number(busy) and busy >= 90:
        return f"CPU: the machine was {busy:.0f} % busy"
    if number(commits) and number(busy):
        return "neither: hookrelay"
    return None


def derive(suite, run):
    for name, (num, den) in SUITES[suite]["ratios"].items():
        n, d = run.get(num), run.get(den)
        run[name] = round(n / d, 3) if number(n) and number(d) and d > 0 else None
    if suite == "postgres":
        run["limit"] = postgres_limit(run)
    for kib in ("peak_rss_kib",):
        if number(run.get(kib)):
            run["peak_rss_mib"] = round(run[kib] / 1024, 1)
    return run


def fmt(template, figures):
    try:
        return template.format_map({k: v for k, v in figures.items() if v is not None})
    except (KeyError, ValueError, TypeError):
        return "-"  # a figure of this cell is missing from this run


def show(v, unit=""):
    if not number(v):
        return "-"
    if abs(v) >= 100:
        return f"{v:,.0f}{unit}"
    return f"{v:.2f}{unit}"


def main():
    suite, runs_path, out_path, out_name = sys.argv[1:5]
    spec = SUITES[suite]
    with open(runs_path) as f:
        runs = [derive(suite, json.loads(line)) for line in f if line.strip()]
    keys = []
    for run in runs:
        keys += [k for k in run if k not in keys]
    summary = {}
    for k in keys:
        values = [r[k] for r in runs if number(r.get(k))]
        if values:
            summary[k] = {"median": statistics.median(values), "min": min(values),
                          "max": max(values), "runs": len(values)}
    with open(out_path, "w") as f:
        json.dump({"suite": suite, "repeat": len(runs), "runs": runs, "summary": summary}, f,
                  indent=1)
        f.write("\n")

    out = [f"## {suite}\n"]
    out.append(fmt(spec["intro"], runs[0]) if runs else "")
    out.append(f"{len(runs)} run(s) back to back; each ratio is computed within its own run. "
               f"Raw: `bench/results/{out_name}`.\n")
    headers = ["run"] + [h for h, _ in spec["columns"]]
    out.append("| " + " | ".join(headers) + " |")
    out.append("|" + "---|" * len(headers))
    for i, run in enumerate(runs, 1):
        out.append("| " + " | ".join([str(i)] + [fmt(t, run) for _, t in spec["columns"]]) + " |")
    out.append("")
    out.append(f"| target | median of {len(runs)} | min – max | target | |")
    out.append("|---|---|---|---|---|")
    for what, key, op, threshold, unit in spec["targets"]:
        s = summary.get(key)
        limit = f"{op} {threshold:.2f}" if threshold < 10 else f"{op} {threshold}{unit}"
        if s is None:
            out.append(f"| {what} | - | - | {limit} | not measured |")
            continue
        met = s["median"] >= threshold if op == ">=" else s["median"] <= threshold
        out.append(f"| {what} | **{show(s['median'], unit)}** | {show(s['min'])} – "
                   f"{show(s['max'], unit)} | {limit} | "
                   f"{'met' if met else '**not met**'} |")
    for what, key in spec.get("references", []):
        s = summary.get(key)
        if s is None:
            out.append(f"| {what} | - | - | | reference |")
            continue
        out.append(f"| {what} | {show(s['median'])} | {show(s['min'])} – {show(s['max'])} | "
                   f"| reference |")
    out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
