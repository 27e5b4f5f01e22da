// The format grammar: OpenVINO-style names -> Format, and Format -> canonical name.
//   name    := body ("_swizzled_by_" N)? ("__a" axis N)*
//   body    := token ("_" token)*
//   token   := axes            plain letters, each the whole (or outer part) of one axis: "yx", "oiyx"
//            | axes "s"        the outer part (slice) of a blocked dim: "fs", "yxs" (y and x fused)
//            | axes "s" ("v"|"a") N   a block of that dim: "fsv16", "osa4", "yxsv4"
// Several blocks of one dim split it mixed-radix, the first written being the coarser digit.
#include "clreorder/format.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "clreorder/error.hpp"

namespace clreorder {

namespace {

constexpr const char* kAxisLetters = "bfvuwzyxoig";

bool is_axis_letter(char c) { return c != '\0' && std::string(kAxisLetters).find(c) != std::string::npos; }

bool all_axis_letters(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_axis_letter);
}

// At most `digits` of them, so std::stoll cannot overflow; alignments take 10, since several suffixes on one
// axis multiply up to 2^31 and name() writes their product as one (2147483648 has 10 digits).
bool all_digits(const std::string& s, size_t digits = 9) {
  return !s.empty() && s.size() <= digits && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); });
}

[[noreturn]] void fail(const std::string& name, const std::string& why) {
  throw Error("bad format name '" + name + "': " + why);
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) return out;
    pos = next + sep.size();
  }
}

// Canonical axis order for the set of letters used: returns "" when the set is not a valid kind.
std::string canonical_axes(const std::string& used, FormatKind* kind) {
  auto has = [&](char c) { return used.find(c) != std::string::npos; };
  std::string spatial_pool, head;
  if (has('g')) {
    *kind = FormatKind::grouped_weights;
    head = "goi";
    spatial_pool = "zyx";
  } else if (has('o') || has('i')) {
    *kind = FormatKind::weights;
    head = "oi";
    spatial_pool = "zyx";
  } else {
    *kind = FormatKind::data;
    head = "bf";
    spatial_pool = "vuwzyx";
  }
  size_t n_spatial = used.size() >= head.size() ? used.size() - head.size() : 0;
  if (n_spatial > spatial_pool.size()) return "";
  std::string canon = head + spatial_pool.substr(spatial_pool.size() - n_spatial);
  std::string a = used, b = canon;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b ? canon : "";
}

// Blocks and alignments of one dim may multiply to at most this (2^31): far above any real block, and far
// enough below int64 that every product the layouts form from them stays exact.
constexpr int64_t kMaxTile = int64_t(1) << 31;

// Product of the blocks of `dim`; finish() has checked that it is at most kMaxTile.
int64_t product_of_blocks(const std::vector<Level>& levels, int dim) {
  int64_t p = 1;
  for (const Level& l : levels)
    if (l.dim == dim && l.block > 0) p *= l.block;
  return p;
}

}  // namespace

const char* to_string(FormatKind kind) {
  switch (kind) {
    case FormatKind::data: return "data";
    case FormatKind::weights: return "weights";
    case FormatKind::grouped_weights: return "grouped_weights";
  }
  return "?";
}

Format Format::parse(const std::string& name) {
  if (name.empty()) throw Error("bad format name '': empty");
  if (name.compare(0, 4, "tpu_") == 0) return parse_tpu(name);
  Format f;
  std::vector<std::string> parts = split(name, "__");
  std::string body = parts[0];
  const std::string kSwizzle = "_swizzled_by_";
  size_t sw = body.find(kSwizzle);
  if (sw != std::string::npos) {
    std::string n = body.substr(sw + kSwizzle.size());
    if (!all_digits(n) || std::stoll(n) < 2) fail(name, "swizzle factor '" + n + "' is not an integer >= 2");
    f.swizzle_ = std::stoll(n);
    body = body.substr(0, sw);
  }

  std::map<std::string, int> dim_index;
  auto dim_for = [&](const std::string& axes) {
    auto it = dim_index.find(axes);
    if (it != dim_index.end()) return it->second;
    int idx = static_cast<int>(f.dims_.size());
    f.dims_.push_back(Dim{axes, 1});
    dim_index[axes] = idx;
    return idx;
  };

  std::vector<bool> written_slice;  // parallel to levels_: outer part written as "Xs"
  for (const std::string& tok : split(body, "_")) {
    if (tok.empty()) fail(name, "empty part between '_'");
    size_t s = tok.find('s');
    if (s == std::string::npos) {
      if (!all_axis_letters(tok)) fail(name, "unknown part '" + tok + "'");
      for (size_t k = 0; k < tok.size(); ++k) {
        f.levels_.push_back(Level{dim_for(std::string(1, tok[k])), 0, 'v', k == 0});
        written_slice.push_back(false);
      }
      continue;
    }
    std::string axes = tok.substr(0, s), rest = tok.substr(s + 1);
    if (!all_axis_letters(axes)) fail(name, "unknown part '" + tok + "'");
    if (rest.empty()) {
      f.levels_.push_back(Level{dim_for(axes), 0, 'v', true});
      written_slice.push_back(true);
      continue;
    }
    char tag = rest[0];
    std::string n = rest.substr(1);
    if ((tag != 'v' && tag != 'a') || !all_digits(n)) fail(name, "unknown part '" + tok + "'");
    int64_t block = std::stoll(n);
    if (block < 1) fail(name, "block '" + tok + "' must be at least 1");
    f.levels_.push_back(Level{dim_for(axes), block, tag, true});
    written_slice.push_back(false);
  }

  // The outer part of a blocked or fused dim is written as a slice ("fs", "yxs") and that of any other dim
  // as a plain letter: this keeps names unambiguous, so parse(name).name() == name.
  for (size_t k = 0; k < f.levels_.size(); ++k) {
    const Level& l = f.levels_[k];
    if (l.block) continue;
    const std::string& axes = f.dims_[l.dim].axes;
    bool needs_slice = f.dim_is_sliced(l.dim);
    if (needs_slice && !written_slice[k]) fail(name, "blocked axis '" + axes + "' must be written '" + axes + "s'");
    if (!needs_slice && written_slice[k]) fail(name, "slice '" + axes + "s' has no block '" + axes + "sv<N>'");
  }

  for (size_t k = 1; k < parts.size(); ++k) {
    const std::string& p = parts[k];
    if (p.size() < 3 || p[0] != 'a' || !is_axis_letter(p[1]) || !all_digits(p.substr(2), 10))
      fail(name, "unknown alignment suffix '__" + p + "' (expected e.g. __ai32)");
    int d = -1;
    for (size_t i = 0; i < f.dims_.size(); ++i)
      if (f.dims_[i].axes.find(p[1]) != std::string::npos) d = static_cast<int>(i);
    if (d < 0) fail(name, "alignment '__" + p + "' names axis '" + p.substr(1, 1) + "' that the format lacks");
    int64_t a = std::stoll(p.substr(2));
    if (a < 1) fail(name, "alignment '__" + p + "' must be at least 1");
    if (a > kMaxTile / f.dims_[d].align)
      fail(name, "alignment '__" + p + "' makes axis '" + f.dims_[d].axes + "' aligned to more than 2^31");
    f.dims_[d].align *= a;
  }
  f.finish(name);
  return f;
}

void Format::finish(const std::string& name) {
  std::string used;
  for (const Dim& d : dims_) {
    for (char c : d.axes) {
      if (used.find(c) != std::string::npos) fail(name, std::string("axis '") + c + "' appears twice");
      used += c;
    }
  }
  axes_ = canonical_axes(used, &kind_);
  if (axes_.empty())
    fail(name, "axes '" + used + "' are not a data (b,f,[v,u,w,z],y,x), weights (o,i,[z],y,x) or grouped "
               "weights (g,o,i,[z],y,x) set");
  if (kind_ == FormatKind::data && rank() < 2) fail(name, "a data format needs at least b and f");
  for (int d = 0; d < static_cast<int>(dims_.size()); ++d) {
    int64_t tile = 1;
    for (const Level& l : levels_) {
      if (l.dim != d || !l.block) continue;
      if (l.block > kMaxTile / tile)
        fail(name, "the blocks of axis '" + dims_[d].axes + "' multiply to more than 2^31 (at block " +
                       std::to_string(l.block) + ")");
      tile *= l.block;
    }
  }

  for (int d = 0; d < static_cast<int>(dims_.size()); ++d) {
    const std::string& axes = dims_[d].axes;
    int outer = 0;
    bool seen_outer = false, block_before_outer = false;
    for (const Level& l : levels_) {
      if (l.dim != d) continue;
      if (l.block == 0) {
        ++outer;
        seen_outer = true;
      } else if (!seen_outer) {
        block_before_outer = true;
      }
    }
    if (outer == 0) fail(name, "axis '" + axes + "' has blocks but no outer part '" + axes + "s'");
    if (outer > 1) fail(name, "axis '" + axes + "' appears twice");
    if (block_before_outer) fail(name, "a block of '" + axes + "' comes before its outer part '" + axes + "s'");
    if (axes.size() > 1) {
      std::string canon_sub;
      for (char c : axes_)
        if (axes.find(c) != std::string::npos) canon_sub += c;
      if (canon_sub != axes) fail(name, "fused axes '" + axes + "' must be in canonical order '" + canon_sub + "'");
    }
  }

  if (swizzle_) {
    if (axes_.find('o') == std::string::npos) fail(name, "_swizzled_by_ needs an o axis");
    int d = dim_of_axis(static_cast<int>(axes_.find('o')));
    int64_t tile = product_of_blocks(levels_, d);
    if (tile % swizzle_ != 0)
      fail(name, "swizzle factor " + std::to_string(swizzle_) + " does not divide the o tile " + std::to_string(tile));
  }

  // Digits: blocks of a dim are mixed-radix digits, first written = coarser.
  digits_.clear();
  for (const Level& l : levels_) {
    int64_t finer = 1;
    bool after = false;
    for (const Level& m : levels_) {
      if (&m == &l) after = true;
      else if (after && m.dim == l.dim && m.block) finer *= m.block;
    }
    if (l.block == 0) finer = product_of_blocks(levels_, l.dim);
    digits_.push_back(Digit{l.dim, finer, l.block});
  }

  // A swizzle by N of the o tile of size P maps t = o % P = q*N + r to r*(P/N) + q; the written blocks
  // split the swizzled index. Refine both radix systems so each written block becomes one or more digits
  // of the plain o index.
  if (swizzle_) {
    int od = dim_of_axis(static_cast<int>(axes_.find('o')));
    int64_t tile = product_of_blocks(levels_, od), n = swizzle_, hi = tile / n;
    std::vector<Digit> out;
    for (const Digit& g : digits_) {
      if (g.dim != od || g.extent == 0) {
        out.push_back(g);
        continue;
      }
      // A block digit of the swizzled index is a digit of o only where its bounds meet the split at hi = P/N
      // exactly: each bound divides hi or is a multiple of it (tile 6 by 2 splits at 3, against bounds 2 and 6,
      // and would give a plan that maps two o values to one slot).
      std::vector<int64_t> bounds = {g.divisor, g.divisor * g.extent};
      for (int64_t b : bounds)
        if (b % hi != 0 && hi % b != 0)
          fail(name, "swizzle by " + std::to_string(n) + " splits the o tile " + std::to_string(tile) + " at " +
                         std::to_string(hi) + ", which the o block bound " + std::to_string(b) + " does not align with");
      if (hi > g.divisor && hi < g.divisor * g.extent) bounds.insert(bounds.begin() + 1, hi);
      for (size_t b = bounds.size() - 1; b > 0; --b) {
        int64_t lo_w = bounds[b - 1], hi_w = bounds[b], ext = hi_w / lo_w;
        if (lo_w >= hi) {
          out.push_back(Digit{od, lo_w / hi, ext});
        } else {
          out.push_back(Digit{od, n * lo_w, ext});
        }
      }
    }
    digits_ = out;
  }
}

bool Format::dim_is_sliced(int dim) const {
  if (dims_[dim].axes.size() > 1) return true;
  return std::any_of(levels_.begin(), levels_.end(), [&](const Level& l) { return l.dim == dim && l.block; });
}

int Format::dim_of_axis(int axis) const {
  if (axis < 0 || axis >= rank()) return -1;
  char c = axes_[axis];
  for (size_t d = 0; d < dims_.size(); ++d)
    if (dims_[d].axes.find(c) != std::string::npos) return static_cast<int>(d);
  return -1;
}

std::string Format::name() const {
  if (const TpuPlacement* t = tpu()) {
    std::string out = "tpu_" + t->rule + "(npus=" + std::to_string(t->npus) + ",npu_bytes=" + std::to_string(t->npu_bytes) +
                      ",addr=" + std::to_string(t->addr);
    if (!t->strides.empty()) {
      out += ",strides=";
      for (size_t k = 0; k < t->strides.size(); ++k) out += (k ? ":" : "") + std::to_string(t->strides[k]);
    }
    if (t->w) out += ",w=" + std::to_string(t->w);
    if (!t->mode.empty()) out += ",mode=" + t->mode;
    return out + ")";
  }
  std::string out;
  for (size_t k = 0; k < levels_.size(); ++k) {
    const Level& l = levels_[k];
    const std::string& axes = dims_[l.dim].axes;
    bool sliced = dim_is_sliced(l.dim);
    if (k > 0 && (l.new_token || l.block || sliced)) out += '_';
    if (l.block) out += axes + "s" + l.tag + std::to_string(l.block);
    else if (sliced) out += axes + "s";
    else out += axes;
  }
  if (swizzle_) out += "_swizzled_by_" + std::to_string(swizzle_);
  for (const Dim& d : dims_)
    if (d.align > 1) out += "__a" + d.axes.substr(0, 1) + std::to_string(d.align);
  return out;
}

std::string Format::order() const {
  std::string out;
  for (const Level& l : levels_)
    if (l.block == 0) out += dims_[l.dim].axes;
  return out;
}

std::string Format::blocks_string() const {
  std::string out;
  for (const Level& l : levels_) {
    if (!l.block) continue;
    if (!out.empty()) out += ' ';
    out += dims_[l.dim].axes + std::to_string(l.block);
  }
  return out.empty() ? "-" : out;
}

bool Format::is_blocked() const {
  return std::any_of(levels_.begin(), levels_.end(), [](const Level& l) { return l.block != 0; });
}

bool Format::operator==(const Format& o) const {
  return kind_ == o.kind_ && axes_ == o.axes_ && dims_ == o.dims_ && levels_ == o.levels_ && swizzle_ == o.swizzle_ &&
         tpu_ == o.tpu_;
}

int64_t tpu_channels_per_npu(int64_t start, int64_t channels, int64_t npus) { return (start + channels + npus - 1) / npus; }

// tpu_<rule>(key=value,...): the placement, and the blocked format whose digits it uses (the NPU is a block
// of the channel axis, of X channels; matrix rows split into channels of w; modes block the N axis).
Format Format::parse_tpu(const std::string& name) {
  const size_t open = name.find('('), close = name.size() - 1;
  if (open == std::string::npos || name[close] != ')')
    fail(name, "a TPU layout is written tpu_aligned(npus=X,npu_bytes=S,addr=A) (also tpu_local, tpu_compact, tpu_matrix)");
  TpuPlacement t;
  t.rule = name.substr(4, open - 4);
  if (t.rule != "local" && t.rule != "aligned" && t.rule != "compact" && t.rule != "matrix")
    fail(name, "unknown TPU layout 'tpu_" + t.rule + "' (expected tpu_local, tpu_aligned, tpu_compact or tpu_matrix)");
  std::map<std::string, std::string> kv;
  for (const std::string& part : split(name.substr(open + 1, close - open - 1), ",")) {
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0) fail(name, "parameter '" + part + "' is not key=value");
    const std::string key = part.substr(0, eq);
    if (kv.count(key)) fail(name, "parameter '" + key + "' given twice");
    kv[key] = part.substr(eq + 1);
  }
  auto number = [&](const std::string& key, const std::string& v, int64_t lo) {
    if (!all_digits(v) || std::stoll(v) < lo)
      fail(name, "parameter " + key + "='" + v + "' is not a whole number of at least " + std::to_string(lo) +
                     " (and below 10^9)");
    return std::stoll(v);
  };
  auto need = [&](const std::string& key, int64_t lo) {
    auto it = kv.find(key);
    if (it == kv.end()) fail(name, "parameter '" + key + "' is missing");
    const int64_t v = number(key, it->second, lo);
    kv.erase(it);
    return v;
  };
  t.npus = need("npus", 1);
  t.npu_bytes = need("npu_bytes", 1);
  t.addr = need("addr", 0);
  if (t.addr >= t.npus * t.npu_bytes)
    fail(name, "addr=" + std::to_string(t.addr) + " is outside the local memory of " + std::to_string(t.npus) + " x " +
                   std::to_string(t.npu_bytes) + " bytes");
  if (t.rule == "local") {
    auto it = kv.find("strides");
    if (it == kv.end()) fail(name, "parameter 'strides' (N:C:H:W) is missing");
    for (const std::string& v : split(it->second, ":")) t.strides.push_back(number("strides", v, 0));
    if (t.strides.size() != 4) fail(name, "strides='" + it->second + "' needs 4 values N:C:H:W");
    kv.erase(it);
  }
  if (t.rule == "matrix") t.w = need("w", 1);
  if (auto it = kv.find("mode"); it != kv.end()) {
    if (t.rule != "aligned" && t.rule != "compact")
      fail(name, "mode=" + it->second + ": storage modes apply to tpu_aligned and tpu_compact");
    if (it->second != "4n" && it->second != "2n" && it->second != "2ic")
      fail(name, "mode='" + it->second + "' (expected 4n, 2n or 2ic)");
    t.mode = it->second;
    kv.erase(it);
  }
  if (!kv.empty()) fail(name, "unknown parameter '" + kv.begin()->first + "' for tpu_" + t.rule);
  const std::string x = std::to_string(t.npus);
  std::string base;
  if (t.rule == "matrix") base = "b_fs_fsv" + x + "_fsv" + std::to_string(t.w);  // f = (slot, NPU, w)
  else if (t.mode == "4n") base = "bs_fs_yx_fsv" + x + "_bsv4";
  else if (t.mode == "2n") base = "bs_fs_yx_fsv" + x + "_bsv2";
  else if (t.mode == "2ic") base = "is_os_yx_osv" + x + "_isv2";  // weights [I, O, H, W]: N = I, C = O
  else base = "b_fs_yx_fsv" + x;
  Format f = parse(base);
  f.tpu_.push_back(t);
  return f;
}

}  // namespace clreorder
