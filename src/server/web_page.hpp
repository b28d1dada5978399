// The web chat page served at "/" (src/server/web/index.html, embedded at build time).
#pragma once
#include <string_view>

namespace minnow::server {
std::string_view web_page_html();
}
