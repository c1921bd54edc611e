#!/usr/bin/env python3
"""bench/routing_fixture.py: the events, routes and configs of the ingest_filtered and
deliver_transform suites (issue 27), written into one directory for bench/run.

    bench/routing_fixture.py ingest DIR
    bench/routing_fixture.py deliver DIR SINK_URL MAX_CONCURRENCY

ingest writes:
  post.lua            a wrk script POSTing 8 Stripe-like events (~1 KiB, 8 types) in turn, with a
                      Stripe user agent and signature header (the signature is not checked);
  unfiltered.toml     source "bench" (type read from the body's "type") with 10 routes to 10
                      destinations, no types and no filter: every event, 10 deliveries;
  filtered_all.toml   the same 10 routes, each with `types` (4 patterns) and a filter of 5
                      conditions (1 header, 4 body, down to data.object) that every event passes:
                      10 deliveries per event, as unfiltered, so the ratio measures only the cost
                      of matching;
  filtered_some.toml  the same shape of routes (types and 5 conditions each) written as a real
                      fan-out: each event matches 1 to 3 of the 10 (2.125 on average; one
                      route takes none), and the routes that miss it record their reason;
  expected.txt        "variant deliveries_per_event" as the matcher below computes it (the suite
                      checks it against the store);
  match.json          the headers, the 8 bodies and each variant's routes, for bench/routing_bench
                      (HOOKRELAY_ROUTING_FIXTURE): matching alone, without HTTP or the store.
deliver writes:
  event.json          one of those events (invoice.paid, 1 KiB) for bench/prestore;
  plain.toml          source "bench" routed to destination "sink" at SINK_URL;
  transform.toml      the same with a transform on the destination that adds a header and renames
                      two JSON fields (the script of bench/transform_bench.cc).
"""
import json
import sys

BODY_BYTES = 1024
USER_AGENT = "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
SIGNATURE = "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"

# type, currency, amount (livemode false for all: test-mode events)
EVENTS = [
    ("invoice.paid", "usd", 2000),
    ("invoice.payment_failed", "usd", 5000),
    ("customer.subscription.updated", "eur", 1500),
    ("charge.succeeded", "usd", 700),
    ("charge.refunded", "gbp", 300),
    ("payment_intent.succeeded", "eur", 12000),
    ("customer.created", "usd", 0),
    ("invoice.finalized", "gbp", 2500),
]

ALL_TYPES = ["invoice.*", "customer.*", "charge.*", "payment_intent.*"]


def event_body(i, type_, currency, amount):
    obj = type_.split(".")[0]
    body = {
        "id": f"evt_1NG8Du2eZvKYlo2C{i:08d}",
        "object": "event",
        "api_version": "2022-11-15",
        "created": 1686089970 + i,
        "data": {"object": {
            "id": f"{obj[:2]}_1NG8Dt2eZvKYlo2C8xXrZ9cA",
            "object": obj,
            "amount": amount,
            "currency": currency,
            "customer": "cus_NrsUHaWg9bLEYq",
            "customer_email": "jenny.rosen@example.com",
            "customer_name": "Jenny Rosen",
            "description": "1 x Gold plan (at $20.00 / month)",
            "lines": {"object": "list", "data": [
                {"id": "il_1NG8Dt2eZvKYlo2CnXh2Xcbd", "amount": amount, "currency": currency,
                 "period": {"end": 1688681970, "start": 1686089970}, "quantity": 1,
                 "type": "subscription"}], "has_more": False, "total_count": 1},
            "metadata": {"order_id": f"{100000 + i}", "plan": "gold"},
            "status": "paid",
        }},
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": "6b5a1c4e-3f1a-4d6b-9a2e-1c3f5e7d9b0a"},
        "type": type_,
    }
    text = json.dumps(body, separators=(",", ":"))
    pad = BODY_BYTES - len(text) - len(',"note":""')
    if pad > 0:  # to BODY_BYTES exactly, in a field no route looks at
        body["data"]["object"]["note"] = "x" * pad
        text = json.dumps(body, separators=(",", ":"))
    return text


def conditions(currencies, amount_gte, livemode=False):
    """The 5 conditions of every filtered route: 1 on a header, 4 on the body."""
    return {
        "headers": {"user-agent": {"$prefix": "Stripe/"}},
        "body": {
            "livemode": livemode,
            "api_version": {"$prefix": "2022-"},
            "data": {"object": {"currency": {"$in": currencies}, "amount": {"$gte": amount_gte}}},
        },
    }


def routes_all():
    # Every route takes every event: the types cover them all (the patterns in another order
    # per route), and each condition holds for every event (all 5 are evaluated, none fails).
    out = []
    for i in range(10):
        types = ALL_TYPES[i % 4:] + ALL_TYPES[:i % 4]
        out.append((types, conditions(["gbp", "eur", "usd"][i % 3:] + ["gbp", "eur", "usd"][:i % 3], 0)))
    return out


def routes_some():
    anyc = ["usd", "eur", "gbp"]
    return [
        (["invoice.*"], conditions(["usd", "eur"], 1000)),                       # billing
        (["invoice.payment_failed"], conditions(anyc, 0)),                       # dunning
        (["invoice.paid", "charge.succeeded", "payment_intent.succeeded"],
         conditions(["usd"], 500)),                                              # revenue, US
        (["invoice.*", "charge.*", "payment_intent.*"], conditions(["eur"], 0)),  # EU ledger
        (ALL_TYPES, conditions(["gbp"], 0)),                                     # UK ledger
        (["charge.refunded"], conditions(anyc, 0)),                              # refunds
        (["customer.subscription.*"], conditions(anyc, 0)),                      # subscriptions
        (["customer.*"], conditions(anyc, 0)),                                   # CRM
        (ALL_TYPES, conditions(anyc, 1000)),                                     # large amounts
        (ALL_TYPES, conditions(anyc, 0, livemode=True)),                         # live only: none
    ]


def type_matches(patterns, t):
    return any(t == p or (p.endswith("*") and t.startswith(p[:-1]) and len(t) > len(p) - 1)
               for p in patterns)


def matches(route, ev):
    types, f = route
    t, currency, amount = ev
    b = f["body"]
    o = b["data"]["object"]
    return (type_matches(types, t) and USER_AGENT.startswith(f["headers"]["user-agent"]["$prefix"])
            and b["livemode"] is False and "2022-11-15".startswith(b["api_version"]["$prefix"])
            and currency in o["currency"]["$in"] and amount >= o["amount"]["$gte"])


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def config(routes):
    out = ['[[sources]]', 'name = "bench"', 'type = { json = "type" }', '']
    for i in range(10):
        # Allowed one request an hour: each event writes its delivery rows and nothing is sent
        # during the run (as in the ingest suite).
        out += ['[[destinations]]', f'name = "sink{i}"', 'url = "http://127.0.0.1:9/"',
                'allow_private = true', 'rate_limit = "1/h"', '']
    for i, r in enumerate(routes):
        out += ['[[routes]]', 'source = "bench"', f'destination = "sink{i}"']
        if r is not None:
            types, f = r
            out += [f'types = {toml_value(types)}', f'filter = {toml_value(f)}']
        out.append('')
    return "\n".join(out)


def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ingest(d):
    bodies = [event_body(i, *e) for i, e in enumerate(EVENTS)]
    with open(f"{d}/post.lua", "w") as f:
        f.write("wrk.method = \"POST\"\n")
        f.write('wrk.headers["Content-Type"] = "application/json; charset=utf-8"\n')
        f.write(f'wrk.headers["User-Agent"] = {lua_string(USER_AGENT)}\n')
        f.write(f'wrk.headers["Stripe-Signature"] = {lua_string(SIGNATURE)}\n')
        f.write("local bodies = {\n" + ",\n".join(lua_string(b) for b in bodies) + "\n}\n")
        # Formatted once per thread: the same cheap request() whatever the variant.
        f.write("local reqs = nil\nlocal n = 0\n")
        f.write("function request()\n"
                "  if reqs == nil then\n"
                "    reqs = {}\n"
                "    for i, b in ipairs(bodies) do reqs[i] = wrk.format(nil, nil, nil, b) end\n"
                "  end\n"
                "  n = n % #reqs + 1\n"
                "  return reqs[n]\n"
                "end\n")
    variants = {"unfiltered": [None] * 10, "filtered_all": routes_all(),
                "filtered_some": routes_some()}
    # The same events and routes for bench/routing_bench (matching alone, no HTTP, no store).
    with open(f"{d}/match.json", "w") as f:
        json.dump({
            "headers": [["Content-Type", "application/json; charset=utf-8"],
                        ["User-Agent", USER_AGENT], ["Stripe-Signature", SIGNATURE]],
            "bodies": bodies,
            "variants": {name: [{} if r is None else {"types": r[0], "filter": r[1]}
                                for r in routes] for name, routes in variants.items()},
        }, f)
    with open(f"{d}/expected.txt", "w") as f:
        for name, routes in variants.items():
            with open(f"{d}/{name}.toml", "w") as c:
                c.write(config(routes))
            per_event = [sum(1 for r in routes if r is None or matches(r, e)) for e in EVENTS]
            f.write(f"{name} {sum(per_event) / len(per_event):.3f}\n")


def deliver(d, url, concurrency):
    with open(f"{d}/event.json", "w") as f:
        f.write(event_body(0, *EVENTS[0]))
    script = ("function transform(request) {\n"
              "  const { id, type, ...rest } = request.json;\n"
              "  request.json = { event_id: id, event_type: type, ...rest };\n"
              "  request.headers['x-relayed-by'] = 'hookrelay';\n"
              "  return request;\n"
              "}")
    base = ['[[sources]]', 'name = "bench"', '', '[[destinations]]', 'name = "sink"',
            f'url = {json.dumps(url)}', 'allow_private = true', f'max_concurrency = {concurrency}']
    tail = ['', '[[routes]]', 'source = "bench"', 'destination = "sink"', '']
    with open(f"{d}/plain.toml", "w") as f:
        f.write("\n".join(base + tail))
    with open(f"{d}/transform.toml", "w") as f:
        f.write("\n".join(base + [f'transform = {{ script = """\n{script}""" }}'] + tail))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "ingest":
        ingest(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "deliver":
        deliver(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
