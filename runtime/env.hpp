// Internal: environment variables read as values.
#pragma once

#include <cstdlib>
#include <string>

namespace clreorder {

// The variable's value, "" when it is unset.
inline std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace clreorder
