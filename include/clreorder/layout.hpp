// clreorder: layouts (format + data type + logical dims + padding) and their index plan, the one offset
// model that the host reference evaluates and the kernel selector prints as OpenCL C.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "clreorder/format.hpp"

namespace clreorder {

/// Element types. f16 and bf16 travel as 16-bit patterns (PoCL has no cl_khr_fp16), f8e4m3 and f8e5m2 (OCP
/// 8-bit floats, OpenVINO's names) as bytes; f64 needs a device with double support (cl_khr_fp64). u4 and i4
/// go two to a byte, the element at the lower offset in the low nibble (OpenVINO's order): their offsets count
/// nibbles, and a layout of an odd number of them ends in a half byte that is its own padding.
enum class DataType { f32, f16, bf16, i8, u8, i32, i64, i16, u16, u32, u64, f64, f8e4m3, f8e5m2, u4, i4 };

/// Name of a data type ("f32", "f16", ...).
const char* to_string(DataType t);
/// Parses a type name ("f32", "u16", ... as all_data_types() lists them, or oneDNN's and PyTorch's spelling:
/// "s8", "f8_e4m3", "bfloat16", "float8_e4m3fn", ...); throws naming the value otherwise.
DataType parse_data_type(const std::string& name);
/// Bytes per element; throws for u4 and i4, whose elements are half a byte (bits_of(), unit_bytes()): a byte
/// count computed for them as for the others would be silently wrong.
size_t size_of(DataType t);
/// Bits per element: 4 for u4 and i4, else 8 * size_of().
int bits_of(DataType t);
/// Bytes of the unit a buffer offset of this type must be a multiple of, and that the kernels' pointers
/// step by: size_of(), and 1 for u4 and i4 (a whole byte: two elements).
size_t unit_bytes(DataType t);
/// Whether the type packs two elements into a byte (u4, i4).
bool is_nibble(DataType t);
/// Bytes that `elements` consecutive elements of `t` occupy (a trailing half byte counts whole).
int64_t bytes_of(DataType t, int64_t elements);
/// Whether the type is a float (f32, f16, bf16, f64, f8e4m3, f8e5m2).
bool is_floating(DataType t);
/// Whether the type is an unsigned integer (u4, u8, u16, u32, u64).
bool is_unsigned(DataType t);
/// "f32, f16, bf16, ..." for messages and help texts.
std::string data_type_names();
/// All data types, for listings and tests.
const std::vector<DataType>& all_data_types();

/// How a conversion rounds a value its destination type cannot hold exactly (a float to an integer, or to a
/// narrower float). Defaults to IEEE's nearest-even; toward_zero truncates, as C casts and OpenVINO's GPU
/// plugin do.
enum class Rounding { nearest_even, toward_zero };
/// What a conversion to an integer type does with a value outside the type's range: clamp to it, or keep the
/// value modulo 2^bits (two's complement, as a C cast between integers; OpenVINO's `truncate` mode). Float
/// destinations follow IEEE whatever the mode (overflow to infinity when rounding to nearest, to the largest
/// finite value toward zero; f8e4m3, which has no infinity, overflows to NaN as OpenVINO's conversion).
enum class Overflow { saturate, wrap };

/// What a reorder writes into the destination's padding (blocked tails, alignment, explicit padding): zeros
/// (the default, which weights need: a convolution reads the tails of its blocks), or nothing, leaving those
/// bytes as they were (activations whose consumer ignores them; OpenVINO's GPU plugin dropped the zero fill
/// for speed). Bytes the layout does not own (gaps of strided views, other TPU tensors) are never written.
enum class Padding { zero, keep };

/// Logical dims, coordinates and paddings, in the canonical axis order of the format.
using Dims = std::vector<int64_t>;

/// One value of the arithmetic a reorder fuses into its pass (oneDNN's quantization, OpenVINO's mean modes),
/// in the order they apply: see Conversion::params.
enum class Param { src_zero_point, sub, src_scale, mul, div, dst_scale, dst_zero_point };
/// Number of Param values.
constexpr int kParams = 7;
/// Every Param in the order they apply.
const std::vector<Param>& all_params();
/// Its option name: "src-zero-point", "sub", "src-scale", "mul", "div", "dst-scale", "dst-zero-point".
const char* to_string(Param p);
/// The operation it stands for, as C writes it: '-' (zero point, sub), '*' (src-scale, mul), '/' (div,
/// dst-scale) or '+' (dst-zero-point).
char operation_of(Param p);
/// The operation it applies: a division by `a` is applied as a multiplication by operand_of(p, a), the f32
/// reciprocal (as oneDNN's reorders apply destination scales). The host reference and the kernels both take
/// it from here and from operand_of().
char applied_operation(Param p);
/// The f32 operand its applied operation takes for its value `a`: `a`, or 1/a rounded once to nearest even
/// for a division (which values check_params() accepts: a finite reciprocal).
float operand_of(Param p, float a);
/// Whether it is a zero point (an integer).
bool is_zero_point(Param p);

/// One parameter of the fused arithmetic: absent, one value for the whole tensor, one value per index of one
/// of the destination's logical axes (per channel), or one per group of `group` consecutive indices of that
/// axis for each index of another (int4 LLM weights: groups of 32 to 128 along i for every o). The values
/// are constants the kernel is compiled with, or arrive at run time in a device buffer (`from_buffer`: one
/// kernel then serves every set of values, and a weight's scales can come from another kernel).
struct ParamValues {
  /// The values, row-major over (index of `outer_axis`, group of `axis`): count() of them. Empty and not
  /// from_buffer: absent. With from_buffer they serve only the host reference (which needs them).
  std::vector<float> values;
  int axis = -1;        ///< -1: per tensor (one value); else the canonical axis the values are indexed by
  int64_t group = 1;    ///< consecutive indices of `axis` that share one value (the last group may be short)
  int outer_axis = -1;  ///< the axis each group's row repeats for (one row per index), or -1: one row
  /// The kernel reads the values from a device buffer at run time (ReorderOptions::param_buffers): count()
  /// f32 (scales, sub, mul, div) or i32 (zero points, as oneDNN's), used as they are (no checks on device).
  bool from_buffer = false;
  /// Whether the parameter takes part.
  bool present() const { return !values.empty() || from_buffer; }
  /// Whether it is one constant per index of `axis` (no groups, no rows, not from a buffer): the specialised
  /// kernels pad such a table to their padded coordinates and read consecutive lanes as one vector.
  bool one_per_index() const { return axis >= 0 && group == 1 && outer_axis < 0 && !from_buffer; }
  /// The number of values on a destination of logical dims `dims`.
  int64_t count(const Dims& dims) const;
  /// The index into the values of the element at logical coordinate `coord` (within `dims`).
  int64_t index(const int64_t* coord, const Dims& dims) const;
  /// Whether two parameters are the same values on the same axes (bit for bit: -0 and 0 differ).
  bool operator==(const ParamValues& o) const;
};

/// oneDNN's zero-point compensation of int8 weights, written by the reorder that quantizes them: for each index
/// of `axis` (the output channel o), and of `outer_axis` for grouped weights (g), the sum of every destination
/// value (the quantized weights, as integers) at those indices, as an i32 that wraps modulo 2^32. A
/// convolution with an asymmetric (zero-point) input subtracts zp * sum from each output instead of
/// re-reading its weights. The sums go into a second device buffer in the same reorder
/// (ReorderOptions::compensation), row-major over (outer_axis, axis).
struct Compensation {
  int axis = -1;        ///< -1: none; else the canonical axis the sums are indexed by
  int outer_axis = -1;  ///< -1, or the axis each row of sums repeats for
  /// Whether the reorder writes sums.
  bool present() const { return axis >= 0; }
  /// The number of sums on a destination of logical dims `dims`.
  int64_t count(const Dims& dims) const;
  /// The index into the sums of the element at logical coordinate `coord` (within `dims`).
  int64_t index(const int64_t* coord, const Dims& dims) const;
  /// Whether two are the same axes.
  bool operator==(const Compensation& o) const { return axis == o.axis && outer_axis == o.outer_axis; }
};

/// How a reorder writes its destination: how values change on their way between the data types, and what
/// padding gets. Part of the problem (the kernel is specialised to it), not of its memory layouts. The
/// default is the library's rule since its start.
struct Conversion {
  Rounding rounding = Rounding::nearest_even;  ///< how inexact values round
  Overflow overflow = Overflow::saturate;      ///< what out-of-range values become in an integer type
  Padding padding = Padding::zero;             ///< whether the destination's padding gets zeros
  /// The fused arithmetic, indexed by Param. With any present, every element goes: source value to f32 (to
  /// nearest even), then in f32, each operation rounded on its own (no fused multiply-add), in this order
  /// x = ((((((x - src_zero_point) - sub) * src_scale) * mul) * (1 / div)) * (1 / dst_scale)) + dst_zero_point,
  /// skipping absent ones, then f32 to the destination type by `rounding` and `overflow`. That is oneDNN's
  /// dst = saturate(round((src - src_zp) * src_scale / dst_scale + dst_zp)) and OpenVINO's mean modes.
  /// A division multiplies by the divisor's f32 reciprocal (operand_of(): oneDNN's reorders do the same), so
  /// a result may differ from a true division by an ulp before the final rounding; constant reciprocals are
  /// computed on the host, those of values in device buffers by the kernel, correctly rounded on devices with
  /// CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (DeviceInfo::exact_divide; elsewhere OpenCL allows 2.5 ulp).
  /// Zero points are integers (held exactly as f32 up to 2^24). A NaN result is the quiet NaN 0x7fc00000
  /// (devices differ in the payload an operation gives a NaN).
  std::array<ParamValues, kParams> params;
  /// The sums of the destination's values the reorder writes beside it (none by default); the destination
  /// type is then an integer type of at most 32 bits.
  Compensation compensation;
  /// Parameter `p`.
  const ParamValues& param(Param p) const { return params[static_cast<size_t>(p)]; }
  /// Parameter `p`, to set.
  ParamValues& param(Param p) { return params[static_cast<size_t>(p)]; }
  /// Whether any parameter is present (the elements go through f32 arithmetic).
  bool has_arithmetic() const;
  /// Whether any present parameter has values indexed by an axis (kernels need each element's coordinate).
  bool per_index() const;
  /// Whether any present parameter comes from a device buffer (the kernel takes them as arguments).
  bool from_buffers() const;
  /// Text for cache keys and messages: "" for the default, else "round=toward-zero,overflow=wrap,padding=keep"
  /// and parameters as "src-scale=0x1p-3", "sub@1=0x1.ecp+6/0x1.d1p+6/..." (axis, then every value, exact),
  /// "src-scale@0/1g128=..." (rows on axis 0, groups of 128 along axis 1) or "src-scale@1=buffer" (run-time
  /// values: the kernel does not depend on them), "compensation=0/1" (sums per index of axes 0 and 1), the
  /// fields that differ from the default.
  std::string key() const;
  /// key() with each list of more than `max_values` values cut to its first ones and its count
  /// ("dst-scale@0/1g32=0x1.47ae14p-6/...(4096 values)"): for messages, since int4 weights carry thousands.
  std::string summary(size_t max_values = 8) const;
  /// Whether two conversions write the same bytes.
  bool operator==(const Conversion& o) const {
    return rounding == o.rounding && overflow == o.overflow && padding == o.padding && params == o.params &&
           compensation == o.compensation;
  }
  /// Negation of ==.
  bool operator!=(const Conversion& o) const { return !(*this == o); }
};
/// "nearest-even" or "toward-zero".
const char* to_string(Rounding r);
/// "saturate" or "wrap".
const char* to_string(Overflow o);
/// Parses "nearest-even" or "toward-zero"; throws naming the value otherwise.
Rounding parse_rounding(const std::string& name);
/// Parses "saturate" or "wrap"; throws naming the value otherwise.
Overflow parse_overflow(const std::string& name);
/// "zero" or "keep".
const char* to_string(Padding p);
/// Parses "zero" or "keep"; throws naming the value otherwise.
Padding parse_padding(const std::string& name);
/// A float as C's exact hexadecimal text ("0x1.8p+1"): cache keys, and literals the device compiler reads
/// back bit for bit.
std::string hex_float(float v);
/// Parses a Param's option name ("src-scale", "sub", ...); throws naming the value otherwise.
Param parse_param(const std::string& name);


/// One digit of the plan: the dim index it reads, how, and where it lands in memory.
/// b_fs_yx_fsv16, dims (1,32,7,7): digits b, f/16, y, x, f%16 with strides 1568, 784, 112, 16, 1.
struct PlanDigit {
  int dim = 0;            ///< index into IndexPlan::dims
  int64_t divisor = 1;    ///< digit value = (dim value / divisor) % extent
  int64_t extent = 1;
  int64_t stride = 1;     ///< elements between consecutive values of this digit
  bool needs_mod = true;  ///< false for the outer part (slice) of its dim: its value is already < extent
};

/// One physical dim of the plan: the logical axes it combines and their padded extents.
struct PlanDim {
  std::vector<int> axes;        ///< logical axis positions, outer first (one, or several when fused)
  std::vector<int64_t> sizes;   ///< per axis: pad_lower + dim + pad_upper
  std::vector<int64_t> lower;   ///< per axis: pad_lower
  int64_t extent = 1;           ///< product of sizes, rounded up to blocks and alignment
  /// Whether the slots outside the tensor along this dim are the layout's (padding, written as zero). A TPU
  /// layout's channel dim owns none: the slots before its first channel and after its last hold other
  /// tensors, so a reorder never writes them.
  bool owned = true;
};

/// The index plan of a layout: offset(c) = base + sum_k ((value(dim_k, c) / divisor_k) % extent_k) * stride_k,
/// where value(dim, c) combines the padded coordinates of the dim's axes row-major.
struct IndexPlan {
  Dims dims;                      ///< logical dims
  std::vector<PlanDim> pdims;
  std::vector<PlanDigit> digits;  ///< physical order, outer first
  int64_t base = 0;               ///< element offset of the first digit
  int64_t size = 0;               ///< elements the layout spans (padding included), base excluded
  int64_t digit_space = 0;        ///< product of digit extents: every (digit tuple) the layout owns

  /// Element offset of logical coordinate `coord` (in range).
  int64_t offset(const int64_t* coord) const;
  /// Offset of digit tuple number `p` (row-major over digits) and its logical coordinate; returns false
  /// when the tuple is padding (blocked tail, alignment or explicit padding). `owned`, when given, is set to
  /// whether the layout owns the slot (false on a dim that owns no padding: never write it).
  bool decode(int64_t p, int64_t* offset, int64_t* coord, bool* owned = nullptr) const;
  /// Whether the digit strides are dense row-major, so digit tuple p lives at base + p.
  bool dense() const;
};

/// A tensor's memory: format, data type, logical dims and explicit lower/upper padding per logical axis.
/// Padding is applied before blocking: a lower pad of 3 on f shifts feature f to slot f+3.
/// Optionally explicit strides, in elements, one per logical axis in canonical order: the step of the outer
/// part of that axis (of a whole block for a blocked one; the blocks stay dense inside, as in oneDNN), and a
/// base offset in elements. PyTorch's (sizes, strides, storage_offset) and oneDNN's strided or sub-tensor
/// memory descriptors are such layouts. Elements between strided ones (gaps) are not the layout's: a reorder
/// never writes them. A stride of 0 repeats an element (a broadcast source); a destination whose elements
/// would share memory is refused (see overlap()). An immutable value: const members may be called from any
/// thread.
class Layout {
 public:
  /// Validates everything and throws naming the offending value. `strides` empty: the format's own dense
  /// strides.
  Layout(Format format, DataType type, Dims dims, Dims pad_lower = {}, Dims pad_upper = {}, Dims strides = {},
         int64_t base_offset = 0);

  /// The memory format.
  const Format& format() const { return format_; }
  /// The element type.
  DataType data_type() const { return type_; }
  /// Logical dims in canonical axis order.
  const Dims& dims() const { return dims_; }
  /// Explicit lower padding per logical axis.
  const Dims& pad_lower() const { return pad_lower_; }
  /// Explicit upper padding per logical axis.
  const Dims& pad_upper() const { return pad_upper_; }
  /// Explicit strides per logical axis (empty: the format's dense strides).
  const Dims& strides() const { return strides_; }
  /// Element offset of the layout's first element (PyTorch's storage_offset); 0 unless given.
  int64_t base_offset() const { return plan_.base; }
  /// Why two elements of this layout may share memory (naming the strides), or "" when none do. A reorder
  /// refuses such a destination; as a source it is fine (broadcast).
  const std::string& overlap() const { return overlap_; }
  /// Number of logical axes.
  int rank() const { return format_.rank(); }
  /// The index plan every offset comes from (host reference and generated kernels alike).
  const IndexPlan& plan() const { return plan_; }

  /// Logical element count (product of dims).
  int64_t logical_elements() const;
  /// Physical element count: blocked axes rounded up, padding included.
  int64_t elements() const { return plan_.base + plan_.size; }
  /// Physical size in bytes.
  int64_t bytes() const { return bytes_of(type_, elements()); }
  /// Element offset of a logical coordinate; throws naming it when out of range.
  int64_t offset(const Dims& coord) const;
  /// "b_fs_yx_fsv16 f32 2x3x4x5 pad_lower 0,0,1,1 pad_upper 0,0,1,1", for messages and logs.
  std::string describe() const;
  /// A string naming the layout exactly (format, type, dims, paddings), computed once; cache keys use it.
  const std::string& key() const { return key_; }
  /// Same layout with another data type.
  Layout with_type(DataType t) const { return Layout(format_, t, dims_, pad_lower_, pad_upper_, strides_, plan_.base); }

 private:
  void apply_strides(const std::string& where);  // explicit strides into plan_, overlap_
  void apply_tpu(const std::string& where);      // a TPU placement's strides, base and channel scatter
  Format format_;
  DataType type_;
  Dims dims_, pad_lower_, pad_upper_, strides_;
  IndexPlan plan_;
  std::string key_, overlap_;
};

/// Whether two layouts put every element at the same offset and own the same padding (the plans agree on
/// every digit that counts), whatever their formats are called: a strided bfyx with byxf's strides equals byxf.
bool same_elements(const Layout& a, const Layout& b);

/// The registered format whose layout (same type, dims and padding, dense) puts every element where `l` does,
/// as "byxf (channels_last)"; "" when none does. A runtime can then take that format's kernels for a view.
std::string named_equivalent(const Layout& l);

/// PyTorch's preserve_format rule: the output layout of type `type` for an input `in` keeps in's format,
/// padding and strides when in is dense and non-overlapping (its elements fill its span exactly), else it
/// is the contiguous (canonical plain) layout of in's dims.
Layout preserve_format(const Layout& in, DataType type);

/// Throws, naming the parameter, its values and the layout, unless `conv`'s parameters fit a reorder into
/// `dst`: axes of `dst` (the outer one other than the grouped one, and only with it), a group of at least 1,
/// exactly count() values (or none, from a buffer), every value finite, zero points integral, no zero
/// divisor (div, dst-scale), and at most kMaxIndexedValues indexed constants in all (more go in a buffer).
void check_params(const Conversion& conv, const Layout& dst);
/// check_params() without its tests of each value (finite, integral, divisible): for values that passed them
/// before, bit for bit (reorder() and reorder_batch() check their cached kernels' values so, and every value
/// only on a miss).
void check_param_shapes(const Conversion& conv, const Layout& dst);

/// Most per-index values one reorder takes in all: the kernels hold them in __constant memory, of which
/// OpenCL 1.2 guarantees 64 KiB per kernel.
constexpr size_t kMaxIndexedValues = 8192;

/// "3,19,5,7" -> {3,19,5,7}; throws naming the text when a part is not a non-negative integer.
Dims parse_dims(const std::string& text);
/// {3,19,5,7} -> "3x19x5x7" (sep "x") or "3,19,5,7".
std::string dims_to_string(const Dims& d, const char* sep = "x");

}  // namespace clreorder
