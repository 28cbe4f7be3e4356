#include "server/namespaced_schedule_cache.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ordo::server {

absl::Status CheckCacheNamespace(absl::string_view cache_namespace, absl::string_view what) {
  bool ok = cache_namespace.size() <= 64;
  for (char c : cache_namespace) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": a cache namespace is at most 64 characters of A-Z a-z 0-9 . _ -"));
}

std::string NamespacedScheduleCache::NamespacePrefix(absl::string_view cache_namespace) {
  return absl::StrCat("ns:", cache_namespace, "/");
}

absl::string_view NamespacedScheduleCache::NamespaceOfKey(absl::string_view key) {
  if (!absl::ConsumePrefix(&key, "ns:")) return "";
  const size_t slash = key.find('/');
  return slash == absl::string_view::npos ? "" : key.substr(0, slash);
}

}  // namespace ordo::server
