// Host checks of the offset model shared by the tests and the fuzzers: a plan is a bijection, and the strided
// permutation the specialised kernels walk agrees with both plans. Each returns "" or what is wrong.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"
#include "permute.hpp"

namespace clreorder_test {

using namespace clreorder;

/// Empty when the layout's plan holds every logical coordinate exactly once, at the offset offset() gives,
/// with every digit tuple at its own offset inside the layout; else the first thing that is wrong.
inline std::string plan_bijection_error(const Layout& l) {
  std::vector<char> hit(static_cast<size_t>(l.logical_elements()), 0), slot(static_cast<size_t>(l.elements()), 0);
  int64_t off, c[8];
  for (int64_t p = 0; p < l.plan().digit_space; ++p) {
    const bool valid = l.plan().decode(p, &off, c);
    if (off < 0 || off >= l.elements()) return "tuple " + std::to_string(p) + " at offset " + std::to_string(off) + ", outside";
    if (slot[static_cast<size_t>(off)]++) return "tuple " + std::to_string(p) + " shares offset " + std::to_string(off);
    if (!valid) continue;
    if (l.plan().offset(c) != off) return "offset() disagrees with decode() at tuple " + std::to_string(p);
    int64_t linear = 0;
    for (int a = 0; a < l.rank(); ++a) linear = linear * l.dims()[static_cast<size_t>(a)] + c[a];
    if (hit[static_cast<size_t>(linear)]++) return "tuple " + std::to_string(p) + " holds a coordinate held before";
  }
  if (std::find(hit.begin(), hit.end(), 0) != hit.end()) return "some coordinate is not held";
  return "";
}

/// A device of this tuning ("cpu" or "gpu") for generating kernels on the host, reporting `cache_bytes` of
/// global memory cache (0: unknown, so nothing streams).
inline DeviceInfo tuned_device(const char* type, uint64_t cache_bytes = 0) {
  DeviceInfo dev;
  dev.type = type;
  dev.cache_bytes = cache_bytes;
  dev.max_work_group = 256;
  dev.fp64 = true;
  return dev;
}

// Walks the permutation the way the kernels do and checks every tuple against both plans: the destination
// offset it writes holds the coordinate its axes say (looked up in the destination plan's own decode, so
// tuples of merged digits are checked too), the source offset is the source plan's for that coordinate,
// every destination element is written once, and every tuple whose coordinates have a source slot (what
// a kernel may load, PermAxis::read_lo/read_hi) has a source offset inside the source, equal to the plan's
// offset of that padded coordinate. A valid tuple must have a slot.
inline std::string check_permutation(const Layout& src, const Layout& dst) {
  Permutation p = make_permutation(src, dst);
  if (!p.reject.empty()) return "rejected: " + p.reject;
  const int r = dst.rank();
  // Destination offset -> (valid, coordinate), from the destination plan alone.
  std::vector<int> written(static_cast<size_t>(dst.elements()), 0), owned(written.size(), 0);
  std::vector<char> dst_valid(static_cast<size_t>(dst.elements()), 0);
  std::vector<Dims> dst_coord(static_cast<size_t>(dst.elements()));
  for (int64_t t = 0; t < dst.plan().digit_space; ++t) {
    int64_t off, c[8];
    const bool valid = dst.plan().decode(t, &off, c);
    owned[static_cast<size_t>(off)] = 1;  // strided layouts own their tuples' offsets, not the gaps
    dst_valid[static_cast<size_t>(off)] = valid;
    dst_coord[static_cast<size_t>(off)] = Dims(c, c + r);
  }
  for (int64_t n = 0; n < p.count(); ++n) {
    int64_t rest = n, doff = p.dst_base, soff = p.src_base;
    std::vector<int64_t> v(static_cast<size_t>(r), 0);
    std::vector<bool> known(static_cast<size_t>(r), true);
    for (size_t k = p.digits.size(); k-- > 0;) {
      const PermDigit& d = p.digits[k];
      int64_t i = rest % d.extent;
      rest /= d.extent;
      doff += i * d.dst_stride;
      soff += i * d.src_stride;
      if (d.axis >= 0) v[static_cast<size_t>(d.axis)] += i * d.weight;
    }
    // A merged digit (axis -1) spans unmasked axes only: their coordinates come from the destination plan.
    for (const PermDigit& d : p.digits)
      if (d.axis < 0)
        for (int a = 0; a < r; ++a)
          if (!p.axes[static_cast<size_t>(a)].masked()) known[static_cast<size_t>(a)] = false;
    bool write = true, valid = true, readable = true;
    for (int a = 0; a < r; ++a) {
      const PermAxis& ax = p.axes[static_cast<size_t>(a)];
      if (!known[static_cast<size_t>(a)]) continue;
      const int64_t va = v[static_cast<size_t>(a)];
      if (va >= ax.span) return "tuple past the iteration's span of axis " + std::to_string(a);
      if (va >= ax.limit) {
        if (!ax.check_write) return "tuple beyond the destination without a write mask";
        write = false;
      }
      const bool in = va - ax.lower >= 0 && va - ax.lower < ax.dim;
      if (!in && !ax.masked()) return "axis without masks reaches padding";
      valid = valid && in;
      readable = readable && va >= ax.read_lo && va < ax.read_hi;
      if (!ax.masked() && !(va >= ax.read_lo && va < ax.read_hi)) return "unmasked axis without a source slot";
    }
    if (valid && !readable) return "a valid tuple without a source slot";
    if (readable && (soff < 0 || soff >= src.elements()))
      return "source offset " + std::to_string(soff) + " of a readable tuple outside the source's " +
             std::to_string(src.elements()) + " elements";
    // Logical coordinates: v - lower, where an axis' coordinate folds others' (yxs) split row-major, the
    // first part floored (a padding tuple's is negative).
    Dims cs(static_cast<size_t>(r));
    for (int a = 0; a < r; ++a) cs[static_cast<size_t>(a)] = v[static_cast<size_t>(a)] - p.axes[static_cast<size_t>(a)].lower;
    for (int a = 0; a < r; ++a) {
      const std::vector<int64_t>& folds = p.axes[static_cast<size_t>(a)].folds;
      int64_t rest = cs[static_cast<size_t>(a)];
      for (size_t k = folds.size(); k-- > 0;) {
        const int64_t m = ((rest % folds[k]) + folds[k]) % folds[k];
        cs[static_cast<size_t>(a) + 1 + k] = m;
        rest = (rest - m) / folds[k];
      }
      cs[static_cast<size_t>(a)] = rest;
    }
    if (readable && std::find(known.begin(), known.end(), false) == known.end()) {
      // Its padded source coordinate is v + (source lower - destination lower): the plan's offset there.
      if (soff != src.plan().offset(cs.data()))
        return "source offset of a readable padding tuple disagrees with the source plan";
    }
    if (!write) continue;
    if (doff < 0 || doff >= dst.elements()) return "destination offset out of range";
    if (!owned[static_cast<size_t>(doff)]) return "a gap of the destination written, offset " + std::to_string(doff);
    if (written[static_cast<size_t>(doff)]++) return "destination offset written twice";
    const Dims& c = dst_coord[static_cast<size_t>(doff)];
    if (static_cast<bool>(dst_valid[static_cast<size_t>(doff)]) != valid)
      return "tuple validity disagrees with the destination plan at offset " + std::to_string(doff);
    for (int a = 0; a < r; ++a)
      if (known[static_cast<size_t>(a)] && valid && c[static_cast<size_t>(a)] != cs[static_cast<size_t>(a)])
        return "coordinate of axis " + std::to_string(a) + " disagrees with the destination plan";
    if (!valid) continue;
    if (doff != dst.plan().offset(c.data())) return "destination offset disagrees with the plan";
    if (soff != src.plan().offset(c.data())) return "source offset disagrees with the plan";
  }
  if (written != owned) return "destination element not written";
  return "";
}

}  // namespace clreorder_test
