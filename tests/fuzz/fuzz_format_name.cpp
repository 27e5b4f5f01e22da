// libFuzzer target: format names. Any text either parses or throws clreorder::Error (nothing else escapes,
// nothing crashes); a parsed format prints a name that parses back to the same element order; and its plan on a
// small shape is a bijection between logical coordinates and the layout's slots.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/layout.hpp"
#include "fuzz_support.hpp"
#include "plan_checks.hpp"

using namespace clreorder;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Format f;
  try {
    f = format_from_name(text);
  } catch (const Error&) {
    return 0;
  }
  const Format again = Format::parse(f.name());
  fuzz_require(again == f, "name() does not parse back to the same format: " + text + " -> " + f.name());
  Dims dims;
  for (int a = 0; a < f.rank(); ++a) dims.push_back(1 + static_cast<int64_t>(a < static_cast<int>(size) ? data[a] % 3 : 0));
  try {
    const Layout l(f, DataType::u8, dims);
    if (l.elements() <= 1 << 16) {
      const std::string why = clreorder_test::plan_bijection_error(l);
      fuzz_require(why.empty(), "plan of " + text + " " + l.describe() + ": " + why);
    }
  } catch (const Error&) {
    // a layout may still be too large (blocks and alignments up to 2^31): refused with a message, fine
  }
  return 0;
}
