// Reading an enum-valued key: the message lists every valid spelling and suggests the closest.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/config/node.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {

// Required when fallback is empty, optional with that default otherwise.
template <class E>
[[nodiscard]] E read_enum(const ConfigNode& n, std::string_view key,
                          std::optional<E> (*parse)(std::string_view),
                          std::vector<std::string> (*valid)(),
                          std::type_identity_t<std::optional<E>> fallback = std::nullopt) {
  const std::optional<std::string> text =
      fallback ? n.optional<std::string>(key) : std::optional(n.require<std::string>(key));
  if (!text) return *fallback;
  if (auto e = parse(*text)) return *e;
  n.report(n.error_at(key, "expected one of " + join_alternatives(valid()) + ", got \"" + *text +
                               "\"" + did_you_mean(*text, valid())));
  const std::optional<E> stand_in = parse(valid().front());  // collecting: go on with it
  PF_ASSERT(stand_in.has_value());
  return *stand_in;
}

}  // namespace pathfinder
