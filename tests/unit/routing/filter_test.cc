#include "routing/filter.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <optional>
#include <string>
#include <vector>

#include "routing/render.h"
#include "routing/route_rule.h"

namespace hookrelay::routing {
namespace {

namespace json = boost::json;

// The event most cases are matched against.
constexpr std::string_view kBody = R"({
  "type": "invoice.paid", "livemode": false, "amount": 250, "currency": "usd", "ratio": 0.5,
  "big": 18446744073709551615, "neg": -3, "name": "Acme Corp",
  "tags": ["a", "b", "vip"], "nums": [1, 5, 10],
  "data": {"object": {"amount": 250, "id": "in_123", "paid": true, "note": null}},
  "items": [{"sku": "A1", "qty": 2, "price": 10.5}, {"sku": "B2", "qty": 1, "price": 99}],
  "matrix": [[1, 2], [3, 4]], "empty": [], "obj": {}
})";

const std::vector<HeaderField> kHeaders = {{"X-Shop-Domain", "acme.myshopify.com"},
                                           {"Content-Type", "application/json"},
                                           {"X-Tag", "a"},
                                           {"x-tag", "b"}};

Filter MustParse(std::string_view text) {
  Result<Filter> f = Filter::Parse(json::parse(text), "filter");
  EXPECT_TRUE(f.ok()) << text << ": " << f.status().ToString();
  return f.ok() ? *f : Filter();
}

struct Case {
  std::string filter;
  std::string reason;  // empty: the event matches
};

// Matches every case against `body` (nullopt: no JSON body) and kHeaders, checking the exact
// reason and that Matches agrees with Match.
void Check(const std::vector<Case>& cases, std::optional<std::string_view> body = kBody) {
  std::optional<json::value> parsed;
  if (body) parsed = json::parse(*body);
  const MatchInput input{kHeaders, parsed ? &*parsed : nullptr};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.filter);
    const Filter f = MustParse(c.filter);
    const Verdict v = f.Match(input);
    EXPECT_EQ(v.matched, c.reason.empty());
    EXPECT_EQ(v.reason, c.reason);
    EXPECT_EQ(f.Matches(input), v.matched);
  }
}

TEST(FilterMatchTest, PlainValuesAreEquality) {
  Check({
      {R"({"body": {"livemode": false}})", ""},
      {R"({"body": {"livemode": true}})", "body.livemode: expected true, got false"},
      {R"({"body": {"currency": "usd"}})", ""},
      {R"({"body": {"currency": "eur"}})", R"(body.currency: expected "eur", got "usd")"},
      {R"({"body": {"currency": "USD"}})", R"(body.currency: expected "USD", got "usd")"},
      {R"({"body": {"data": {"object": {"note": null}}}})", ""},
      {R"({"body": {"data": {"object": {"paid": 1}}}})",
       "body.data.object.paid: expected 1, got true"},
      {R"({"body": {"data": {"object": {"id": "in_123", "amount": 250}}}})", ""},
      {R"({"body": {"data": {"object": {"id": "in_123", "amount": 251}}}})",
       "body.data.object.amount: expected 251, got 250"},
      {R"({"body": {"type": "invoice.paid", "livemode": true}})",
       "body.livemode: expected true, got false"},
  });
}

TEST(FilterMatchTest, NumbersCompareByValueAndNeverEqualStrings) {
  Check({
      {R"({"body": {"amount": 250.0}})", ""},
      {R"({"body": {"amount": 2.5e2}})", ""},
      {R"({"body": {"ratio": 0.5}})", ""},
      {R"({"body": {"neg": -3.0}})", ""},
      {R"({"body": {"amount": "250"}})", R"(body.amount: expected "250", got 250)"},
      {R"({"body": {"currency": 1}})", R"(body.currency: expected 1, got "usd")"},
      {R"({"body": {"big": 18446744073709551615}})", ""},
      // 2^64 as a double is not 2^64 - 1, though they round to the same double.
      {R"({"body": {"big": 1.8446744073709552e19}})",
       "body.big: expected 18446744073709551616, got 18446744073709551615"},
      {R"({"body": {"big": {"$gt": 9223372036854775807}}})", ""},
      {R"({"body": {"big": {"$gt": -1}}})", ""},
      {R"({"body": {"neg": {"$lt": 18446744073709551615}}})", ""},
      {R"({"body": {"neg": {"$gt": -3.5, "$lt": -2.5}}})", ""},
      {R"({"body": {"amount": {"$gt": 249.999}}})", ""},
      {R"({"body": {"amount": {"$lte": 249.99}}})",
       "body.amount: expected a value <= 249.99, got 250"},
  });
}

TEST(FilterMatchTest, MissingFields) {
  Check({
      {R"({"body": {"nope": 1}})", "body.nope: missing"},
      {R"({"body": {"nope": null}})", "body.nope: missing"},
      {R"({"body": {"nope": {"$eq": null}}})", "body.nope: missing"},
      {R"({"body": {"currency": {"code": "usd"}}})", "body.currency.code: missing"},
      {R"({"body": {"data": {"nope": {"deeper": 1}}}})", "body.data.nope.deeper: missing"},
      {R"({"body": {"nope": {"$in": [1, 2]}}})", "body.nope: missing"},
      {R"({"body": {"nope": {"$gt": 1}}})", "body.nope: missing"},
      {R"({"body": {"nope": {"$prefix": "a"}}})", "body.nope: missing"},
      {R"({"body": {"nope": {"$contains": "a"}}})", "body.nope: missing"},
      {R"({"body": {"nope": {"$exists": true}}})", "body.nope: missing"},
      // The negations hold on a missing field.
      {R"({"body": {"nope": {"$exists": false}}})", ""},
      {R"({"body": {"nope": {"$neq": 1}}})", ""},
      {R"({"body": {"nope": {"$nin": [1]}}})", ""},
      {R"({"body": {"nope": {"$not": {"$gt": 1}}}})", ""},
      {R"({"body": {"nope": {"deeper": {"$neq": 1}}}})", ""},
      {R"({"body": {"currency": {"code": {"$exists": false}}}})", ""},
      {R"({"body": {"empty": {"sku": {"$neq": "x"}}}})", ""},
      // Several conditions below a field that is missing, or not an object.
      {R"({"body": {"nope": {"a": {"$neq": 1}, "b": {"$exists": false}}}})", ""},
      {R"({"body": {"nope": {"a": {"$neq": 1}, "b": 2}}})", "body.nope.b: missing"},
      {R"({"body": {"currency": {"code": {"$exists": false}, "x": {"$nin": [1]}}}})", ""},
      {R"({"body": {"currency": {"code": {"$exists": false}, "x": 1}}})",
       "body.currency.x: missing"},
      {R"({"body": {"data": {"object": {"id": "in_123", "nope": {"x": 1, "y": 2}}}}})",
       "body.data.object.nope.x: missing"},
  });
}

TEST(FilterMatchTest, Eq) {
  Check({
      {R"({"body": {"livemode": {"$eq": false}}})", ""},
      {R"({"body": {"amount": {"$eq": 251}}})", "body.amount: expected 251, got 250"},
      {R"({"body": {"tags": {"$eq": ["a", "b", "vip"]}}})", ""},
      {R"({"body": {"tags": {"$eq": ["vip", "b", "a"]}}})",
       R"(body.tags: expected ["vip", "b", "a"], got ["a", "b", "vip"])"},
      {R"({"body": {"data": {"$eq": {"object": {"note": null, "paid": true, "id": "in_123", "amount": 250.0}}}}})",
       ""},
      {R"({"body": {"data": {"$eq": {"object": {}}}}})",
       R"(body.data: expected {"object": {}}, got {"object": {"amount": 250, "id": "in_123", "paid": true, "no…)"},
      {R"({"body": {"obj": {"$eq": {}}}})", ""},
      {R"({"body": {"empty": {"$eq": []}}})", ""},
      {R"({"body": {"items": {"$eq": {"sku": "A1", "qty": 2, "price": 10.5}}}})", ""},
      {R"({"body": {"data": {"object": {"note": {"$eq": null}}}}})", ""},
  });
}

TEST(FilterMatchTest, Neq) {
  Check({
      {R"({"body": {"currency": {"$neq": "eur"}}})", ""},
      {R"({"body": {"currency": {"$neq": "usd"}}})",
       R"(body.currency: expected anything but "usd", got "usd")"},
      {R"({"body": {"amount": {"$neq": 250.0}}})",
       "body.amount: expected anything but 250, got 250"},
      {R"({"body": {"amount": {"$neq": "250"}}})", ""},
      {R"({"body": {"tags": {"$neq": "gold"}}})", ""},
      {R"({"body": {"tags": {"$neq": "vip"}}})",
       R"(body.tags: expected anything but "vip", got ["a", "b", "vip"])"},
      {R"({"body": {"tags": {"$neq": ["a", "b"]}}})", ""},
  });
}

TEST(FilterMatchTest, InAndNin) {
  Check({
      {R"({"body": {"currency": {"$in": ["usd", "eur"]}}})", ""},
      {R"({"body": {"currency": {"$in": ["gbp", "eur"]}}})",
       R"(body.currency: expected one of ["gbp", "eur"], got "usd")"},
      {R"({"body": {"amount": {"$in": [1, 250.0]}}})", ""},
      {R"({"body": {"amount": {"$in": ["250"]}}})",
       R"(body.amount: expected one of ["250"], got 250)"},
      {R"({"body": {"tags": {"$in": ["x", "vip"]}}})", ""},
      {R"({"body": {"tags": {"$in": [["a", "b", "vip"]]}}})", ""},
      {R"({"body": {"tags": {"$in": [["a", "b"]]}}})",
       R"(body.tags: expected one of [["a", "b"]], got ["a", "b", "vip"])"},
      {R"({"body": {"currency": {"$nin": ["gbp"]}}})", ""},
      {R"({"body": {"currency": {"$nin": ["usd", "eur"]}}})",
       R"(body.currency: expected none of ["usd", "eur"], got "usd")"},
      {R"({"body": {"tags": {"$nin": ["gold", "silver"]}}})", ""},
      {R"({"body": {"tags": {"$nin": ["vip"]}}})",
       R"(body.tags: expected none of ["vip"], got ["a", "b", "vip"])"},
  });
}

TEST(FilterMatchTest, Exists) {
  Check({
      {R"({"body": {"data": {"object": {"note": {"$exists": true}}}}})", ""},
      {R"({"body": {"empty": {"$exists": true}}})", ""},
      {R"({"body": {"obj": {"$exists": true}}})", ""},
      {R"({"body": {"livemode": {"$exists": true}}})", ""},
      {R"({"body": {"amount": {"$exists": false}}})",
       "body.amount: expected no such field, got 250"},
      {R"({"body": {"data": {"object": {"note": {"$exists": false}}}}})",
       "body.data.object.note: expected no such field, got null"},
      {R"({"body": {"items": {"sku": {"$exists": true}}}})", ""},
      {R"({"body": {"items": {"sku": {"$exists": false}}}})",
       R"(body.items.sku: expected no such field, got "A1")"},
  });
}

TEST(FilterMatchTest, Comparisons) {
  Check({
      {R"({"body": {"amount": {"$gt": 249}}})", ""},
      {R"({"body": {"amount": {"$gt": 250}}})", "body.amount: expected a value > 250, got 250"},
      {R"({"body": {"amount": {"$gte": 250}}})", ""},
      {R"({"body": {"data": {"object": {"amount": {"$gte": 1000}}}}})",
       "body.data.object.amount: expected a value >= 1000, got 250"},
      {R"({"body": {"amount": {"$lt": 250.5}}})", ""},
      {R"({"body": {"amount": {"$lt": 250}}})", "body.amount: expected a value < 250, got 250"},
      {R"({"body": {"amount": {"$lte": 250}}})", ""},
      {R"({"body": {"amount": {"$gt": 100, "$lt": 200}}})",
       "body.amount: expected a value < 200, got 250"},
      {R"({"body": {"ratio": {"$gt": 0, "$lt": 1}}})", ""},
      // Strings compare with strings, byte by byte.
      {R"({"body": {"currency": {"$gt": "eur"}}})", ""},
      {R"({"body": {"currency": {"$lt": "eur"}}})",
       R"(body.currency: expected a value < "eur", got "usd")"},
      {R"({"body": {"currency": {"$gte": "usd", "$lte": "usd"}}})", ""},
      {R"({"body": {"name": {"$gt": "Acme"}}})", ""},
      {R"({"body": {"name": {"$gt": "acme"}}})",
       R"(body.name: expected a value > "acme", got "Acme Corp")"},
      // Across kinds the condition fails, and the reason says why.
      {R"({"body": {"currency": {"$gt": 100}}})",
       R"(body.currency: expected a value > 100, got "usd" (a string, not a number))"},
      {R"({"body": {"amount": {"$gt": "100"}}})",
       R"(body.amount: expected a value > "100", got 250 (a number, not a string))"},
      {R"({"body": {"livemode": {"$gte": 0}}})", "body.livemode: expected a value >= 0, got false"},
      {R"({"body": {"data": {"object": {"note": {"$lt": 1}}}}})",
       "body.data.object.note: expected a value < 1, got null"},
      {R"({"body": {"obj": {"$lt": 1}}})", "body.obj: expected a value < 1, got {}"},
  });
}

TEST(FilterMatchTest, PrefixAndSuffix) {
  Check({
      {R"({"body": {"data": {"object": {"id": {"$prefix": "in_"}}}}})", ""},
      {R"({"body": {"data": {"object": {"id": {"$prefix": "ch_"}}}}})",
       R"(body.data.object.id: expected a string starting with "ch_", got "in_123")"},
      {R"({"body": {"data": {"object": {"id": {"$prefix": ""}}}}})", ""},
      {R"({"body": {"name": {"$suffix": "Corp"}}})", ""},
      {R"({"body": {"name": {"$suffix": "corp"}}})",
       R"(body.name: expected a string ending with "corp", got "Acme Corp")"},
      {R"({"body": {"amount": {"$prefix": "25"}}})",
       R"(body.amount: expected a string starting with "25", got 250)"},
      {R"({"body": {"tags": {"$prefix": "vi"}}})", ""},
      {R"({"body": {"tags": {"$suffix": "x"}}})",
       R"(body.tags: expected a string ending with "x", got ["a", "b", "vip"])"},
  });
}

TEST(FilterMatchTest, Contains) {
  Check({
      {R"({"body": {"name": {"$contains": "me C"}}})", ""},
      {R"({"body": {"name": {"$contains": "Inc"}}})",
       R"(body.name: expected a string containing "Inc", got "Acme Corp")"},
      {R"({"body": {"tags": {"$contains": "vip"}}})", ""},
      // On an array, an element equal to the operand, not a substring of one.
      {R"({"body": {"tags": {"$contains": "vi"}}})",
       R"(body.tags: expected an array containing "vi", got ["a", "b", "vip"])"},
      {R"({"body": {"nums": {"$contains": 5.0}}})", ""},
      {R"({"body": {"nums": {"$contains": "5"}}})",
       R"(body.nums: expected an array containing "5", got [1, 5, 10])"},
      {R"({"body": {"items": {"$contains": {"price": 99, "qty": 1, "sku": "B2"}}}})", ""},
      {R"({"body": {"items": {"$contains": {"sku": "B2"}}}})",
       R"(body.items: expected an array containing {"sku": "B2"}, got [{"sku": "A1", "qty": 2, "price": 10.5}, {"sku": "B2", "qty"…)"},
      {R"({"body": {"matrix": {"$contains": [3, 4]}}})", ""},
      {R"({"body": {"empty": {"$contains": 1}}})",
       "body.empty: expected an array containing 1, got []"},
      {R"({"body": {"amount": {"$contains": "2"}}})",
       R"(body.amount: expected a string or an array containing "2", got 250)"},
      {R"({"body": {"amount": {"$contains": 2}}})",
       "body.amount: expected an array containing 2, got 250"},
      {R"({"body": {"name": {"$contains": 1}}})",
       R"(body.name: expected a string containing 1, got "Acme Corp")"},
  });
}

TEST(FilterMatchTest, ArraysMatchWhenAnyElementDoes) {
  Check({
      {R"({"body": {"tags": "vip"}})", ""},
      {R"({"body": {"tags": "gold"}})", R"(body.tags: expected "gold", got ["a", "b", "vip"])"},
      {R"({"body": {"tags": ["a", "b", "vip"]}})", ""},
      {R"({"body": {"tags": ["a", "b"]}})",
       R"(body.tags: expected ["a", "b"], got ["a", "b", "vip"])"},
      {R"({"body": {"nums": {"$gt": 9}}})", ""},
      {R"({"body": {"nums": {"$gt": 10}}})", "body.nums: expected a value > 10, got [1, 5, 10]"},
      // Each operator may hold on a different element, as in MongoDB.
      {R"({"body": {"nums": {"$gt": 6, "$lt": 4}}})", ""},
      // Nested objects inside arrays.
      {R"({"body": {"items": {"sku": "B2"}}})", ""},
      {R"({"body": {"items": {"sku": "C3"}}})",
       R"(body.items.sku: expected "C3", got "A1" (and 1 more))"},
      {R"({"body": {"items": {"price": {"$gt": 50}}}})", ""},
      {R"({"body": {"items": {"price": {"$gt": 100}}}})",
       "body.items.price: expected a value > 100, got 10.5 (and 1 more)"},
      {R"({"body": {"items": {"sku": {"$in": ["Z9", "A1"]}}}})", ""},
      {R"({"body": {"items": {"sku": {"$neq": "A1"}}}})",
       R"(body.items.sku: expected anything but "A1", got "A1")"},
      {R"({"body": {"items": {"sku": {"$nin": ["Z9"]}}}})", ""},
      {R"({"body": {"empty": {"sku": "A1"}}})", "body.empty.sku: missing"},
      // Arrays of arrays are not gone through.
      {R"({"body": {"matrix": 3}})", "body.matrix: expected 3, got [[1, 2], [3, 4]]"},
      {R"({"body": {"matrix": [3, 4]}})", "body.matrix: expected [3, 4], got [[1, 2], [3, 4]]"},
      {R"({"body": {"matrix": [[1, 2], [3, 4]]}})", ""},
  });
}

TEST(FilterMatchTest, ArraysAtEveryLevelOfAPath) {
  Check({{R"({"body": {"orders": {"lines": {"sku": "L3"}}}})", ""},
         {R"({"body": {"orders": {"lines": {"sku": "L9"}}}})",
          R"(body.orders.lines.sku: expected "L9", got "L1" (and 2 more))"},
         {R"({"body": {"orders": {"lines": {"qty": {"$gte": 5}}}}})", ""},
         {R"({"body": {"orders": {"id": 2, "lines": {"sku": "L1"}}}})", ""},
         {R"({"body": {"orders": {"lines": {"sku": "L3", "qty": 1}}}})", ""},
         {R"({"body": {"orders": {"lines": {"sku": "L3", "qty": 7}}}})",
          R"(body.orders.lines.qty: expected 7, got 1 (and 1 more))"},
         {R"({"body": {"orders": {"lines": {"sku": {"$neq": "L2"}, "qty": 5}}}})",
          R"(body.orders.lines.sku: expected anything but "L2", got "L2")"},
         {R"({"body": {"orders": {"$or": [{"id": 3}, {"lines": {"qty": 5}}]}}})", ""}},
        R"({"orders": [{"id": 1, "lines": [{"sku": "L1", "qty": 1}, {"sku": "L2"}]},
                       {"id": 2, "lines": [{"sku": "L3", "qty": 5}]}]})");
}

TEST(FilterMatchTest, BodyThatIsNotAnObject) {
  Check({{R"({"body": {"a": 2}})", ""},
         {R"({"body": {"a": 3}})", "body.a: expected 3, got 1 (and 1 more)"},
         {R"({"body": {"$exists": true}})", ""},
         {R"({"body": {"a": {"$exists": true}}})", ""}},
        R"([{"a": 1}, {"a": 2}])");
  Check({{R"({"body": "text"})", ""},
         {R"({"body": {"$prefix": "te"}})", ""},
         {R"({"body": {"a": 1}})", "body.a: missing"}},
        R"("text")");
}

TEST(FilterMatchTest, BodyThatIsNotJson) {
  Check({{R"({"body": {"livemode": true}})", "body: the body is not JSON"},
         {R"({"body": {"data": {"object": {"id": {"$prefix": "in_"}}}}})",
          "body: the body is not JSON"},
         {R"({"body": {"data": {"object": {"id": "in_123", "amount": 250}}}})",
          "body: the body is not JSON"},
         {R"({"body": {"data": {"object": {"id": {"$exists": false}, "n": {"$neq": 1}}}}})", ""},
         {R"({"body": {"$exists": true}})", "body: the body is not JSON"},
         {R"({"body": {"$exists": false}})", ""},
         {R"({"body": {"livemode": {"$exists": false}}})", ""},
         {R"({"body": {"livemode": {"$neq": true}}})", ""},
         {R"({"headers": {"content-type": "application/json"}})", ""},
         {R"({"headers": {"content-type": "application/json"}, "body": {"a": 1}})",
          "body: the body is not JSON"}},
        std::nullopt);
}

TEST(FilterMatchTest, HeadersMatchNamesCaseInsensitively) {
  Check({
      {R"({"headers": {"x-shop-domain": "acme.myshopify.com"}})", ""},
      {R"({"headers": {"X-SHOP-DOMAIN": "acme.myshopify.com"}})", ""},
      {R"({"headers": {"X-Shop-Domain": {"$suffix": ".myshopify.com"}}})", ""},
      // Values are compared exactly.
      {R"({"headers": {"x-shop-domain": "ACME.myshopify.com"}})",
       R"(headers.x-shop-domain: expected "ACME.myshopify.com", got "acme.myshopify.com")"},
      {R"({"headers": {"X-Missing": "1"}})", "headers.x-missing: missing"},
      {R"({"headers": {"X-Missing": {"$exists": false}}})", ""},
      {R"({"headers": {"X-Missing": {"$neq": "1"}}})", ""},
      {R"({"headers": {"content-type": {"$exists": false}}})",
       R"(headers.content-type: expected no such header, got "application/json")"},
      {R"({"headers": {"content-type": {"$prefix": "application/"}}})", ""},
      {R"({"headers": {"content-type": {"$contains": "json"}}})", ""},
      {R"({"headers": {"content-type": {"$contains": "xml"}}})",
       R"(headers.content-type: expected a string containing "xml", got "application/json")"},
      {R"({"headers": {"content-type": {"$in": ["text/plain", "application/json"]}}})", ""},
      {R"({"headers": {"content-type": {"$gte": "application/json", "$lt": "b"}}})", ""},
      {R"({"headers": {"content-type": {"$lt": "application"}}})",
       R"(headers.content-type: expected a value < "application", got "application/json")"},
  });
}

TEST(FilterMatchTest, RepeatedHeadersMatchWhenAnyFieldDoes) {
  Check({
      {R"({"headers": {"x-tag": "a"}})", ""},
      {R"({"headers": {"x-tag": "b"}})", ""},
      {R"({"headers": {"x-tag": "c"}})", R"(headers.x-tag: expected "c", got "a" (and 1 more))"},
      {R"({"headers": {"x-tag": {"$neq": "c"}}})", ""},
      {R"({"headers": {"x-tag": {"$neq": "b"}}})",
       R"(headers.x-tag: expected anything but "b", got "b")"},
      {R"({"headers": {"x-tag": {"$nin": ["c", "a"]}}})",
       R"(headers.x-tag: expected none of ["c", "a"], got "a")"},
      {R"({"headers": {"x-tag": {"$gt": "a"}}})", ""},
      {R"({"headers": {"x-tag": {"$not": {"$in": ["b"]}}}})",
       R"(headers.x-tag.$not: matched {"$in": ["b"]})"},
  });
}

TEST(FilterMatchTest, AndOrNotOnAField) {
  Check({
      {R"({"body": {"amount": {"$or": [{"$lt": 100}, {"$gt": 200}]}}})", ""},
      {R"({"body": {"amount": {"$or": [{"$lt": 100}, {"$gt": 300}]}}})",
       "body.amount.$or: no alternative matched (first: body.amount: expected a value < 100, got "
       "250)"},
      {R"({"body": {"amount": {"$or": [500, 250]}}})", ""},
      {R"({"body": {"amount": {"$and": [{"$gt": 100}, {"$lt": 300}]}}})", ""},
      {R"({"body": {"amount": {"$and": [{"$gt": 100}, {"$lt": 200}]}}})",
       "body.amount: expected a value < 200, got 250"},
      {R"({"body": {"currency": {"$not": "eur"}}})", ""},
      {R"({"body": {"currency": {"$not": {"$in": ["usd", "eur"]}}}})",
       R"(body.currency.$not: matched {"$in": ["usd", "eur"]})"},
      {R"({"body": {"nope": {"$not": {"$gt": 5}}}})", ""},
      {R"({"body": {"tags": {"$not": "vip"}}})", R"(body.tags.$not: matched "vip")"},
      {R"({"body": {"data": {"$or": [{"object": {"paid": false}}, {"object": {"amount": 250}}]}}})",
       ""},
      {R"({"body": {"data": {"$or": [{"object": {"paid": false}}, {"nope": 1}]}}})",
       "body.data.$or: no alternative matched (first: body.data.object.paid: expected false, got "
       "true)"},
      {R"({"body": {"$not": {"livemode": true}}})", ""},
      {R"({"body": {"$not": {"livemode": false}}})", R"(body.$not: matched {"livemode": false})"},
  });
}

TEST(FilterMatchTest, TopLevel) {
  Check({
      {"{}", ""},
      {R"({"headers": {"x-tag": "a"}, "body": {"livemode": false}})", ""},
      // The first condition that fails, in the document's order.
      {R"({"body": {"currency": "eur"}, "headers": {"x-nope": "1"}})",
       R"(body.currency: expected "eur", got "usd")"},
      {R"({"headers": {"x-nope": "1"}, "body": {"currency": "eur"}})", "headers.x-nope: missing"},
      {R"({"$and": [{"body": {"livemode": false}}, {"body": {"currency": "eur"}}]})",
       R"(body.currency: expected "eur", got "usd")"},
      {R"({"$or": [{"body": {"livemode": true}}, {"headers": {"x-tag": "b"}}]})", ""},
      {R"({"$or": [{"body": {"livemode": true}}, {"headers": {"x-nope": "a"}}]})",
       "$or: no alternative matched (first: body.livemode: expected true, got false)"},
      {R"({"$or": [{}, {"body": {"livemode": true}}]})", ""},
      {R"({"$not": {"body": {"livemode": true}}})", ""},
      {R"({"$not": {"body": {"livemode": false}}})",
       R"($not: matched {"body": {"livemode": false}})"},
      {R"({"$not": {}})", "$not: matched {}"},
      {R"({"$not": {"$not": {"body": {"currency": "usd"}}}})", ""},
      {R"({"headers": {"$or": [{"x-a": "1"}, {"x-tag": "b"}]}})", ""},
      {R"({"headers": {"$or": [{"x-a": "1"}, {"x-b": "2"}]}})",
       "headers.$or: no alternative matched (first: headers.x-a: missing)"},
      {R"({"headers": {"$not": {"x-tag": "a"}}})", R"(headers.$not: matched {"x-tag": "a"})"},
      {R"({"headers": {"$and": [{"x-tag": "a"}, {"x-tag": "b"}]}})", ""},
  });
}

TEST(FilterMatchTest, ReasonsCutLongValues) {
  // "n" is cut where its 60th byte is the first half of an "é".
  const std::string body = R"({"s": ")" + std::string(100, 'x') + R"(", "n": "caf)" +
                           std::string(55, 'e') + "\xc3\xa9\xc3\xa9\"}";
  Check({{R"({"body": {"s": "y"}})", R"(body.s: expected "y", got ")" + std::string(59, 'x') + "…"},
         // Never in the middle of a UTF-8 sequence.
         {R"({"body": {"n": "y"}})",
          R"(body.n: expected "y", got "caf)" + std::string(55, 'e') + "…"}},
        body);
}

TEST(FilterTest, MatchAllByDefault) {
  const Filter f;
  EXPECT_TRUE(f.Matches({}));
  EXPECT_TRUE(f.Match({}).matched);
  EXPECT_EQ(json::serialize(f.document()), "{}");
}

TEST(FilterTest, KeepsTheDocumentAndCopiesShareIt) {
  const std::string text = R"({"body":{"amount":{"$gte":1000}}})";
  const Filter f = MustParse(text);
  const Filter copy = f;
  EXPECT_EQ(json::serialize(copy.document()), text);
  EXPECT_EQ(&copy.document(), &f.document());
}

struct ErrorCase {
  std::string filter;
  std::string field;
  std::string message;
};

void CheckErrors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.filter);
    Result<Filter> f = Filter::Parse(json::parse(c.filter), "routes[2].filter");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(f.status().field(), c.field);
    EXPECT_EQ(f.status().message(), c.message);
  }
}

const std::string kUnknownOperator =
    "unknown operator (known: $eq, $neq, $in, $nin, $exists, $gt, $gte, $lt, $lte, $prefix, "
    "$suffix, $contains, $and, $or, $not)";

TEST(FilterParseTest, TopLevelErrors) {
  CheckErrors({
      {"[]", "routes[2].filter", R"(expects an object with "headers", "body", $and, $or or $not)"},
      {R"("body")", "routes[2].filter",
       R"(expects an object with "headers", "body", $and, $or or $not)"},
      {R"({"bdy": {"a": 1}})", "routes[2].filter.bdy",
       R"(unknown key (expected "headers", "body", $and, $or or $not))"},
      {R"({"Body": {"a": 1}})", "routes[2].filter.Body",
       R"(unknown key (expected "headers", "body", $and, $or or $not))"},
      {R"({"$regex": "x"})", "routes[2].filter.$regex", kUnknownOperator},
      {R"({"$eq": 1})", "routes[2].filter.$eq",
       R"(not allowed at the top level, which takes "headers", "body", $and, $or and $not)"},
      {R"({"body": {"a": 1}, "$or": [{}]})", "routes[2].filter",
       R"(mixes operators ($or) and fields ("body") in one object; put them in separate objects under $and)"},
      {R"({"$or": {}})", "routes[2].filter.$or", "expects a non-empty array"},
      {R"({"$or": []})", "routes[2].filter.$or", "expects a non-empty array"},
      {R"({"$and": [{}, 1]})", "routes[2].filter.$and[1]",
       R"(expects an object with "headers", "body", $and, $or or $not)"},
      {R"({"$not": {"bdy": 1}})", "routes[2].filter.$not.bdy",
       R"(unknown key (expected "headers", "body", $and, $or or $not))"},
      {R"({"$or": [{"body": {"a": {"$gt": true}}}]})", "routes[2].filter.$or[0].body.a.$gt",
       "expects a number or a string"},
  });
}

TEST(FilterParseTest, OperatorErrors) {
  CheckErrors({
      {R"({"body": {"$regex": "^a"}})", "routes[2].filter.body.$regex", kUnknownOperator},
      {R"({"body": {"a": {"$ne": 1}}})", "routes[2].filter.body.a.$ne", kUnknownOperator},
      {R"({"body": {"amount": {"$gt": true}}})", "routes[2].filter.body.amount.$gt",
       "expects a number or a string"},
      {R"({"body": {"amount": {"$gte": null}}})", "routes[2].filter.body.amount.$gte",
       "expects a number or a string"},
      {R"({"body": {"amount": {"$lt": [1]}}})", "routes[2].filter.body.amount.$lt",
       "expects a number or a string"},
      {R"({"body": {"amount": {"$lte": {}}}})", "routes[2].filter.body.amount.$lte",
       "expects a number or a string"},
      {R"({"body": {"a": {"$in": "x"}}})", "routes[2].filter.body.a.$in",
       "expects a non-empty array"},
      {R"({"body": {"a": {"$in": []}}})", "routes[2].filter.body.a.$in",
       "expects a non-empty array"},
      {R"({"body": {"a": {"$nin": {}}}})", "routes[2].filter.body.a.$nin",
       "expects a non-empty array"},
      {R"({"body": {"a": {"$exists": 1}}})", "routes[2].filter.body.a.$exists",
       "expects true or false"},
      {R"({"body": {"a": {"$exists": "true"}}})", "routes[2].filter.body.a.$exists",
       "expects true or false"},
      {R"({"body": {"a": {"$prefix": 1}}})", "routes[2].filter.body.a.$prefix", "expects a string"},
      {R"({"body": {"a": {"$suffix": null}}})", "routes[2].filter.body.a.$suffix",
       "expects a string"},
      {R"({"body": {"a": {"$and": []}}})", "routes[2].filter.body.a.$and",
       "expects a non-empty array"},
      {R"({"body": {"a": {"$or": {"$gt": 1}}}})", "routes[2].filter.body.a.$or",
       "expects a non-empty array"},
      {R"({"body": {"a": {"$or": [{"$gt": 1}, {"$foo": 1}]}}})",
       "routes[2].filter.body.a.$or[1].$foo", kUnknownOperator},
      {R"({"body": {"a": {"$not": {"$gt": false}}}})", "routes[2].filter.body.a.$not.$gt",
       "expects a number or a string"},
      {R"({"body": {"a": 1, "$gt": 2}})", "routes[2].filter.body",
       R"(mixes operators ($gt) and fields ("a") in one object; put them in separate objects under $and)"},
      {R"({"body": {"data": {"$exists": true, "object": {}}}})", "routes[2].filter.body.data",
       R"(mixes operators ($exists) and fields ("object") in one object; put them in separate objects under $and)"},
      {R"({"body": {"a": {}}})", "routes[2].filter.body.a",
       R"(an empty object matches nothing specific; use {"$exists": true}, or {"$eq": {}} for an empty object)"},
      {R"({"body": {}})", "routes[2].filter.body",
       R"(an empty object matches nothing specific; use {"$exists": true}, or {"$eq": {}} for an empty object)"},
  });
}

TEST(FilterParseTest, HeaderErrors) {
  const std::string string_only = "expects a string (header values are strings)";
  CheckErrors({
      {R"({"headers": []})", "routes[2].filter.headers", "expects an object of header names"},
      {R"({"headers": "x"})", "routes[2].filter.headers", "expects an object of header names"},
      {R"({"headers": {}})", "routes[2].filter.headers", "an empty object; name a header"},
      {R"({"headers": {"x shop": "a"}})", "routes[2].filter.headers.x shop",
       "not a valid header name"},
      {R"({"headers": {"x:shop": "a"}})", "routes[2].filter.headers.x:shop",
       "not a valid header name"},
      {R"({"headers": {"": "a"}})", "routes[2].filter.headers.", "not a valid header name"},
      {R"({"headers": {"$eq": "a"}})", "routes[2].filter.headers.$eq",
       R"(applies to one header: name it first ("x-event": {"$eq": …}))"},
      {R"({"headers": {"$foo": "a"}})", "routes[2].filter.headers.$foo", kUnknownOperator},
      {R"({"headers": {"x-a": "1", "$or": []}})", "routes[2].filter.headers",
       R"(mixes operators ($or) and fields ("x-a") in one object; put them in separate objects under $and)"},
      {R"({"headers": {"x-n": 5}})", "routes[2].filter.headers.x-n", string_only},
      {R"({"headers": {"x-n": true}})", "routes[2].filter.headers.x-n", string_only},
      {R"({"headers": {"x-n": ["a"]}})", "routes[2].filter.headers.x-n", string_only},
      {R"({"headers": {"x-n": {"$gt": 5}}})", "routes[2].filter.headers.x-n.$gt", string_only},
      {R"({"headers": {"x-n": {"$eq": null}}})", "routes[2].filter.headers.x-n.$eq", string_only},
      {R"({"headers": {"x-n": {"$neq": 1}}})", "routes[2].filter.headers.x-n.$neq", string_only},
      {R"({"headers": {"x-n": {"$contains": 1}}})", "routes[2].filter.headers.x-n.$contains",
       string_only},
      {R"({"headers": {"x-n": {"$in": ["a", 1]}}})", "routes[2].filter.headers.x-n.$in[1]",
       string_only},
      {R"({"headers": {"x-n": {"$or": ["a", 2]}}})", "routes[2].filter.headers.x-n.$or[1]",
       string_only},
      {R"({"headers": {"x-n": {"a": "b"}}})", "routes[2].filter.headers.x-n",
       R"(a header's value is a string, without fields; use an operator such as {"$eq": "…"})"},
      {R"({"headers": {"$or": [{"x-a": 1}]}})", "routes[2].filter.headers.$or[0].x-a", string_only},
  });
}

// {"body": {"a": {"a": … 1}}} with `levels` levels of objects in all (the top one is level 1).
std::string Nested(int levels) {
  std::string inner = "1";
  for (int i = 1; i < levels; ++i) inner = R"({"a": )" + inner + "}";
  return R"({"body": )" + inner + "}";
}

TEST(FilterParseTest, DepthLimit) {
  EXPECT_TRUE(Filter::Parse(json::parse(Nested(16)), "f").ok());
  // The first value at level 17 is body.a.….a (15 times).
  std::string path = "routes[2].filter.body";
  for (int i = 0; i < 15; ++i) path += ".a";
  // Arrays count too: $in's array is level 4, so 13 arrays inside it reach level 17.
  const auto in = [](int arrays) {
    return R"({"body": {"a": {"$in": )" + std::string(arrays, '[') + "1" +
           std::string(arrays, ']') + "}}}";
  };
  std::string in_path = "routes[2].filter.body.a.$in";
  for (int i = 0; i < 13; ++i) in_path += "[0]";
  CheckErrors({
      {Nested(17), path, "nested deeper than 16 levels"},
      {in(14), in_path, "nested deeper than 16 levels"},
  });
  EXPECT_TRUE(Filter::Parse(json::parse(in(13)), "f").ok());
}

TEST(FilterParseTest, DepthOfABuiltValueIsCheckedWithoutRecursingThroughIt) {
  // Deeper than any parser would let through: only a value built in code can be.
  json::value v = 1;
  for (int i = 0; i < 2000; ++i) {
    json::array a;
    a.emplace_back(std::move(v));
    v = std::move(a);
  }
  json::value doc = json::object{{"body", json::object{{"a", json::object{{"$eq", v}}}}}};
  Result<Filter> f = Filter::Parse(doc, "");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "nested deeper than 16 levels");
  std::string path = "body.a.$eq";  // level 4
  for (int i = 0; i < 13; ++i) path += "[0]";
  EXPECT_EQ(f.status().field(), path);
}

TEST(FilterParseTest, SizeLimit) {
  // {"body":{"s":"…"}} is 17 bytes around the string.
  const auto doc = [](size_t bytes) {
    return R"({"body": {"s": ")" + std::string(bytes - 17, 'x') + R"("}})";
  };
  ASSERT_EQ(json::serialize(json::parse(doc(16384))).size(), 16384u);
  EXPECT_TRUE(Filter::Parse(json::parse(doc(16384)), "routes[2].filter").ok());
  CheckErrors({{doc(16385), "routes[2].filter", "longer than 16384 bytes (16 KiB) as JSON"},
               {doc(1 << 20), "routes[2].filter", "longer than 16384 bytes (16 KiB) as JSON"}});
}

TEST(FilterParseTest, FieldMayBeEmpty) {
  Result<Filter> f = Filter::Parse(json::parse(R"({"body": {"$regex": 1}})"), "");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().field(), "body.$regex");
  Result<Filter> top = Filter::Parse(json::parse("1"), "");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().field(), "");
}

TEST(RenderTest, ShortJsonLikeText) {
  EXPECT_EQ(RenderValue(json::parse(R"({"a": [1, 2.5, -3, true, null], "b": "x\"y\n"})")),
            R"({"a": [1, 2.5, -3, true, null], "b": "x\"y\n"})");
  EXPECT_EQ(RenderValue(json::parse("1000.0")), "1000");
  EXPECT_EQ(RenderValue(json::parse("1e300")), "1e+300");
  EXPECT_EQ(RenderValue(json::parse("18446744073709551615")), "18446744073709551615");
  EXPECT_EQ(RenderValue(json::parse(R"("\u0001")")), R"("\u0001")");
  EXPECT_EQ(RenderValue(json::parse("[1, 2, 3]"), 4), "[1, …");
  EXPECT_EQ(RenderString("a\xff"), "\"a\xef\xbf\xbd\"");
  EXPECT_EQ(RenderText("a\"b"), "a\"b");
}

TEST(RouteRuleTest, TypesFirstThenFilter) {
  Result<RouteRule> rule = ParseRouteRule(
      json::parse(R"({"id": "r", "types": ["invoice.*"], "filter": {"body": {"livemode": true}}})")
          .as_object(),
      "routes[2]");
  ASSERT_TRUE(rule.ok()) << rule.status().ToString();
  const json::value body = json::parse(kBody);
  const MatchInput input{kHeaders, &body};

  Verdict v = rule->Match("customer.created", input);
  EXPECT_FALSE(v.matched);
  EXPECT_EQ(v.reason, "type customer.created is not in [invoice.*]");
  v = rule->Match(std::nullopt, input);
  EXPECT_EQ(v.reason, "the event has no type; the route wants [invoice.*]");
  v = rule->Match("invoice.paid", input);
  EXPECT_EQ(v.reason, "body.livemode: expected true, got false");
  EXPECT_FALSE(rule->Matches("invoice.paid", input));

  const json::value live = json::parse(R"({"livemode": true})");
  EXPECT_TRUE(rule->Match("invoice.paid", {kHeaders, &live}).matched);
  EXPECT_TRUE(rule->Matches("invoice.paid", {kHeaders, &live}));
}

TEST(RouteRuleTest, NeitherTypesNorFilterTakesEverything) {
  Result<RouteRule> rule =
      ParseRouteRule(json::parse(R"({"types": null, "filter": null})").as_object(), "");
  ASSERT_TRUE(rule.ok());
  EXPECT_FALSE(rule->filter.has_value());
  EXPECT_TRUE(rule->Matches(std::nullopt, {}));
  EXPECT_TRUE(rule->Match(std::nullopt, {}).matched);
}

TEST(RouteRuleTest, ErrorsArePrefixed) {
  Result<RouteRule> types =
      ParseRouteRule(json::parse(R"({"types": ["*.paid"]})").as_object(), "routes[2]");
  ASSERT_FALSE(types.ok());
  EXPECT_EQ(types.status().field(), "routes[2].types[0]");
  Result<RouteRule> filter = ParseRouteRule(
      json::parse(R"({"filter": {"body": {"amount": {"$gt": true}}}})").as_object(), "routes[2]");
  ASSERT_FALSE(filter.ok());
  EXPECT_EQ(filter.status().ToString(),
            "invalid_argument: routes[2].filter.body.amount.$gt: expects a number or a string");
}

}  // namespace
}  // namespace hookrelay::routing
