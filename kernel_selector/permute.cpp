// Refining two index plans into one strided iteration space (see permute.hpp).
#include "permute.hpp"

#include <algorithm>

#include "codegen.hpp"

namespace clreorder {

namespace {

struct AxisDigit {
  int64_t divisor, extent, stride;
  size_t order;  // position in its plan's digit list
  bool top;      // the outer part (slice) of its dim: its extent follows from the shape
};

std::vector<AxisDigit> axis_digits(const IndexPlan& plan, int dim) {
  std::vector<AxisDigit> out;
  for (size_t k = 0; k < plan.digits.size(); ++k) {
    const PlanDigit& g = plan.digits[k];
    if (g.dim != dim) continue;
    out.push_back({g.divisor, g.extent, g.stride, k, !g.needs_mod});
  }
  return out;
}

// One layout's digits of the logical axes [a0, a1] read as one coordinate, row-major over their padded
// coordinates (as a fused dim yxs combines them, so that a pair with yxs on one side is still a strided
// permutation): divisors over that value, its lower padding and the extent it spans; or why it cannot be
// read so. Only a0 may be padded: padding of the others would leave holes inside the combined range. Where
// the layout keeps the axes apart, digits that continue each other (y's stride x's extent times x's, as in
// oiyx) merge, so that a block of the combined value (yxsv2 over 3x3) may cut across rows of x.
struct GroupSide {
  std::vector<AxisDigit> digits;
  int64_t lower = 0, extent = 1;
  bool owned = true;
  std::string reject;
};

GroupSide group_side(const Layout& l, int a0, int a1) {
  const IndexPlan& plan = l.plan();
  GroupSide g;
  if (a0 == a1) {
    const int d = l.format().dim_of_axis(a0);
    const PlanDim& pd = plan.pdims[static_cast<size_t>(d)];
    g.digits = axis_digits(plan, d);
    g.lower = pd.lower[0];
    g.extent = pd.extent;
    g.owned = pd.owned;
    return g;
  }
  auto letter = [&](int a) { return std::string(1, l.format().axes()[static_cast<size_t>(a)]); };
  auto inner_of = [&](int a) {  // product of the dims after a in the group
    int64_t n = 1;
    for (int b = a + 1; b <= a1; ++b) n *= plan.dims[static_cast<size_t>(b)];
    return n;
  };
  for (int a = a0; a <= a1;) {
    const int d = l.format().dim_of_axis(a);
    const PlanDim& pd = plan.pdims[static_cast<size_t>(d)];
    const int last = a + static_cast<int>(pd.axes.size()) - 1;
    for (size_t k = 0; k < pd.axes.size(); ++k) {
      const int b = pd.axes[k];
      if (b != a0 && (pd.lower[k] != 0 || pd.sizes[k] != plan.dims[static_cast<size_t>(b)])) {
        g.reject = "axis " + letter(b) + " is padded inside a fused dim's combined coordinate (" + letter(a0) + ".." +
                   letter(a1) + ")";
        return g;
      }
    }
    std::vector<AxisDigit> ds = axis_digits(plan, d);
    const int64_t inner = inner_of(last);
    if (a == a0) {
      g.lower = pd.lower[0] * inner_of(a0);
      g.extent = pd.extent * inner;
    } else {
      int64_t sizes = 1;
      for (int64_t s : pd.sizes) sizes *= s;
      for (AxisDigit& x : ds) {
        if (!x.top) continue;
        if (pd.extent != sizes || pd.extent % x.divisor != 0) {
          g.reject = "blocks of axis " + letter(a) + " round it up inside a fused dim's combined coordinate";
          return g;
        }
        x.extent = pd.extent / x.divisor;
        x.top = false;
      }
    }
    for (AxisDigit& x : ds) x.divisor *= inner;
    g.owned = g.owned && pd.owned;
    g.digits.insert(g.digits.end(), ds.begin(), ds.end());
    a = last + 1;
  }
  std::sort(g.digits.begin(), g.digits.end(), [](const AxisDigit& x, const AxisDigit& y) { return x.divisor < y.divisor; });
  for (size_t k = 0; k + 1 < g.digits.size();) {
    AxisDigit &lo = g.digits[k], &hi = g.digits[k + 1];
    if (!lo.top && hi.divisor == lo.divisor * lo.extent && hi.stride == lo.stride * lo.extent) {
      lo = AxisDigit{lo.divisor, lo.extent * hi.extent, lo.stride, hi.order, hi.top};
      g.digits.erase(g.digits.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    } else {
      ++k;
    }
  }
  return g;
}

// The runs of logical axes that a fused dim of either layout combines, as (first, last); every other axis
// alone. Fused dims whose axes are out of canonical order leave `reject` set.
std::vector<std::pair<int, int>> axis_groups(const Layout& src, const Layout& dst, std::string* reject) {
  const int r = dst.rank();
  std::vector<int> end(static_cast<size_t>(r));
  for (int a = 0; a < r; ++a) end[static_cast<size_t>(a)] = a;
  for (const Layout* l : {&src, &dst})
    for (const PlanDim& pd : l->plan().pdims) {
      for (size_t k = 1; k < pd.axes.size(); ++k)
        if (pd.axes[k] != pd.axes[0] + static_cast<int>(k)) {
          *reject = "fused axes of " + l->format().name() + " out of the canonical order";
          return {};
        }
      int& e = end[static_cast<size_t>(pd.axes.front())];
      e = std::max(e, pd.axes.back());
    }
  std::vector<std::pair<int, int>> groups;
  for (int a = 0; a < r;) {
    int last = end[static_cast<size_t>(a)];
    for (int b = a; b <= last; ++b) last = std::max(last, end[static_cast<size_t>(b)]);
    groups.emplace_back(a, last);
    a = last + 1;
  }
  return groups;
}

// The digit of `ds` that holds the refined range starting at weight `w` (and ending at `hi`, 0 = open).
const AxisDigit* holder(const std::vector<AxisDigit>& ds, int64_t w, int64_t hi) {
  for (const AxisDigit& d : ds)
    if (d.divisor <= w && (d.top || (hi != 0 && hi <= d.divisor * d.extent))) return &d;
  return nullptr;
}

}  // namespace

int64_t extent_product(const std::vector<PermDigit>& digits) {
  int64_t n = 1;
  for (const PermDigit& d : digits) n *= d.extent;
  return n;
}

int64_t Permutation::count() const { return extent_product(digits); }

PermDigit split_outer(PermDigit& d, int64_t t) {
  PermDigit outer{d.axis, d.weight * t, d.extent / t, d.dst_stride * t, d.src_stride * t};
  d.extent = t;
  return outer;
}

int64_t divisor_at_most(int64_t n, int64_t cap) {
  for (int64_t t = std::min(n, cap); t > 1; --t)
    if (n % t == 0) return t;
  return 1;
}

int64_t divisor_at_least(int64_t n, int64_t need, int64_t cap) {
  for (int64_t t = std::max<int64_t>(need, 1), end = std::min(n, cap + 1); t < end; ++t)
    if (n % t == 0) return t;
  return n;
}

std::vector<int> indexed_axes(const Conversion& conv) {
  std::vector<int> out;
  auto add = [&](int axis) {
    if (axis >= 0 && std::find(out.begin(), out.end(), axis) == out.end()) out.push_back(axis);
  };
  for (const ParamValues& v : conv.params)
    if (v.present()) add(v.axis), add(v.outer_axis);
  add(conv.compensation.axis);
  add(conv.compensation.outer_axis);
  return out;
}

std::string reject_conversion(const ReorderParams& p, const Permutation& perm, Nibbles nibbles, bool sums) {
  // Staged's and lanes' vectors address whole elements, and in local's store pass two work-items could write
  // the halves of one byte; tiled's scalar loops write whole bytes of nibble pairs. Local's load pass reads
  // each nibble through SRC_AT, a byte load that work-items may share.
  if (nibbles == Nibbles::none && is_nibble(p.src.data_type()))
    return std::string(to_string(p.src.data_type())) + " elements share bytes: the tiled, local, generic and agnostic kernels read them";
  if (nibbles != Nibbles::both && is_nibble(p.dst.data_type()))
    return std::string(to_string(p.dst.data_type())) + " elements share bytes: the tiled, generic and agnostic kernels write them";
  const Conversion& conv = p.conversion;
  // lanes converts some elements twice; tiled and staged keep sums of their tile in registers, local in
  // local memory.
  if (conv.compensation.present() && !sums)
    return "compensation sums are written by the tiled, staged, local, generic and agnostic kernels only";
  int64_t entries = 0;
  for (const ParamValues& v : conv.params)
    if (v.one_per_index()) entries += perm.axes[static_cast<size_t>(v.axis)].span;
    else if (v.axis >= 0 && !v.from_buffer) entries += static_cast<int64_t>(v.values.size());
  if (entries <= static_cast<int64_t>(kMaxIndexedValues)) return "";
  return "the per-index tables over the padded axes would hold " + num(entries) + " values, more than " +
         num(static_cast<int64_t>(kMaxIndexedValues));
}

CompensateMacros guarded_sums(const Conversion& conv, const Permutation& perm, const std::function<std::string(int axis)>& padded,
                              const std::vector<std::string>& also) {
  const Compensation& c = conv.compensation;
  auto coord = [&](int axis) { return "(" + padded(axis) + " - " + num(perm.axes[static_cast<size_t>(axis)].lower) + ")"; };
  std::vector<std::string> when = {"v != 0"};
  when.insert(when.end(), also.begin(), also.end());
  for (int axis : {c.axis, c.outer_axis})
    if (axis >= 0) {
      when.push_back(coord(axis) + " >= 0");
      when.push_back(coord(axis) + " < " + num(perm.axes[static_cast<size_t>(axis)].dim));
    }
  CompensateMacros m = compensate_macros(conv, coord, [&](int axis) { return num(perm.axes[static_cast<size_t>(axis)].dim); });
  m.add = "if (" + join_and(when) + ") " + m.add;
  return m;
}

TableShapes padded_shapes(const Permutation& perm) {
  return [axes = perm.axes](int axis) {
    const PermAxis& m = axes[static_cast<size_t>(axis)];
    return TableShape{m.lower, m.span};
  };
}

TableIndex padded_coord(const Permutation& perm, int axis, const std::string& base, int64_t offset) {
  const PermAxis& m = perm.axes[static_cast<size_t>(axis)];
  return TableIndex{base, offset, m.lower, m.span};
}

Permutation make_permutation(const Layout& src, const Layout& dst, const std::vector<int>& tracked) {
  Permutation p;
  const IndexPlan& sp = src.plan();
  const IndexPlan& dp = dst.plan();
  p.dst_base = dp.base;
  p.src_base = sp.base;
  struct Placed {
    PermDigit d;
    size_t dst_order;
  };
  std::vector<Placed> placed;
  if (src.dims() != dst.dims()) {
    p.reject = "the shapes differ (a reshape " + dims_to_string(src.dims()) + " -> " + dims_to_string(dst.dims()) +
               "): only the generic kernel maps elements by their linear index";
    return p;
  }
  p.axes.resize(static_cast<size_t>(dst.rank()));
  const std::vector<std::pair<int, int>> groups = axis_groups(src, dst, &p.reject);
  if (!p.reject.empty()) return p;
  for (const auto& [a, last] : groups) {
    // A group of several axes is one coordinate of the first (v row-major over them); the others are points.
    std::string axis_name;
    for (int b = a; b <= last; ++b) axis_name += dst.format().axes()[static_cast<size_t>(b)];
    if (last > a)
      for (int t : tracked)
        if (t >= a && t <= last) {
          p.reject = "per-index values or sums on axis " + std::string(1, axis_name[static_cast<size_t>(t - a)]) +
                     ", which a fused dim folds into one coordinate (" + axis_name + ")";
          return p;
        }
    const GroupSide ss = group_side(src, a, last), ds_ = group_side(dst, a, last);
    for (const GroupSide* g : {&ss, &ds_})
      if (!g->reject.empty()) {
        p.reject = g->reject;
        return p;
      }
    const std::vector<AxisDigit>&sdig = ss.digits, &ddig = ds_.digits;
    const int64_t src_tile = std::max_element(sdig.begin(), sdig.end(), [](auto& x, auto& y) { return x.divisor < y.divisor; })->divisor;
    if (!ds_.owned) {
      p.reject = "the destination owns only some slots of axis " + axis_name + " (TPU channels start on NPU " +
                 std::to_string(ds_.lower) + "): only the generic kernel skips the others";
      return p;
    }
    // Plan paddings, not the layouts' own: a TPU layout shifts its channels without padding.
    const int64_t src_lower = ss.lower, dst_lower = ds_.lower;
    const int64_t delta = src_lower - dst_lower;
    if (delta % src_tile != 0) {
      p.reject = "lower paddings of axis " + axis_name + " differ by " + std::to_string(delta) +
                 ", not a multiple of the source block " + std::to_string(src_tile);
      return p;
    }
    std::vector<int64_t> bounds = {1};
    for (const auto* ds : {&sdig, &ddig})
      for (const AxisDigit& d : *ds) {
        bounds.push_back(d.divisor);
        if (!d.top) bounds.push_back(d.divisor * d.extent);
      }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    for (size_t k = 1; k < bounds.size(); ++k)
      if (bounds[k] % bounds[k - 1]) {
        p.reject = "blocks of axis " + axis_name + " do not nest (" + std::to_string(bounds[k - 1]) + " and " +
                   std::to_string(bounds[k]) + ")";
        return p;
      }
    const int64_t limit = ds_.extent, top = bounds.back();
    const int64_t top_extent = (limit + top - 1) / top;
    for (size_t k = 0; k < bounds.size(); ++k) {
      const int64_t w = bounds[k], hi = k + 1 < bounds.size() ? bounds[k + 1] : 0;
      const int64_t ext = hi ? hi / w : top_extent;
      const AxisDigit* dh = holder(ddig, w, hi);
      const AxisDigit* sh = holder(sdig, w, hi);
      if (!dh || !sh) {
        p.reject = "internal: no digit holds weight " + std::to_string(w) + " of axis " + axis_name;
        return p;
      }
      PermDigit d;
      d.axis = a;
      d.weight = w;
      d.extent = ext;
      d.dst_stride = dh->stride * (w / dh->divisor);
      d.src_stride = sh->stride * (w / sh->divisor);
      placed.push_back({d, dh->order});
    }
    const AxisDigit* src_top = holder(sdig, src_tile, 0);
    p.src_base += (delta / src_tile) * src_top->stride;
    PermAxis& ax = p.axes[static_cast<size_t>(a)];
    ax.lower = dst_lower;
    ax.dim = dst.dims()[a];
    for (int b = a + 1; b <= last; ++b) {
      ax.folds.push_back(dst.dims()[static_cast<size_t>(b)]);
      ax.dim *= dst.dims()[static_cast<size_t>(b)];
      PermAxis& point = p.axes[static_cast<size_t>(b)];
      point.dim = point.limit = point.span = point.read_hi = 1;
    }
    ax.limit = limit;
    ax.check_low = ax.lower > 0;
    ax.check_high = top_extent * top > ax.lower + ax.dim;
    ax.check_write = limit % top != 0;
    // The source holds padded coordinates [0, its extent) of this axis; v maps to v + delta there.
    ax.span = top_extent * top;
    ax.read_lo = -delta;
    ax.read_hi = ss.extent - delta;
  }
  // Destination order: by the destination digit that holds each refined digit, coarser weights first.
  std::stable_sort(placed.begin(), placed.end(), [](const Placed& x, const Placed& y) {
    return x.dst_order != y.dst_order ? x.dst_order < y.dst_order : x.d.weight > y.d.weight;
  });
  for (int t : tracked)
    if (t >= 0 && t < static_cast<int>(p.axes.size())) p.axes[static_cast<size_t>(t)].tracked = true;
  for (const Placed& pl : placed) {
    if (pl.d.extent == 1) continue;
    if (!p.digits.empty()) {
      PermDigit& outer = p.digits.back();
      const PermDigit& inner = pl.d;
      auto unmasked = [&](int axis) {
        return axis < 0 || (!p.axes[static_cast<size_t>(axis)].masked() && !p.axes[static_cast<size_t>(axis)].tracked);
      };
      bool contiguous = outer.dst_stride == inner.extent * inner.dst_stride &&
                        outer.src_stride == inner.extent * inner.src_stride;
      bool same_axis = outer.axis == inner.axis && outer.axis >= 0 && outer.weight == inner.extent * inner.weight;
      if (contiguous && (same_axis || (unmasked(outer.axis) && unmasked(inner.axis)))) {
        outer.axis = same_axis ? inner.axis : -1;
        outer.weight = inner.weight;
        outer.extent *= inner.extent;
        outer.dst_stride = inner.dst_stride;
        outer.src_stride = inner.src_stride;
        continue;
      }
    }
    p.digits.push_back(pl.d);
  }
  if (p.digits.empty()) p.digits.push_back(PermDigit{-1, 1, 1, 1, 1});
  return p;
}

bool Permutation::masked(const PermDigit& d) const {
  return d.axis >= 0 && axes[static_cast<size_t>(d.axis)].masked();
}

PermDigit take_loop(const Permutation& perm, std::vector<PermDigit>& pool, int64_t room,
                    const std::function<bool(const PermDigit&)>& continues) {
  size_t pick = pool.size();
  for (size_t k = 0; k < pool.size(); ++k) {
    if (perm.masked(pool[k])) continue;
    if (pick == pool.size() || continues(pool[k])) pick = k;
    if (continues(pool[k])) break;
  }
  if (pick == pool.size() || room < 2) return PermDigit{};
  const int64_t t = divisor_at_most(pool[pick].extent, room);
  return t >= 2 ? take_inner(pool, pick, t) : PermDigit{};
}

PermDigit take_inner(std::vector<PermDigit>& pool, size_t k, int64_t t) {
  PermDigit inner = pool[k];
  if (t == inner.extent) pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(k));
  else pool[k] = split_outer(inner, t);
  return inner;
}

bool strides_multiple_of(const Permutation& perm, const std::vector<PermDigit>& digits, int64_t m, Stride stride) {
  if ((stride == &PermDigit::dst_stride ? perm.dst_base : perm.src_base) % m != 0) return false;
  for (const PermDigit& d : digits)
    if (d.*stride % m != 0) return false;
  return true;
}

namespace {

// lo <= v < hi as the test of lo or hi alone, or as one unsigned comparison where both bind (v - lo wraps past
// hi - lo when v < lo, for int and long indices alike). Beside saving a comparison, this keeps LLVM 14 from
// turning a pair of them on a tile loop's counter into a switch on its low bits (an i5), which Oclgrind 21.10
// ran wrong, loading rows of padding before and after the source (NOTES, "A tiled CPU kernel that Oclgrind
// ran wrong").
void range_check(const std::string& v, int64_t lo, bool low, int64_t hi, bool high, std::vector<std::string>* out) {
  if (low && high) out->push_back("(ulong)((" + v + ") - " + std::to_string(lo) + ") < " + std::to_string(hi - lo));
  else if (low) out->push_back(v + " >= " + std::to_string(lo));
  else if (high) out->push_back(v + " < " + std::to_string(hi));
}

}  // namespace

void axis_checks(const PermAxis& m, const std::string& v, std::vector<std::string>* ok, std::vector<std::string>* wr) {
  range_check(v, m.lower, m.check_low, m.lower + m.dim, m.check_high, ok);
  if (m.check_write && wr) wr->push_back(v + " < " + std::to_string(m.limit));
}

void read_checks(const PermAxis& m, const std::string& v, std::vector<std::string>* rd) {
  range_check(v, m.read_lo, m.read_lo > 0, m.read_hi, m.read_hi < m.span, rd);
}

void keep_padding_unwritten(Padding padding, std::vector<std::string>* ok, std::vector<std::string>* wr) {
  if (padding != Padding::keep) return;
  wr->insert(wr->end(), ok->begin(), ok->end());
  ok->clear();
}

std::vector<std::string> grid_decode(const Permutation& perm, const std::vector<PermDigit>& grid,
                                     const std::function<bool(int axis)>& in_tile, Padding padding, bool returns) {
  std::vector<std::string> lines = {"IDX_T t_ = w;", "IDX_T d_off = " + num(perm.dst_base) + ";",
                                    "IDX_T s_off = " + num(perm.src_base) + ";"};
  std::vector<std::string> axis_v(perm.axes.size(), "");
  for (size_t k = grid.size(); k-- > 0;) {
    const PermDigit& d = grid[k];
    std::string g = "k" + num(static_cast<int64_t>(k));
    lines.push_back(k == 0 ? "const IDX_T " + g + " = t_;"
                           : "const IDX_T " + g + " = t_ % " + num(d.extent) + "; t_ /= " + num(d.extent) + ";");
    lines.push_back("d_off += " + g + " * " + num(d.dst_stride) + "; s_off += " + g + " * " + num(d.src_stride) + ";");
    if (perm.masked(d) || (d.axis >= 0 && perm.axes[static_cast<size_t>(d.axis)].tracked)) {
      std::string& v = axis_v[static_cast<size_t>(d.axis)];
      v += (v.empty() ? "" : " + ") + g + " * " + num(d.weight);
    }
  }
  std::vector<std::string> grid_ok, grid_wr;
  for (size_t ax = 0; ax < perm.axes.size(); ++ax) {
    const PermAxis& m = perm.axes[ax];
    if (!m.masked() && !m.tracked) continue;
    const std::string vname = "v" + num(static_cast<int64_t>(ax));
    lines.push_back("const IDX_T " + vname + " = " + (axis_v[ax].empty() ? "0" : axis_v[ax]) + ";");
    if (m.masked() && !in_tile(static_cast<int>(ax))) axis_checks(m, vname, &grid_ok, &grid_wr);
  }
  keep_padding_unwritten(padding, &grid_ok, &grid_wr);  // a tile of padding has nothing to write
  if (!returns)
    lines.push_back("const bool g_wr = " + (grid_wr.empty() ? std::string("true") : join_and(grid_wr)) + ";");
  else if (!grid_wr.empty())
    lines.push_back("if (!(" + join_and(grid_wr) + ")) return;");
  lines.push_back("const bool g_ok = " + (grid_ok.empty() ? std::string("true") : join_and(grid_ok)) + ";");
  return lines;
}

std::vector<bool> dense_run(const std::vector<PermDigit>& tile, Stride stride, Stride also) {
  std::vector<bool> in_run(tile.size(), false);
  int64_t len = 1;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t k = 0; k < tile.size(); ++k)
      if (!in_run[k] && tile[k].*stride == len && (!also || tile[k].*also == len)) {
        in_run[k] = true;
        len *= tile[k].extent;
        grew = true;
      }
  }
  return in_run;
}

int64_t run_length(const std::vector<PermDigit>& tile, Stride stride, Stride also) {
  const std::vector<bool> in_run = dense_run(tile, stride, also);
  int64_t len = 1;
  for (size_t k = 0; k < tile.size(); ++k)
    if (in_run[k]) len *= tile[k].extent;
  return len;
}

void grow_runs(const Permutation& perm, std::vector<PermDigit>& pool, std::vector<PermDigit>& tile, int64_t want,
               int64_t max_elems) {
  // Each run split so that it reaches `want` elements without passing the tile's size limit.
  auto extend = [&](Stride stride) {
    const int64_t len = run_length(tile, stride);
    if (len >= want) return false;
    for (size_t k = 0; k < pool.size(); ++k) {
      if (pool[k].*stride != len) continue;
      if (perm.masked(pool[k])) return false;
      // While the other run has not started, half the room stays for it.
      const Stride other = stride == &PermDigit::dst_stride ? &PermDigit::src_stride : &PermDigit::dst_stride;
      const int64_t room = max_elems / extent_product(tile) / (run_length(tile, other) < 2 ? 2 : 1);
      const int64_t t = std::min(divisor_at_least(pool[k].extent, (want + len - 1) / len, room),
                                 divisor_at_most(pool[k].extent, room));
      if (t < 2) return false;
      tile.push_back(take_inner(pool, k, t));
      return true;
    }
    return false;
  };
  for (bool grew = true; grew;) {
    const bool d = extend(&PermDigit::dst_stride);
    const bool s = extend(&PermDigit::src_stride);
    grew = d || s;
  }
}

std::vector<std::string> walk_tiles(const PermDigit& loop, const std::vector<std::string>& body) {
  std::vector<std::string> out = {"for (IDX_T it = 0; it < " + num(loop.extent) + "; ++it) {",
                                  "  const IDX_T so = s_off + it * " + num(loop.src_stride) + ";",
                                  "  const IDX_T do_ = d_off + it * " + num(loop.dst_stride) + ";"};
  for (const std::string& b : body) out.push_back("  " + b);
  out.push_back("}");
  return out;
}

}  // namespace clreorder
