// CPU per call and memory per context of a transform (src/transform): "add a header and rename
// two JSON fields" on a ~1 KB Stripe-like event. Figures in docs/transforms.md.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <string_view>

#include "transform/sandbox.h"

namespace hookrelay::transform {
namespace {

const char* kScript = R"(
function transform(request) {
  const { id, type, ...rest } = request.json;
  request.json = { event_id: id, event_type: type, ...rest };
  request.headers['x-relayed-by'] = 'hookrelay';
  return request;
})";

Request StripeEvent() {
  Request r;
  r.method = "POST";
  r.path = "/hooks/stripe";
  r.headers = {{"content-type", "application/json; charset=utf-8"},
               {"stripe-signature",
                "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"},
               {"user-agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"}};
  r.body =
      R"j({"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","api_version":"2022-11-15",)j"
      R"j("created":1686089970,"data":{"object":{"id":"in_1NG8Dt2eZvKYlo2C8xXrZ9cA",)j"
      R"j("object":"invoice","account_country":"US","account_name":"Example Inc.",)j"
      R"j("amount_due":2000,"amount_paid":2000,"amount_remaining":0,"attempt_count":1,)j"
      R"j("attempted":true,"billing_reason":"subscription_cycle","collection_method":)j"
      R"j("charge_automatically","currency":"usd","customer":"cus_NrsUHaWg9bLEYq",)j"
      R"j("customer_email":"jenny.rosen@example.com","customer_name":"Jenny Rosen",)j"
      R"j("hosted_invoice_url":"https://invoice.stripe.com/i/acct_1M2JTkLkdIwHu7ix/test",)j"
      R"j("lines":{"object":"list","data":[{"id":"il_1NG8Dt2eZvKYlo2CnXh2Xcbd","amount":2000,)j"
      R"j("currency":"usd","description":"1 x Gold plan (at $20.00 / month)","period":)j"
      R"j({"end":1688681970,"start":1686089970},"quantity":1,"type":"subscription"}],)j"
      R"j("has_more":false,"total_count":1},"livemode":false,"number":"EX-0042",)j"
      R"j("paid":true,"status":"paid","subtotal":2000,"tax":null,"total":2000}},)j"
      R"j("livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":)j"
      R"j("6b5a1c4e-3f1a-4d6b-9a2e-1c3f5e7d9b0a"},"type":"invoice.paid"})j";
  return r;
}

void Run(benchmark::State& state, size_t cache_entries, std::string_view scope) {
  Watchdog watchdog;
  Sandbox::Options options;
  options.script_cache_entries = cache_entries;
  std::unique_ptr<Sandbox> sandbox = Sandbox::Create(watchdog, options).value();
  const Request request = StripeEvent();
  size_t memory = 0;
  for (auto _ : state) {
    Result<Outcome> r = sandbox->Call(kScript, request, Limits(), scope);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    if (r->memory_bytes != 0) memory = r->memory_bytes;
    benchmark::DoNotOptimize(r->request);
  }
  state.counters["memory_bytes"] = static_cast<double>(memory);
  // A kept realm's own size (what each destination holds on each worker), when there is one.
  if (sandbox->KeptRealms() != 0) {
    state.counters["realm_bytes"] = static_cast<double>(sandbox->KeptRealmBytes());
  }
  state.counters["body_bytes"] = static_cast<double>(request.body.size());
}

// The destination's kept realm (what a delivery pays): made once, then reused.
void BM_TransformKeptRealm(benchmark::State& state) { Run(state, 64, "billing"); }
// A fresh realm per call, the script compiled once per thread (the test and preview API).
void BM_TransformCached(benchmark::State& state) { Run(state, 64, {}); }
// A fresh realm, compiled on every call: what caching saves.
void BM_TransformCompiledEachCall(benchmark::State& state) { Run(state, 0, {}); }

BENCHMARK(BM_TransformKeptRealm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TransformCached)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TransformCompiledEachCall)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hookrelay::transform

BENCHMARK_MAIN();
