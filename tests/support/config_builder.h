#pragma once

// Builds a hookrelay.toml for a test, so tests say what they configure instead of concatenating
// TOML text (and every string value is escaped, whatever it holds):
//
//   const std::string toml = testing::Config()
//                                .Set("delivery.poll_interval", "100ms")
//                                .Source("src")
//                                .Destination("d", sink.url("/hooks"), {{"max_concurrency", 4}})
//                                .Route("src", "d");
//
// Header-only; no dependency on the config loader (the text goes to the real binary, which parses
// it), so a test still checks what `hookrelay serve` makes of the file.

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hookrelay::testing {

// One TOML value, rendered when it is made: a string (escaped, in double quotes), an integer, a
// float, a boolean, an array (TomlArray) or an inline table (TomlInline).
class TomlValue {
 public:
  TomlValue(const char* s) : text_(Quote(s)) {}  // NOLINT: implicit on purpose
  TomlValue(std::string_view s) : text_(Quote(s)) {}
  TomlValue(const std::string& s) : text_(Quote(s)) {}
  TomlValue(bool b) : text_(b ? "true" : "false") {}
  TomlValue(int i) : text_(std::to_string(i)) {}
  TomlValue(int64_t i) : text_(std::to_string(i)) {}
  TomlValue(uint64_t i) : text_(std::to_string(i)) {}
  TomlValue(double d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    text_ = buf;
    if (text_.find_first_of(".eEn") == std::string::npos) text_ += ".0";  // a float stays one
  }

  // TOML written by hand, used as it is (a test of what the parser refuses, say).
  static TomlValue Raw(std::string text) {
    TomlValue v(0);
    v.text_ = std::move(text);
    return v;
  }

  const std::string& text() const { return text_; }

  // A basic string: ", \ and control characters escaped; everything else (UTF-8) as it is.
  static std::string Quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04X", u);
            out += buf;
          } else {
            out += c;
          }
      }
    }
    return out + "\"";
  }

  // A bare key when it may be one, else a quoted key.
  static std::string Key(std::string_view k) {
    bool bare = !k.empty();
    for (char c : k) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '-')) {
        bare = false;
      }
    }
    return bare ? std::string(k) : Quote(k);
  }

 private:
  std::string text_;
};

// Keys and values in the order written.
using TomlFields = std::vector<std::pair<std::string, TomlValue>>;

// `[a, b, c]`.
inline TomlValue TomlArray(std::initializer_list<TomlValue> items) {
  std::string text = "[";
  for (const TomlValue& v : items) text += (text.size() > 1 ? ", " : "") + v.text();
  return TomlValue::Raw(text + "]");
}

// `{ k = v, … }` (TOML's inline table: one line).
inline TomlValue TomlInline(const TomlFields& fields) {
  std::string text = "{";
  for (const auto& [k, v] : fields) {
    text += (text.size() > 1 ? ", " : " ") + TomlValue::Key(k) + " = " + v.text();
  }
  return TomlValue::Raw(text + (fields.empty() ? "}" : " }"));
}

// A whole config file. Copyable, so a test can build a base and vary it.
class Config {
 public:
  // Sets `key` in a table: "delivery.poll_interval" is `poll_interval` under `[delivery]`,
  // "a.b.c" is `c` under `[a.b]`, a key without a dot is a top-level key. Setting a key again
  // replaces its value (in place).
  Config& Set(std::string_view dotted_key, TomlValue value) {
    const size_t dot = dotted_key.rfind('.');
    const std::string table =
        dot == std::string_view::npos ? "" : std::string(dotted_key.substr(0, dot));
    const std::string key(dot == std::string_view::npos ? dotted_key : dotted_key.substr(dot + 1));
    TomlFields& fields = TableFields(table);
    for (auto& kv : fields) {
      if (kv.first == key) {
        kv.second = std::move(value);
        return *this;
      }
    }
    fields.emplace_back(key, std::move(value));
    return *this;
  }

  // Appends an entry to an array of tables (`[[name]]`), in the order added.
  Config& Add(std::string array, TomlFields fields) {
    entries_.push_back(Entry{std::move(array), std::move(fields)});
    return *this;
  }

  // `[[sources]]` with `name`, then `fields` (verify, limits, …).
  Config& Source(std::string name, TomlFields fields = {}) {
    fields.insert(fields.begin(), {"name", TomlValue(name)});
    return Add("sources", std::move(fields));
  }

  // `[[destinations]]` with `name`, `url`, `allow_private = true` (test sinks listen on
  // 127.0.0.1) unless `fields` sets allow_private itself, then `fields`.
  Config& Destination(std::string name, std::string url, TomlFields fields = {}) {
    bool sets_private = false;
    for (const auto& kv : fields) sets_private = sets_private || kv.first == "allow_private";
    TomlFields all{{"name", TomlValue(name)}, {"url", TomlValue(url)}};
    if (!sets_private) all.emplace_back("allow_private", true);
    for (auto& kv : fields) all.push_back(std::move(kv));
    return Add("destinations", std::move(all));
  }

  // `[[routes]]` from `source` to `destination`, then `fields`.
  Config& Route(std::string source, std::string destination, TomlFields fields = {}) {
    TomlFields all{{"source", TomlValue(source)}, {"destination", TomlValue(destination)}};
    for (auto& kv : fields) all.push_back(std::move(kv));
    return Add("routes", std::move(all));
  }

  // The file: top-level keys, then the tables in the order first set, then the arrays of
  // tables in the order added.
  std::string Toml() const {
    std::string out;
    for (const Table& t : tables_) {
      if (t.fields.empty()) continue;
      if (!t.name.empty()) out += (out.empty() ? "[" : "\n[") + t.name + "]\n";
      for (const auto& [k, v] : t.fields) out += TomlValue::Key(k) + " = " + v.text() + "\n";
    }
    for (const Entry& e : entries_) {
      out += (out.empty() ? "[[" : "\n[[") + e.array + "]]\n";
      for (const auto& [k, v] : e.fields) out += TomlValue::Key(k) + " = " + v.text() + "\n";
    }
    return out;
  }
  operator std::string() const { return Toml(); }  // NOLINT: implicit on purpose

 private:
  struct Table {
    std::string name;  // "" for the top level; dotted for a sub-table ("a.b")
    TomlFields fields;
  };
  struct Entry {
    std::string array;
    TomlFields fields;
  };

  TomlFields& TableFields(const std::string& name) {
    for (Table& t : tables_) {
      if (t.name == name) return t.fields;
    }
    if (name.empty()) {
      tables_.insert(tables_.begin(), Table{name, {}});  // top-level keys come first
      return tables_.front().fields;
    }
    tables_.push_back(Table{name, {}});
    return tables_.back().fields;
  }

  std::vector<Table> tables_;
  std::vector<Entry> entries_;
};

}  // namespace hookrelay::testing
