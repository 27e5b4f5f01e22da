// oneDNN format tags by grammar (FORMATS.md section 2), not by list:
//   tag   := part+        part := N? letter
// A letter without a number is the outer part of an axis, upper-case when the axis is blocked; a number
// then a lower-case letter is a block of that axis, several blocks of one axis nesting with the first
// written coarser (ABcd8b16a2b: b = B*16 + 8b*2 + 2b). Letter tags name axes (n c d h w for data, o i d h w
// for weights, g first for groups); the positional form names canonical positions (a = first logical axis).
// A tag becomes the same element order in our grammar (ABcd16a16b -> bs_fs_yx_bsv16_fsv16), so everything
// after parsing is shared with the OpenVINO names.
#include <cctype>
#include <string>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"

namespace clreorder {

namespace {

struct Part {
  int64_t block = 0;  // 0: outer part
  char letter = 0;    // as written
};

[[noreturn]] void bad_tag(const std::string& tag, const std::string& why) {
  throw Error("bad oneDNN format tag '" + tag + "': " + why);
}

// Letter tags: oneDNN's letter -> our axis letter, per kind.
char data_axis(char c) {
  switch (c) {
    case 'n': return 'b';
    case 'c': return 'f';
    case 'd': return 'z';
    case 'h': return 'y';
    case 'w': return 'x';
    default: return 0;
  }
}

char weights_axis(char c) {
  switch (c) {
    case 'g': return 'g';
    case 'o': return 'o';
    case 'i': return 'i';
    case 'd': return 'z';
    case 'h': return 'y';
    case 'w': return 'x';
    default: return 0;
  }
}

// The canonical data axes of a rank (as the OpenVINO grammar orders them): bf + the last spatial letters.
std::string data_axes_of_rank(size_t rank) {
  const std::string spatial = "vuwzyx";
  if (rank < 2 || rank - 2 > spatial.size()) return "";
  return "bf" + spatial.substr(spatial.size() - (rank - 2));
}

std::vector<Part> split_parts(const std::string& tag) {
  std::vector<Part> parts;
  for (size_t k = 0; k < tag.size();) {
    size_t digits = k;
    while (digits < tag.size() && std::isdigit(static_cast<unsigned char>(tag[digits]))) ++digits;
    if (digits == tag.size()) bad_tag(tag, "ends in a number without its axis letter");
    const char letter = tag[digits];
    if (!std::isalpha(static_cast<unsigned char>(letter))) bad_tag(tag, std::string("unexpected '") + letter + "'");
    Part p;
    p.letter = letter;
    if (digits > k) {
      const std::string n = tag.substr(k, digits - k);
      if (n.size() > 9 || std::stoll(n) < 1) bad_tag(tag, "block '" + n + letter + "' must be 1 to 999999999");
      if (!std::islower(static_cast<unsigned char>(letter)))
        bad_tag(tag, "block '" + n + letter + "' must name its axis in lower case");
      p.block = std::stoll(n);
    }
    parts.push_back(p);
    k = digits + 1;
  }
  return parts;
}

}  // namespace

bool looks_like_onednn_tag(const std::string& s) {
  if (s.empty() || s.find('_') != std::string::npos || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string onednn_tag_to_name(const std::string& tag) {
  if (!looks_like_onednn_tag(tag)) bad_tag(tag, "a tag is letters and block numbers, e.g. nChw16c or aBcd16b");
  const std::vector<Part> parts = split_parts(tag);
  std::string outer;  // outer letters, lower-cased, in order
  for (const Part& p : parts)
    if (!p.block) outer += static_cast<char>(std::tolower(static_cast<unsigned char>(p.letter)));
  // The positional form uses a..l and has an `a`; the letter form names axes.
  bool positional = outer.find('a') != std::string::npos;
  for (char c : outer) positional = positional && c >= 'a' && c <= 'l';
  std::string axes_of_letter(256, '\0');
  if (positional) {
    const std::string canon = data_axes_of_rank(outer.size());
    if (canon.empty()) bad_tag(tag, "positional tags have 2 to 8 axes, not " + std::to_string(outer.size()));
    for (size_t k = 0; k < canon.size(); ++k) axes_of_letter[static_cast<unsigned char>('a' + k)] = canon[k];
  } else {
    const bool weights = outer.find_first_of("oig") != std::string::npos;
    for (char c : outer) {
      const char a = weights ? weights_axis(c) : data_axis(c);
      if (!a)
        bad_tag(tag, std::string("letter '") + c + "' is not a " + (weights ? "weights (g o i d h w)" : "data (n c d h w)") +
                         " axis");
      axes_of_letter[static_cast<unsigned char>(c)] = a;
    }
  }
  // Outer parts first, in the tag's order; then the blocks, in the tag's order.
  std::string name, seen;
  bool plain_run = false;  // the last token is a run of unblocked letters ("yx"), which the next one joins
  for (const Part& p : parts) {
    if (p.block) continue;
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(p.letter)));
    const char axis = axes_of_letter[static_cast<unsigned char>(lower)];
    if (!axis) bad_tag(tag, std::string("letter '") + p.letter + "' is not an axis of this tag");
    if (seen.find(lower) != std::string::npos) bad_tag(tag, std::string("axis '") + lower + "' appears twice");
    seen += lower;
    bool blocked = false;
    for (const Part& b : parts) blocked = blocked || (b.block && b.letter == lower);
    const bool upper = std::isupper(static_cast<unsigned char>(p.letter));
    if (upper && !blocked) bad_tag(tag, std::string("'") + p.letter + "' is upper case but has no block");
    if (!upper && blocked) bad_tag(tag, std::string("'") + p.letter + "' has blocks, so it must be written '" +
                                          static_cast<char>(std::toupper(static_cast<unsigned char>(p.letter))) + "'");
    if (blocked) {
      name += std::string(name.empty() ? "" : "_") + axis + "s";
      plain_run = false;
    } else {
      name += std::string(name.empty() || plain_run ? "" : "_") + axis;
      plain_run = true;
    }
  }
  for (const Part& p : parts) {
    if (!p.block) continue;
    if (seen.find(p.letter) == std::string::npos)
      bad_tag(tag, "block '" + std::to_string(p.block) + p.letter + "' has no outer axis '" +
                       static_cast<char>(std::toupper(static_cast<unsigned char>(p.letter))) + "'");
    name += std::string("_") + axes_of_letter[static_cast<unsigned char>(p.letter)] + "sv" + std::to_string(p.block);
  }
  return name;
}

std::string onednn_tag(const Format& f, bool positional) {
  if (f.swizzle()) return "";
  for (const Dim& d : f.dims())
    if (d.axes.size() != 1 || d.align != 1) return "";
  std::string letter_of(256, '\0');
  for (int a = 0; a < f.rank(); ++a) {
    const char axis = f.axes()[static_cast<size_t>(a)];
    char l = 0;
    if (positional) {
      l = static_cast<char>('a' + a);
    } else {
      const std::string from = f.kind() == FormatKind::data ? "ncdhw" : "goidhw";
      for (char c : from)
        if ((f.kind() == FormatKind::data ? data_axis(c) : weights_axis(c)) == axis) l = c;
      if (!l) return "";  // v, u, w: no letter
    }
    letter_of[static_cast<unsigned char>(axis)] = l;
  }
  std::string outer, blocks;
  for (const Level& lv : f.levels()) {
    if (!lv.block && !blocks.empty()) return "";  // an outer part after a block: tags write blocks last
    const char axis = f.dims()[static_cast<size_t>(lv.dim)].axes[0];
    const char l = letter_of[static_cast<unsigned char>(axis)];
    if (lv.block) blocks += std::to_string(lv.block) + l;
    else outer += f.dim_is_sliced(lv.dim) ? static_cast<char>(std::toupper(static_cast<unsigned char>(l))) : l;
  }
  return outer + blocks;
}

}  // namespace clreorder
