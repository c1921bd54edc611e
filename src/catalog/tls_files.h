#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "common/result.h"

namespace hookrelay::catalog {

// Reads the files a destination's "tls" names into it, so that the catalog stores the PEM texts
// themselves: every node can then deliver, whether or not it has the files, and a file changed
// later changes nothing until the destination is written again (or, for the config file, until
// the next start).
//
// `destination` is a destination's JSON (a POST body, a PATCH, or a config file's table); values
// of "tls.client_cert" and "tls.client_key" that start with '@' name a file, and so does a value
// of "tls.ca_file" that holds no PEM text ("ca.pem" or "@ca.pem"). Anything else (inline PEM,
// null, no "tls") is left as it is, for model::ParseDestination to check. A relative path is
// resolved against `base_dir` (the config file's directory); with an empty `base_dir` (the API)
// a relative path is refused, since the server's working directory is nobody's to guess.
//
// Errors are kInvalidArgument naming the field ("tls.client_key"): a relative path without a
// base, a file that cannot be read (the path and the system's reason are said), not a regular
// file, or larger than 1 MiB. The file's contents are never quoted.
Status InlineTlsFiles(boost::json::value& destination, const std::string& base_dir);

}  // namespace hookrelay::catalog
