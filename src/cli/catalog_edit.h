#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "common/result.h"

namespace hookrelay::cli {

// Registers the commands that change the catalog through the API:
//   sources add NAME [--verify SCHEME --secret S…] [--dedup-header H | --dedup-json F]
//                    [--max-body SIZE] [--spec JSON|@FILE]      POST /api/v1/sources
//   sources update NAME [the same flags]                        PATCH /api/v1/sources/NAME
//   sources rm NAME                                              DELETE
//   destinations add NAME (URL | --url URL) [--policy P] [--header "K: V"…] [--signing-secret S]
//                    [--max-concurrency N] [--rate-limit R] [--replay-window D]
//                    [--allow-private] [--client-cert F --client-key F] [--ca-file F]
//                    [--bearer T | --basic USER:PASS] [--spec JSON|@FILE]
//   destinations update NAME [--url URL] [the same flags] | destinations rm NAME
// (--url is the destination's URL; the API's address is --server. `update` still takes
// --endpoint, hidden, as another name of --url.)
//   routes rm ID (routes add, update and test: route_commands.h)
// Secret values may be given as @FILE (or @- for standard input) so they stay out of the shell
// history and the process list. `exit_code` is set after parsing.
void AddCatalogEditCommands(Command sources, Command destinations, Command routes, int& exit_code);

// The flags of `sources add|update`; empty means "not given".
struct SourceFlags {
  std::string spec;  // a whole source object (JSON or @FILE), the flags go over it
  std::string verify;
  std::vector<std::string> secrets;
  std::string dedup_header;
  std::string dedup_json;
  std::string max_body;
};

// The flags of `destinations add|update`.
struct DestinationFlags {
  std::string spec;
  std::string url;                   // the positional URL of `add`
  std::string url_flag;              // --url (add and update)
  std::string endpoint;              // --endpoint (update; the old name of --url, hidden)
  std::string policy;                // a preset name, or a policy JSON object
  std::vector<std::string> headers;  // "Name: value"
  std::string signing_secret;
  std::optional<int64_t> max_concurrency;
  std::string rate_limit;
  std::string replay_window;
  bool allow_private = false;
  std::string forward_headers;              // "all", "none" or "X-A,X-B"
  std::vector<std::string> secret_headers;  // header names whose values are shown redacted
  // PEM files, read here and sent as text (the server may not have them).
  std::string client_cert;
  std::string client_key;
  std::string ca_file;
  std::string bearer;             // a token, or @FILE
  std::string basic;              // "user:password", or @FILE
  std::string kind;               // "http" (the server's default) or "redis"
  std::string stream;             // kind redis: the stream's key
  std::optional<int64_t> maxlen;  // kind redis: approximate trimming
};

// "@FILE" is the file's contents without the trailing newline ("@-": standard input); anything
// else is itself. kInvalidArgument naming `flag` when the file cannot be read.
Result<std::string> ReadValueArg(const std::string& value, const std::string& flag);

// The JSON body for POST (update = false: `name` set) or PATCH (update = true: only what the
// flags give, as a merge patch). kInvalidArgument naming the flag for a bad --spec, --policy or
// --header, and for an update that changes nothing.
Result<boost::json::object> BuildSourceBody(const std::string& name, const SourceFlags& flags,
                                            bool update);
Result<boost::json::object> BuildDestinationBody(const std::string& name,
                                                 const DestinationFlags& flags, bool update);

}  // namespace hookrelay::cli
