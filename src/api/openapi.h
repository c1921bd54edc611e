#pragma once

#include <string_view>

namespace hookrelay::api {

// The OpenAPI 3.1 document served at GET /api/v1/openapi.json. It describes exactly the routes
// of ApiRoutes() (a test holds the two together). The document is data, src/api/openapi.json,
// embedded at build time (cmake/embed_text.cmake generates its definition); edit that file.
std::string_view OpenApiDocument();

}  // namespace hookrelay::api
