#include "sim/herd_report.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/units.h"

namespace hookrelay::sim {
namespace {

namespace json = boost::json;

Duration DrainOf(const HerdResult& r) {
  return Duration(static_cast<int64_t>(std::llround(r.drain_seconds * 1000.0)));
}

std::string DescribeScenario(const HerdScenario& s) {
  return std::to_string(s.events) + (s.events == 1 ? " event" : " events") + " failing within " +
         FormatDuration(s.fail_window) + "; the endpoint is down until " +
         FormatDuration(s.recover_at) + ", then serves " +
         FormatRate(static_cast<double>(s.capacity_per_second)) + "; seed " +
         std::to_string(s.seed);
}

std::string XmlEscape(std::string_view in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// A tick step for [0, range] giving at most `max_ticks` ticks: 1, 2 or 5 times a power of ten.
int64_t NiceStep(int64_t range, int64_t max_ticks) {
  int64_t step = 1;
  while (true) {
    for (int64_t m : {1, 2, 5}) {
      if (range / (step * m) <= max_ticks) return step * m;
    }
    step *= 10;
  }
}

// The same for seconds, on the clock's steps (10 s, 1 m, 5 m, 1 h, …).
int64_t NiceTimeStep(int64_t range_s, int64_t max_ticks) {
  for (int64_t step : {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                       43200, 86400}) {
    if (range_s / step <= max_ticks) return step;
  }
  return 86400 * NiceStep(range_s / 86400 + 1, max_ticks);
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

}  // namespace

json::object HerdToJson(const HerdScenario& scenario, const std::vector<HerdStrategy>& strategies,
                        const std::vector<HerdResult>& results) {
  json::object doc;
  json::object s;
  s["events"] = scenario.events;
  s["fail_window"] = FormatDuration(scenario.fail_window);
  s["recover_at"] = FormatDuration(scenario.recover_at);
  s["capacity"] = FormatRate(static_cast<double>(scenario.capacity_per_second));
  s["capacity_per_second"] = scenario.capacity_per_second;
  s["seed"] = scenario.seed;
  doc["scenario"] = std::move(s);
  json::array list;
  for (size_t i = 0; i < results.size(); ++i) {
    const HerdResult& r = results[i];
    json::object o;
    o["strategy"] = r.strategy;
    if (i < strategies.size()) o["policy"] = policy::PolicyToJson(strategies[i].policy);
    o["peak_per_second"] = r.peak_per_second;
    o["p99_per_second"] = r.p99_per_second;
    o["requests"] = r.requests;
    o["failed_requests"] = r.failed_requests;
    o["delivered"] = r.delivered;
    o["exhausted"] = r.exhausted;
    o["drain_seconds"] = r.drain_seconds;
    o["peak_failures_per_second"] = r.peak_failures_per_second;
    json::array series;
    series.reserve(r.arrivals.size());
    for (const auto& [second, count] : r.arrivals) series.push_back(json::array{second, count});
    o["arrivals_per_second"] = std::move(series);
    list.push_back(std::move(o));
  }
  doc["strategies"] = std::move(list);
  return doc;
}

std::string HerdTable(const HerdScenario& scenario, const std::vector<HerdResult>& results,
                      size_t width) {
  width = std::max<size_t>(width, 72);
  // The figures take 64 columns after the name (" %7s %6s %9s %9s %9s %9s %8s").
  constexpr size_t kFigures = 64;
  const size_t name_room = width - kFigures;
  size_t name_width = 8;
  for (const HerdResult& r : results) {
    if (r.strategy.size() <= name_room) name_width = std::max(name_width, r.strategy.size());
  }
  std::ostringstream out;
  // The prose, wrapped at spaces to the width.
  auto wrap = [&](const std::string& text) {
    std::istringstream words(text);
    std::string word;
    size_t used = 0;
    while (words >> word) {
      if (used > 0 && used + 1 + word.size() > width) {
        out << "\n";
        used = 0;
      }
      if (used > 0) {
        out << " ";
        ++used;
      }
      out << word;
      used += word.size();
    }
    out << "\n";
  };
  wrap("Scenario: " + std::to_string(scenario.events) +
       (scenario.events == 1 ? " event fails" : " events fail") + " within " +
       FormatDuration(scenario.fail_window) + "; the endpoint is down until " +
       FormatDuration(scenario.recover_at) + ", then serves " +
       FormatRate(static_cast<double>(scenario.capacity_per_second)) +
       " (503 for the rest, no Retry-After). Seed " + std::to_string(scenario.seed) + ".");
  wrap(
      "Per second: requests at the endpoint from the recovery on (p99 over the seconds with any "
      "request). Drain: from the recovery to the last event's outcome.");
  out << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-*s %7s %6s %9s %9s %9s %9s %8s\n",
                static_cast<int>(name_width), "strategy", "peak/s", "p99/s", "requests", "failed",
                "delivered", "exhausted", "drain");
  out << line;
  for (const HerdResult& r : results) {
    const bool own_line = r.strategy.size() > name_width;
    if (own_line) out << r.strategy << "\n";
    std::snprintf(line, sizeof line, "%-*s %7lld %6lld %9lld %9lld %9lld %9lld %8s\n",
                  static_cast<int>(name_width), own_line ? "" : r.strategy.c_str(),
                  static_cast<long long>(r.peak_per_second),
                  static_cast<long long>(r.p99_per_second), static_cast<long long>(r.requests),
                  static_cast<long long>(r.failed_requests), static_cast<long long>(r.delivered),
                  static_cast<long long>(r.exhausted), FormatDurationRounded(DrainOf(r)).c_str());
    out << line;
  }
  return out.str();
}

std::string HerdSvg(const HerdScenario& scenario, const std::vector<HerdResult>& results) {
  constexpr double kWidth = 960, kHeight = 540;
  constexpr double kLeft = 80, kRight = 190, kTop = 78, kBottom = 62;
  constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
  constexpr int64_t kMaxPoints = 600;

  const int64_t recover_s = scenario.recover_at.count() / 1000;
  const int64_t limit_s = recover_s + 3600;
  int64_t last_s = recover_s + 60;
  std::vector<std::string> cut;  // strategies with requests past the chart's end
  for (const HerdResult& r : results) {
    if (r.arrivals.empty()) continue;
    last_s = std::max(last_s, std::min(r.arrivals.back().first, limit_s));
    if (r.arrivals.back().first > limit_s) cut.push_back(r.strategy);
  }
  const int64_t span_s = last_s + 1;
  const int64_t bucket_s = (span_s + kMaxPoints - 1) / kMaxPoints;
  const int64_t buckets = (span_s + bucket_s - 1) / bucket_s;

  std::vector<std::vector<int64_t>> series;
  int64_t y_max = scenario.capacity_per_second;
  for (const HerdResult& r : results) {
    std::vector<int64_t> v(static_cast<size_t>(buckets), 0);
    for (const auto& [second, count] : r.arrivals) {
      if (second >= span_s) break;
      int64_t& cell = v[static_cast<size_t>(second / bucket_s)];
      cell = std::max(cell, count);
      y_max = std::max(y_max, count);
    }
    series.push_back(std::move(v));
  }
  const int64_t y_step = NiceStep(y_max, 8);
  const int64_t y_top = (y_max / y_step + 1) * y_step;
  const int64_t x_step = NiceTimeStep(span_s, 12);
  auto X = [&](double s) { return kLeft + kPlotW * s / static_cast<double>(span_s); };
  auto Y = [&](double v) { return kTop + kPlotH * (1.0 - v / static_cast<double>(y_top)); };

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text class=\"title\" x=\"" << kLeft << "\" y=\"26\" font-size=\"17\" font-weight=\"bold\">"
    << "Requests per second at a recovering endpoint, by retry policy</text>\n"
    << "<text x=\"" << kLeft << "\" y=\"46\" fill=\"#444\">"
    << XmlEscape(DescribeScenario(scenario)) << "</text>\n";
  if (!cut.empty()) {
    std::string names;
    for (size_t i = 0; i < cut.size(); ++i) names += (i ? ", " : "") + cut[i];
    o << "<text x=\"" << kLeft << "\" y=\"64\" fill=\"#444\">Not shown: requests after "
      << FormatDuration(std::chrono::seconds(span_s)) << " (" << XmlEscape(names)
      << "); see the table</text>\n";
  }
  // Grid and ticks.
  o << "<g class=\"axes\" stroke=\"#ccc\" stroke-width=\"1\">\n";
  for (int64_t v = 0; v <= y_top; v += y_step) {
    o << "<line x1=\"" << Num(kLeft) << "\" y1=\"" << Num(Y(v)) << "\" x2=\"" << Num(kLeft + kPlotW)
      << "\" y2=\"" << Num(Y(v)) << "\"/>\n";
  }
  for (int64_t s = 0; s <= span_s; s += x_step) {
    o << "<line x1=\"" << Num(X(s)) << "\" y1=\"" << Num(kTop + kPlotH) << "\" x2=\"" << Num(X(s))
      << "\" y2=\"" << Num(kTop + kPlotH + 5) << "\"/>\n";
  }
  o << "</g>\n<g class=\"ticks\" fill=\"#222\">\n";
  for (int64_t v = 0; v <= y_top; v += y_step) {
    o << "<text x=\"" << Num(kLeft - 8) << "\" y=\"" << Num(Y(v) + 4) << "\" text-anchor=\"end\">"
      << v << "</text>\n";
  }
  for (int64_t s = 0; s <= span_s; s += x_step) {
    o << "<text x=\"" << Num(X(s)) << "\" y=\"" << Num(kTop + kPlotH + 20)
      << "\" text-anchor=\"middle\">" << FormatDuration(std::chrono::seconds(s)) << "</text>\n";
  }
  o << "</g>\n";
  o << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\""
    << kTop + kPlotH << "\" stroke=\"#222\"/>\n"
    << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + kPlotH << "\" x2=\"" << kLeft + kPlotW
    << "\" y2=\"" << kTop + kPlotH << "\" stroke=\"#222\"/>\n";
  o << "<text x=\"" << Num(kLeft + kPlotW / 2) << "\" y=\"" << Num(kHeight - 14)
    << "\" text-anchor=\"middle\">time since the outage began</text>\n";
  const std::string y_label =
      bucket_s == 1 ? std::string("requests per second")
                    : "requests per second (highest in each " + std::to_string(bucket_s) + " s)";
  o << "<text transform=\"translate(22," << Num(kTop + kPlotH / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">" << y_label << "</text>\n";
  // The outage (shaded), the recovery and the capacity.
  const double outage_w = X(recover_s) - kLeft;
  o << "<rect class=\"outage\" x=\"" << Num(kLeft) << "\" y=\"" << kTop << "\" width=\""
    << Num(outage_w) << "\" height=\"" << kPlotH << "\" fill=\"#f2f2f2\"/>\n"
    << "<text x=\"" << Num(kLeft + 4) << "\" y=\"" << Num(kTop + 28) << "\" fill=\"#666\">"
    << (outage_w > 170 ? "down: every attempt fails" : "down") << "</text>\n";
  // The recovery and the capacity.
  o << "<line class=\"recovery\" x1=\"" << Num(X(recover_s)) << "\" y1=\"" << kTop << "\" x2=\""
    << Num(X(recover_s)) << "\" y2=\"" << kTop + kPlotH
    << "\" stroke=\"#666\" stroke-dasharray=\"2,3\"/>\n"
    << "<text x=\"" << Num(X(recover_s) + 4) << "\" y=\"" << Num(kTop + 12)
    << "\" fill=\"#444\">recovery</text>\n";
  o << "<line class=\"capacity\" x1=\"" << kLeft << "\" y1=\""
    << Num(Y(scenario.capacity_per_second)) << "\" x2=\"" << kLeft + kPlotW << "\" y2=\""
    << Num(Y(scenario.capacity_per_second))
    << "\" stroke=\"#000\" stroke-width=\"1.5\" stroke-dasharray=\"8,5\"/>\n"
    << "<text x=\"" << Num(kLeft + kPlotW - 4) << "\" y=\""
    << Num(Y(scenario.capacity_per_second) - 5) << "\" text-anchor=\"end\">capacity "
    << FormatRate(static_cast<double>(scenario.capacity_per_second)) << "</text>\n";
  // One line per strategy, and the legend.
  o << "<text x=\"" << Num(kLeft + kPlotW + 16) << "\" y=\"" << Num(kTop - 8)
    << "\" fill=\"#444\">(peak/s after recovery)</text>\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    o << "<polyline class=\"strategy\" data-strategy=\"" << XmlEscape(results[i].strategy)
      << "\" fill=\"none\" stroke=\"" << color
      << "\" stroke-width=\"1.6\" stroke-opacity=\"0.85\" points=\"";
    for (int64_t b = 0; b < buckets; ++b) {
      if (b) o << ' ';
      o << Num(X(static_cast<double>(b * bucket_s))) << ','
        << Num(Y(static_cast<double>(series[i][static_cast<size_t>(b)])));
    }
    o << "\"/>\n";
    const double ly = kTop + 8 + 20.0 * static_cast<double>(i);
    const double lx = kLeft + kPlotW + 16;
    o << "<line x1=\"" << Num(lx) << "\" y1=\"" << Num(ly) << "\" x2=\"" << Num(lx + 24)
      << "\" y2=\"" << Num(ly) << "\" stroke=\"" << color << "\" stroke-width=\"3\"/>\n"
      << "<text x=\"" << Num(lx + 30) << "\" y=\"" << Num(ly + 4) << "\">"
      << XmlEscape(results[i].strategy) << " (" << results[i].peak_per_second << ")</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace hookrelay::sim
