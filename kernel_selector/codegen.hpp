// Internal: printing the index plan as OpenCL C, and the #define / #undef builder (OpenVINO's
// JitConstants). Every number the plan holds is baked into the text as a constant.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "clreorder/kernel_selector.hpp"
#include "clreorder/layout.hpp"
#include "clreorder/runtime.hpp"

namespace clreorder {

/// An ordered set of generated #defines; wrap() emits them, the template, then every #undef, so kernels
/// can share one program without leaking definitions into each other.
class Jit {
 public:
  /// Adds `#define name value`; a multi-line value is continued with backslashes.
  Jit& def(const std::string& name, const std::string& value);
  Jit& def(const std::string& name, int64_t value) { return def(name, std::to_string(value)); }
  /// Replaces the value of an existing #define (throws if there is none).
  Jit& set(const std::string& name, const std::string& value);
  /// defines + body + undefs.
  std::string wrap(const std::string& body) const;

 private:
  std::vector<std::pair<std::string, std::string>> defs_;
};

/// Decimal text of `v`, for generated code.
std::string num(int64_t v);

/// Statements joined with " \\\n  ", so they can be the body of a generated macro.
std::string macro_lines(const std::vector<std::string>& lines);

/// Component `i` of vector variable `var` of `width` elements (".s0" .. ".sf"), or `var` itself when it is
/// a scalar.
std::string component(const std::string& var, int64_t width, int64_t i);

/// Components first .. first+count-1 (count 1, 2, 4 or 8) of vector `var` as one swizzle: `var.s3`,
/// `CR_SW4(var, 0, 1, 2, 3)` (which kernels_cl/common.cl expands to `var.s0123`), or `var` itself when that
/// is the whole vector.
std::string swizzle(const std::string& var, int64_t width, int64_t first, int64_t count);

/// Components first .. first+count-1 (count 2, 4 or 8) of vector `var` as `CR_SW<count>(var, ..)`, even where
/// they are the whole vector: a vector placed whole into a wider literal must go lane by lane for Oclgrind too.
std::string swizzle_run(const std::string& var, int64_t first, int64_t count);

/// A V x V register transpose of vectors `rows` (V = 4, 8 or 16 of `type`): statements declaring its
/// stages, and for each column j the name of the register that holds it. See transpose_network().
struct TransposeNet {
  std::vector<std::string> lines;
  std::vector<std::string> columns;
};

/// The transpose as log2(V) stages of V two-source shuffles, each picking runs of 1, 2, 4 .. elements
/// written as swizzles: unpacks within 128-bit lanes while the runs are shorter than a lane (punpcklbw ..
/// unpcklpd on x86, zip on ARM, for every element size), whole lanes beyond (vperm2f128). LLVM lowers a
/// V-source pick per column into 3 instructions per register for V = 4 and worse above; scalar components
/// would let it fold the stages back into such picks. `prefix` names the stage registers.
TransposeNet transpose_network(const std::string& type, int width, const std::vector<std::string>& rows,
                               const std::string& prefix);

/// Conditions joined with " && " ("" for none).
std::string join_and(const std::vector<std::string>& conditions);

/// OpenCL C storage type of a data type (f16 and bf16 are ushort bit patterns, the 8-bit floats uchar); for
/// u4 and i4 the type their values travel in (uchar, char) and that their buffers' pointers have (a byte:
/// two elements, kernels_cl/common.cl's CR_U4_AT and CR_NIB_STORE read and write one).
std::string cl_type(DataType t);

/// Why work-items that each write pairs of consecutive destination tuples (`pairs`: the generic kernel) or
/// whole runs of the innermost digit (the agnostic kernel) would share a byte of `dst`, a u4 or i4 layout;
/// "" when none would (or `dst` is of a whole-byte type). Runs fill whole bytes when the innermost digit has
/// stride 1 and an even extent and the other strides and the base offset are even; pairs also in a dense
/// plan, whatever its base.
std::string shared_bytes(const Layout& dst, bool pairs);

/// A lane's coordinate on an axis: the expression `base` plus the constant `offset` (kept apart so that lanes
/// differing only in it are seen to read one entry or consecutive ones), which is the logical coordinate
/// (span 0), or the padded coordinate v = c + lower, v in [0, span), that a kernel's padded tables are
/// indexed by (TableShape) and that padding lanes take outside [0, dim). `align`: the logical coordinate
/// (base + offset - lower) is known to be a multiple of it, so that lanes from it on within a group's size
/// share their group (one read, no select).
struct TableIndex {
  std::string base;
  int64_t offset = 0;
  int64_t lower = 0;
  int64_t span = 0;
  int64_t align = 1;
};

/// The coordinate on `axis` of lane `lane` (0 for a scalar) of a converted value, in a kernel that has it.
using CoordExpr = std::function<TableIndex(int axis, int lane)>;

/// Expression converting `v` (of cl_type() of the problem's source type, or a vector of `width` of them) to
/// its destination type, with the rules of convert_element() under the problem's conversion and, when it has
/// parameters, their arithmetic (as apply_params()). Indexed parameters read their table (value_tables())
/// or buffer argument (value_args()) at `coord`, which a kernel must then give (a vector reads one entry
/// where its lanes agree, one vector load where a padded table's are consecutive, else gathers).
std::string convert_expr(const ReorderParams& p, const std::string& v, int width = 1, const CoordExpr& coord = nullptr);

/// How a kernel indexes a per-index table on an axis: entry i holds the value of coordinate i - lower, and
/// the table has `size` entries (zero outside the values), so padded coordinates in [0, size) index it.
struct TableShape {
  int64_t lower = 0;
  int64_t size = 0;
};
/// A kernel's TableShape per axis (null: tables indexed by logical coordinate, `size` the axis' extent).
using TableShapes = std::function<TableShape(int axis)>;

/// Program-scope __constant tables of the indexed constant parameters of `conv`, one per parameter, named
/// after KERNEL_NAME (so kernels of one program, batch copies included, never share a name); "" when none.
/// One value per index (ParamValues::one_per_index()) is indexed by coordinate, or as `shape(axis)` says;
/// groups and rows hold their count() values, indexed by ParamValues::index() of clamped coordinates.
std::string value_tables(const Conversion& conv, const TableShapes& shape = nullptr);

/// A conversion of an 8-bit integer source (u8, i8) as a lookup of every result, computed on the host by the
/// reference's own convert_value(): for a kernel's few lanes converted one by one (a 3-channel image's tail
/// in blocks of 16), a lookup each costs less than a conversion with arithmetic or to a narrow float.
/// `axis` >= 0: one row of 256 results per index of it (the per-index parameters' axis), else one row.
struct ByteTable {
  bool usable = false;
  int axis = -1;
  int64_t rows = 1;
};
/// Whether the conversion of `p` can be a ByteTable whose lanes step along `lane_axis`: an 8-bit integer
/// source, a destination of 1 to 4 bytes, arithmetic or a narrow float destination (else the conversion is
/// cheaper than a lookup), constant parameters per tensor or per index of `lane_axis`, at most 4096 results.
ByteTable byte_table(const ReorderParams& p, int lane_axis);
/// The table's program-scope __constant line (for CR_VALUE_TABLES), named after KERNEL_NAME.
std::string byte_table_text(const ReorderParams& p, const ByteTable& t);
/// The converted value of source element `byte` (an 8-bit expression) at the padded coordinate `at` of the
/// table's axis (unused for one row): one read of the table.
std::string byte_table_read(const ReorderParams& p, const ByteTable& t, const std::string& byte, const TableIndex& at);

/// The kernel arguments of the parameters of `conv` from device buffers (ParamValues::from_buffer), each
/// ", __global const float* restrict cr_values<n>" (int for zero points), in Param order, then
/// ", __global uint* restrict cr_comp" where it writes compensation sums: CR_VALUE_ARGS, which
/// CR_REORDER_ARGS ends with; "" when none.
std::string value_args(const Conversion& conv);

/// The code that adds destination values to their compensation sums (Conversion::compensation) in the
/// kernel argument cr_comp (value_args()): `begin` declares a work-item's running sum, `add` (of a value `v`,
/// at the coordinates `coord` gives, the extent of an axis being `dim`) adds to it, first adding the sum of
/// the run before with one atomic where the index changes, and `end` adds the last run. All "" when the
/// conversion has none. Work-items of any implementation may share a sum.
struct CompensateMacros {
  std::string begin, add, end;
};
CompensateMacros compensate_macros(const Conversion& conv, const std::function<std::string(int axis)>& coord,
                                   const std::function<std::string(int axis)>& dim);

/// Defines (or with `replace`, sets) CR_COMP_BEGIN, CR_COMP_ADD(v) and CR_COMP_END as `m`.
void def_compensate(Jit& jit, const CompensateMacros& m, bool replace = false);

/// Whether the kernel of `conv` divides: a div or dst-scale from a device buffer, whose reciprocal it computes
/// (constant divisors arrive as reciprocals, operand_of()).
bool divides(const Conversion& conv);

/// The build options of a generated program's `code` on `device`: OpenCL C 1.2, and a correctly rounded
/// division where the code defines CR_DIVIDES 1 (reorder_jit()) and the device can, CLREORDER_BUILD_OPTIONS's
/// macro definitions (anything else there throws, naming it), and on NVIDIA's driver under CLREORDER_BUILD_LOG=1
/// its verbose build (registers and spills in the log).
std::string build_options(const std::string& code, const DeviceInfo& device);

/// CLREORDER_BUILD_LOG: true for 1, false unset or empty; anything else throws, naming it.
bool build_log_wanted();

/// k where v == 2^k; -1 where v is not a power of two (a division or modulus by v then stays one).
int log2_exact(int64_t v);

/// Elements of `t` in 4 bytes (1 for 4- and 8-byte types, and for u4 and i4, which no vector path takes): the
/// unit a store can be widened to.
int64_t pack_of(DataType t);

/// How a vector store may go, as the caller has proved from the offsets (apart from the runtime base).
struct StoreAlign {
  bool packable = false;   ///< ptr's offset is a multiple of pack_of(t) elements
  bool streams = false;    ///< ptr's offset is a multiple of the store's width, and streaming pays (stream_pays)
  bool unaligned = false;  ///< 8- and 16-bit vectors go as one unaligned store at any offset (unaligned_vectors())
};

/// Whether 8- and 16-bit vectors may move at any offset in one unaligned access (CR_LOADU / CR_STOREU,
/// kernels_cl/common.cl): CPU tunings, whose loads and stores take any address in one instruction. Elsewhere
/// they move as aligned uints only where the caller proved the offsets allow it, behind the base's run-time
/// test (src_wide / dst_wide, see CR_REORDER_BEGIN).
bool unaligned_vectors(const DeviceInfo& dev);

/// Statement storing `value` (a vector of `width` elements of `t`) at element pointer `ptr`. PoCL splits
/// vstoreN of 8- and 16-bit elements into scalar stores, so such a store goes as one unaligned vector store
/// where `align.unaligned`, else as uints where `align.packable`, guarded by dst_wide. A streaming store of 16
/// to 64 bytes goes through CR_STREAM_STORE, guarded by dst_a64.
std::string vstore_stmt(DataType t, int width, const std::string& value, const std::string& ptr, StoreAlign align);

/// Expression loading a vector of `width` elements of `t` at element pointer `ptr`. PoCL narrows vloadN of
/// 8- and 16-bit elements that feed shuffles into 2-, 4- and 8-byte pieces and reassembles them, so such a
/// load goes as one unaligned vector load where `unaligned` (unaligned_vectors()), else as uints where the
/// caller has proved the offset a multiple of pack_of(t) elements (`packable`, apart from the runtime base),
/// guarded by src_wide.
std::string vload_expr(DataType t, int width, const std::string& ptr, bool packable, bool unaligned = false);

/// Expression for `vec` source elements from element offset `off` of `src`: vload_expr() of them, or for u4 and
/// i4 vec / 2 bytes (`off` even) from byte offset `bytes` where given, else off / 2, unpacked to 8-bit lanes
/// (common.cl's cr_nib_unpack_*, low nibble first, i4 sign-extended); `packable` then means a multiple of 8
/// nibbles apart from the runtime base.
std::string src_vector(DataType t, int vec, const std::string& off, bool packable, bool unaligned,
                       const std::string& bytes = "");

/// The share of a CPU device's cache its stores count on, per compute unit: a few cores of a host whose last
/// level is shared by many more (a 2-vCPU VM on a Xeon reporting 260 MiB) keep no quarter of it. On such a
/// host a reorder and its consumer broke even streamed at about 20-25 MB of source and destination, against
/// 65 MiB by the quarter alone (NOTES, "Streaming from 12 MiB per core").
constexpr uint64_t kStreamBytesPerComputeUnit = uint64_t{12} << 20;

/// The bytes of source and destination past which a reorder streams its stores (stream_pays()): 1/4 of the
/// device's global memory cache, and at most kStreamBytesPerComputeUnit per compute unit where their number is
/// known; the largest uint64_t for a GPU or an unknown cache (never streams).
uint64_t stream_threshold(const DeviceInfo& device);

/// Whether a reorder should stream its stores: its source and destination together exceed stream_threshold().
/// Past that a reorder and its consumer together ran faster streamed than with the destination left in cache (a
/// copy of it timed after the kernel, caches warm or evicted: NOTES, "Streaming from a quarter of the cache",
/// "Streaming from 12 MiB per core"); a normal store first reads every line it writes. CPU devices only: the
/// reason is a CPU cache's write-allocate, which a GPU's L2 does not do for whole lines, and no GPU was
/// measured faster with them.
bool stream_pays(const Layout& src, const Layout& dst, const DeviceInfo& device);

/// The same rule for a kernel that reads and writes `bytes` bytes in all (the benchmarks' copy kernel).
bool stream_pays(uint64_t bytes, const DeviceInfo& device);

/// Source prefetching in CPU tilings (CR_PREFETCH, kernels_cl/common.cl): where a tile reads source rows that lie
/// kPrefetchRowBytes or more apart, each in another page, it reads more streams at once than a core's hardware
/// prefetcher follows; each row's load then comes with a hint for the line kPrefetchAhead bytes further along.
constexpr int64_t kPrefetchRowBytes = 2048, kPrefetchAhead = 128;
/// Tiled transposes prefetch rows from this far apart where the reorder streams (its data
/// comes from memory; impl_tiled.cpp says what was measured).
constexpr int64_t kNearPrefetchRowBytes = 256;

/// Whether a tile of `p` whose nearest two source rows lie `row_elems` source elements apart prefetches them:
/// the CPU tuning, a whole-byte source type, rows kPrefetchRowBytes or more apart.
bool prefetches_rows(const ReorderParams& p, int64_t row_elems);

/// The condition that `var`, a loop index stepping by `step` source elements along a row, starts a 64-byte line's
/// worth of them (a hint per line, not per step), or "" where each step covers a line or more or the reorder
/// streams (a hint every step).
std::string once_per_line(const ReorderParams& p, const std::string& var, int64_t step);

/// The hint for a row whose load reads from source element offset `off` (an expression), under `when` (joined
/// with &&; none: always): into the second-level cache only where the reorder streams (stream_pays(): its data
/// comes from memory), into every level otherwise.
std::string prefetch_stmt(const ReorderParams& p, const std::string& off, const std::vector<std::string>& when);

/// Which tile and work-group sizes a device gets. Both are correct on every device; they only move speed.
enum class Tuning { cpu, gpu };

/// The tuning for a device: CLREORDER_TUNING=cpu|gpu forces one (so tests run both on every device, and the
/// GPU configurations meet Oclgrind's bounds checks); else CPUs get cpu and every other type gpu. Any
/// other value of the variable is an error naming it.
Tuning tuning_of(const DeviceInfo& dev);

/// The largest magnitude any index expression of a reorder between these layouts can take: both layouts'
/// spans and digit spaces, and every offset and coordinate the strided permutation walks (tuples past a tail
/// included, which are computed though never accessed).
int64_t index_bound(const Layout& src, const Layout& dst);

/// Whether offsets and indices of these layouts need 64-bit arithmetic: index_bound() reaches half of
/// INT_MAX, or CLREORDER_INDEX_BITS=64 forces it (any other value is an error naming it).
bool needs_64bit(const Layout& a, const Layout& b);

/// Expression for plan.offset(c) (without base), given coordinate expressions coord[axis].
/// b_fs_yx_fsv16, dims (1,32,7,7): "c0 * 1568 + c1 / 16 * 784 + c2 * 112 + c3 * 16 + c1 % 16".
std::string offset_expr(const IndexPlan& plan, const std::vector<std::string>& coord);

/// Statements decoding digit tuple `p` (a variable) of `plan`: they declare IDX_T <pre>c0..<pre>c{r-1}
/// (logical coordinates, meaningless where invalid), IDX_T <pre>off (element offset without base) and
/// bool <pre>valid (false on padding). Lines joined with " \\\n" so the text can be a macro body.
std::string decode_stmts(const IndexPlan& plan, const std::string& p, const std::string& pre);

/// Coordinate variable names <pre>c0..<pre>c{rank-1}.
std::vector<std::string> coord_names(int rank, const std::string& pre);

/// The canonical row-major index of coordinate expressions `coord` in `dims`: ((c0 * D1 + c1) * D2 + c2)...
std::string row_major_index(const Dims& dims, const std::vector<std::string>& coord);

/// Statements that split the row-major index in the IDX_T variable `var` (consumed) into IDX_T coordinates
/// named `coord` over `dims`.
std::vector<std::string> split_row_major(const Dims& dims, const std::string& var, const std::vector<std::string>& coord);

/// Round `n` up to a multiple of `m`.
inline size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

}  // namespace clreorder
