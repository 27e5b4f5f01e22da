// Device-test helpers shared by the device test files: a reorder case, source values that make every
// misplaced element visible, running a case against the host reference inside guarded buffers, and
// batches compiled in one program.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "clreorder/format.hpp"
#include "clreorder/reference.hpp"
#include "clreorder/reorder.hpp"
#include "test_support.hpp"

namespace clreorder_test {

using namespace clreorder;

struct Case {
  Layout src, dst;
  std::string label;
  Conversion conversion = {};  // rounding and overflow of the type conversion, padding policy
};

/// Bits of a float type's significand, the hidden one included (0 for integer types).
inline int significand_bits(DataType t) {
  switch (t) {
    case DataType::f64: return 53;
    case DataType::f32: return 24;
    case DataType::f16: return 11;
    case DataType::bf16: return 8;
    case DataType::f8e4m3: return 4;
    case DataType::f8e5m2: return 3;
    default: return 0;
  }
}

/// Largest n such that every integer 1..n is exact in `t` (so it survives any conversion into a type that
/// holds it too, and back).
inline int64_t exact_integers(DataType t) {
  if (is_floating(t)) return int64_t(1) << significand_bits(t);
  switch (t) {
    case DataType::u4: return 15;
    case DataType::i4: return 7;
    case DataType::u8: return 255;
    case DataType::i8: return 127;
    case DataType::i16: return INT16_MAX;
    case DataType::u16: return UINT16_MAX;
    case DataType::i32: return INT32_MAX;
    case DataType::u32: return UINT32_MAX;
    case DataType::i64: case DataType::u64: return int64_t(1) << 53;
    default: return 1;
  }
}

/// Calls f(coordinate, n) for every logical coordinate, n counting them row-major in canonical order.
template <typename F>
void for_each_coord(const Dims& dims, F f) {
  Dims c(dims.size(), 0);
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  for (int64_t n = 0; n < total; ++n) {
    f(c, n);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++c[a] < dims[a]) break;
      c[a] = 0;
    }
  }
}

/// Sources that make every misplaced element visible, whatever the two types. Pass p holds, at the element
/// of logical index n, digit p of n in base B plus one, where 1..B are exact in both types: two elements
/// differ in some pass, and none is ever 0 (the value of padding). The source's own padding holds random
/// bytes, so a kernel that copies it where it must write zero is seen too.
std::vector<std::vector<uint8_t>> visible_sources(const Layout& src, DataType to, uint64_t seed);

/// A source of random bit patterns (NaN payloads, infinities, subnormals, ties and saturation in the
/// conversions).
inline std::vector<uint8_t> random_source(const Case& c, uint64_t seed) {
  return random_bytes(static_cast<size_t>(c.src.bytes()), seed);
}

/// The visible passes, and with `random_bits` one more of random_source().
inline std::vector<std::vector<uint8_t>> sources_for(const Case& c, bool random_bits, uint64_t seed) {
  std::vector<std::vector<uint8_t>> out = visible_sources(c.src, c.dst.data_type(), seed);
  if (random_bits) out.push_back(random_source(c, seed));
  return out;
}

/// Whether the device is Oclgrind's simulator. It checks accesses against whole allocations, so a sub-buffer
/// would hide a read past its end inside the parent: there, every argument is a buffer of its own.
inline bool on_oclgrind(const Engine& e) { return e.info().platform == "Oclgrind"; }

/// Bytes of sentinel before and after each guarded argument: a multiple of the device's sub-buffer alignment.
inline size_t guard_bytes(const Engine& e) {
  const size_t align = e.device().getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8;
  return std::max<size_t>(256, (256 + align - 1) / align * align);
}

/// A device argument of `contents` (offset prefix and tensor). Off Oclgrind it is a sub-buffer of a parent
/// holding `guard` random bytes on each side; read back whole, the parent shows any write outside it.
struct GuardedArg {
  std::vector<uint8_t> init;  // the parent's bytes before the launch
  size_t guard = 0;
  cl::Buffer parent, arg;
  GuardedArg(const Engine& e, const std::vector<uint8_t>& contents, uint64_t seed) {
    guard = on_oclgrind(e) ? 0 : guard_bytes(e);
    init = random_bytes(contents.size() + 2 * guard, seed);
    std::copy(contents.begin(), contents.end(), init.begin() + static_cast<std::ptrdiff_t>(guard));
    parent = cl::Buffer(e.context(), CL_MEM_READ_WRITE, init.size());
    e.queue().enqueueWriteBuffer(parent, CL_TRUE, 0, init.size(), init.data());
    if (guard == 0) {
      arg = parent;
    } else {
      cl_buffer_region region{guard, contents.size()};
      arg = parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
    }
  }
  std::vector<uint8_t> read(const Engine& e) const {
    std::vector<uint8_t> out(init.size());
    e.queue().enqueueReadBuffer(parent, CL_TRUE, 0, out.size(), out.data());
    return out;
  }
};

/// Empty when `got` equals `want` on [from, to), else the first differing byte (relative to `from`).
std::string compare_range(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, size_t from, size_t to,
                          const std::string& what);

/// Runs `launch(args)` on guarded arguments, a source and a destination per case (args[2k], args[2k + 1]):
/// case k's source tensor offsets[k].first bytes into its argument, its destination offsets[k].second bytes
/// into its own, pre-filled with random bytes. Then every source byte, every guard byte and each destination's
/// offset prefix must be unchanged, and each destination must match the host reference byte for byte, the
/// bytes its layout does not own (gaps of strided layouts) still the random ones.
template <typename Launch>
std::string check_launches(const Engine& e, const std::vector<Case>& cases, const std::vector<std::vector<uint8_t>>& srcs,
                           const std::vector<std::pair<size_t, size_t>>& offsets, Launch launch) {
  std::vector<GuardedArg> s, d;
  std::vector<std::vector<uint8_t>> want;
  std::vector<cl::Buffer> args;
  for (size_t k = 0; k < cases.size(); ++k) {
    const auto [src_off, dst_off] = offsets[k];
    const std::vector<uint8_t> d_contents = random_bytes(dst_off + static_cast<size_t>(cases[k].dst.bytes()), 13 + k);
    want.emplace_back(d_contents.begin() + static_cast<std::ptrdiff_t>(dst_off), d_contents.end());
    reference_reorder(cases[k].src, srcs[k].data(), cases[k].dst, want.back().data(), cases[k].conversion);
    std::vector<uint8_t> s_contents = random_bytes(src_off, 5);
    s_contents.insert(s_contents.end(), srcs[k].begin(), srcs[k].end());
    s.emplace_back(e, s_contents, 11 + k);
    d.emplace_back(e, d_contents, 17 + k);
    args.push_back(s.back().arg);
    args.push_back(d.back().arg);
  }
  launch(args);
  for (size_t k = 0; k < cases.size(); ++k) {
    const size_t dst_off = offsets[k].second;
    const std::vector<uint8_t> s_after = s[k].read(e), d_after = d[k].read(e);
    std::string err = compare_range(s_after, s[k].init, 0, s_after.size(), "the source buffer (guards included)");
    if (err.empty()) err = compare_range(d_after, d[k].init, 0, d[k].guard + dst_off, "the guard or offset before the destination");
    if (err.empty()) err = compare_range(d_after, d[k].init, d_after.size() - d[k].guard, d_after.size(), "the guard after the destination");
    if (err.empty())
      err = compare_bytes(std::vector<uint8_t>(d_after.begin() + static_cast<std::ptrdiff_t>(d[k].guard + dst_off),
                                               d_after.end() - static_cast<std::ptrdiff_t>(d[k].guard)),
                          want[k]);
    if (!err.empty()) return cases[k].label + ": " + err;
  }
  return "";
}

/// check_launches() of one case: `launch(src_arg, dst_arg)`.
template <typename Launch>
std::string check_launch(const Engine& e, const Case& c, const std::vector<uint8_t>& src, size_t src_off, size_t dst_off,
                         Launch launch) {
  return check_launches(e, {c}, {src}, {{src_off, dst_off}},
                        [&](const std::vector<cl::Buffer>& args) { launch(args[0], args[1]); });
}

/// The buffer of a case's compensation sums (null when its conversion writes none): holding junk, which a
/// reorder() must zero first, or (`zeroed`) zeros, as a kernel launched by hand needs.
inline cl::Buffer compensation_buffer(const Engine& e, const Case& c, bool zeroed = false) {
  if (!c.conversion.compensation.present()) return cl::Buffer();
  std::vector<uint8_t> init = random_bytes(static_cast<size_t>(c.conversion.compensation.count(c.dst.dims())) * 4, 29);
  if (zeroed) std::fill(init.begin(), init.end(), 0);
  return cl::Buffer(e.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, init.size(), init.data());
}

/// "" when `sums` holds the host's compensation sums of the case's result from source `src` (or the case
/// writes none), else the first that differs.
inline std::string check_compensation(const Engine& e, const Case& c, const std::vector<uint8_t>& src, const cl::Buffer& sums) {
  if (!sums()) return "";
  std::vector<uint8_t> result(static_cast<size_t>(c.dst.bytes()), 0);
  reference_reorder(c.src, src.data(), c.dst, result.data(), c.conversion);
  const std::vector<int32_t> want = reference_compensation(c.dst, result.data(), c.conversion.compensation);
  std::vector<int32_t> got(want.size());
  e.queue().enqueueReadBuffer(sums, CL_TRUE, 0, got.size() * 4, got.data());
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return c.label + ": compensation sum " + std::to_string(i) + " is " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  return "";
}

/// reorder() on the case with source `src`, the buffers at byte offsets: the kernel the selector picks (or
/// `force`), compiled first (policy wait), since these tests are about that kernel.
inline std::string run_case(const Engine& e, const Case& c, const std::vector<uint8_t>& src, const std::string& force = "",
                            size_t src_off = 0, size_t dst_off = 0) {
  const cl::Buffer sums = compensation_buffer(e, c);
  const std::string err = check_launch(e, c, src, src_off, dst_off, [&](const cl::Buffer& s, const cl::Buffer& d) {
    ReorderOptions opt;
    opt.force_impl = force;
    opt.policy = CompilePolicy::wait;
    opt.conversion = c.conversion;
    opt.param_buffers = upload_param_values(e.context(), c.conversion);
    opt.compensation = sums;
    reorder(e, s, src_off, c.src, d, dst_off, c.dst, opt);
  });
  return err.empty() ? check_compensation(e, c, src, sums) : err;
}

/// run_case() on every source of sources_for(); the first failure, naming its pass.
inline std::string run_case_all(const Engine& e, const Case& c, bool random_bits, const std::string& force = "",
                                size_t src_off = 0, size_t dst_off = 0, uint64_t seed = 1) {
  const std::vector<std::vector<uint8_t>> sources = sources_for(c, random_bits, seed);
  for (size_t k = 0; k < sources.size(); ++k) {
    std::string err = run_case(e, c, sources[k], force, src_off, dst_off);
    if (!err.empty()) return err + " [source pass " + std::to_string(k + 1) + " of " + std::to_string(sources.size()) + "]";
  }
  return "";
}

/// Launches planned kernel `kd` on source bytes `src`, the destination `dst_off` and the source `src_off`
/// units (unit_bytes(): elements, bytes of u4 and i4) into their arguments, and checks the destination and
/// any compensation sums against the host; "" when exact, else what differs.
inline std::string check_planned(const Engine& e, const Case& c, const KernelData& kd, const std::vector<uint8_t>& src,
                                 size_t dst_off = 0, size_t src_off = 0) {
  const size_t de = unit_bytes(c.dst.data_type()), se = unit_bytes(c.src.data_type());
  const cl::Buffer plans = plans_buffer(e.context(), kd);
  const std::array<cl::Buffer, kParams> values = upload_param_values(e.context(), c.conversion);
  const cl::Buffer sums = compensation_buffer(e, c, true);
  std::string err = check_launch(e, c, src, src_off * se, dst_off * de, [&](const cl::Buffer& s, const cl::Buffer& d) {
    LockedKernel k = ProgramCache::instance().kernel(e.context(), e.device(), kd.source);
    set_reorder_args(k.kernel, s, src_off, d, dst_off, plans, values, sums);
    e.queue().enqueueNDRangeKernel(k.kernel, cl::NullRange, kd.global_range(), kd.local_range());
  });
  if (err.empty()) err = check_compensation(e, c, src, sums);
  return err;
}

/// Runs a kernel planned outside the selector's own device (another tuning, another cache size) on this
/// device, check_planned() on every source of sources_for(c, true), or (`random_only`) on its random pass alone.
inline std::string run_planned(const Engine& e, const Case& c, const KernelData& kd, size_t dst_off = 0, size_t src_off = 0,
                               bool random_only = false) {
  const uint64_t seed = 3;
  for (const std::vector<uint8_t>& src : random_only ? std::vector<std::vector<uint8_t>>{random_source(c, seed)} : sources_for(c, true, seed)) {
    const std::string err = check_planned(e, c, kd, src, dst_off, src_off);
    if (!err.empty()) return kd.impl + ": " + err;
  }
  return "";
}

/// Compiles the kernels of `cases` (with `force`, that implementation's) as few programs: on PoCL each
/// program costs about 0.2 s before its kernels (it links and optimises the builtin library once), so one
/// program per case made that most of a device test's time. A case the selector cannot plan, or a program
/// that does not build, is left to the case's own run, which names it.
inline void prebuild(const Engine& e, const std::vector<Case>& cases, const std::string& force = "") {
  std::vector<KernelSource> sources;
  for (const Case& c : cases) {
    try {
      sources.push_back(plan_reorder(e.info(), c.src, c.dst, force, c.conversion).source);
    } catch (const std::exception&) {
    }
  }
  constexpr size_t kPerProgram = 64;  // as the background compiler's batches
  for (size_t at = 0; at < sources.size(); at += kPerProgram) {
    const auto end = sources.begin() + static_cast<std::ptrdiff_t>(std::min(sources.size(), at + kPerProgram));
    try {
      ProgramCache::instance().build(e.context(), e.device(), std::vector<KernelSource>(sources.begin() + static_cast<std::ptrdiff_t>(at), end));
    } catch (const std::exception&) {
    }
  }
}

/// Compiles every case's kernel as few programs (prebuild()), then runs and checks each on its visible
/// sources (and with `random_bits`, random bit patterns too); with `force`, on that implementation.
inline void run_batch(const Engine& e, const std::vector<Case>& cases, bool random_bits = false,
                      const std::string& force = "") {
  prebuild(e, cases, force);
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string err = run_case_all(e, cases[i], random_bits, force, 0, 0, i);
    if (!err.empty() && ++failures <= 20) ADD_FAILURE() << err;
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

inline std::vector<Format> supported_formats(FormatKind kind, int rank = 0) {
  std::vector<Format> out;
  for (const FormatEntry& e : registry()) {
    if (!e.unsupported.empty()) continue;
    Format f = Format::parse(e.name);
    if (f.kind() == kind && (rank == 0 || f.rank() == rank)) out.push_back(f);
  }
  return out;
}

inline std::vector<Format> supported_data_formats(int rank) { return supported_formats(FormatKind::data, rank); }

inline Dims odd_shape(int rank, int64_t b) {
  Dims d = {b, 19};
  const int64_t spatial[] = {3, 2, 2, 3, 5, 7};  // v u w z y x
  for (int a = 2; a < rank; ++a) d.push_back(spatial[6 - (rank - a)]);
  return d;
}

inline std::string plain_order(int rank) { return std::string("bf") + std::string("vuwzyx").substr(8 - rank); }

/// A case of two layouts, labelled by both.
inline Case case_of(const Layout& src, const Layout& dst) { return Case{src, dst, src.describe() + " -> " + dst.describe()}; }

/// The case converting by `conv` (named in its label).
inline Case converting(Case c, const Conversion& conv) {
  c.conversion = conv;
  c.label += " " + conv.key();
  return c;
}

/// `n` values first, first + step, first + 2 step, ... (parameters of the fused arithmetic).
inline std::vector<float> ramp(size_t n, float first, float step) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = first + step * static_cast<float>(k);
  return v;
}

/// `c` with these parameters of the fused arithmetic set.
inline Conversion with_params(Conversion c, std::initializer_list<std::pair<Param, ParamValues>> params) {
  for (const auto& [q, v] : params) c.param(q) = v;
  return c;
}

/// `c` writing compensation sums per index of `axis` (and of `outer`).
inline Conversion with_compensation(Conversion c, int axis, int outer = -1) {
  c.compensation = Compensation{axis, outer};
  return c;
}

inline Case make_case(const Format& s, const Format& d, const Dims& shape, DataType st = DataType::f32,
               DataType dt = DataType::f32, Dims slo = {}, Dims sup = {}, Dims dlo = {}, Dims dup = {}) {
  return case_of(Layout(s, st, shape, slo, sup), Layout(d, dt, shape, dlo, dup));
}

/// Whether CLREORDER_TUNING leaves CPU devices their own tiles: the forms tests look for in the generated
/// source (cpu_source()) are the CPU tiles'.
inline bool cpu_tiles_apply() {
  const char* tuning = std::getenv("CLREORDER_TUNING");
  return !tuning || std::string(tuning) == "cpu";
}

/// The source implementation `impl` generates for the case on this device taken as a CPU (the CPU tiles).
inline std::string cpu_source(const Engine& e, const Case& c, const std::string& impl) {
  DeviceInfo cpu = e.info();
  cpu.type = "cpu";
  return KernelSelector::instance().select(ReorderParams{c.src, c.dst, cpu, c.conversion}, impl).source.code;
}

/// Why implementation `impl` declines the case on this device ("" when it accepts).
inline std::string reason_of(const Engine& e, const Case& c, const std::string& impl) {
  for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{c.src, c.dst, e.info(), c.conversion}))
    if (v.impl == impl) return v.declines;
  return "no implementation named " + impl;
}

}  // namespace clreorder_test
