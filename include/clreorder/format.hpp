// clreorder: tensor memory formats as data.
// A Format is a kind, a list of logical axes in canonical order and a list of physical levels from outer
// to inner. Names are parsed by a grammar (OpenVINO style: b_fs_yx_fsv16, os_is_yx_osa4_isa8_osv8_isv4,
// iy_xs_os_xsv2_osv8__ao32, ..._swizzled_by_4) and printed back from the data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace clreorder {

/// What a tensor holds, which fixes the canonical axis order: data b,f,[v,u,w,z],y,x;
/// weights o,i,[z],y,x; grouped weights g,o,i,[z],y,x.
enum class FormatKind { data, weights, grouped_weights };

/// Printable name of a FormatKind ("data", "weights", "grouped_weights").
const char* to_string(FormatKind kind);

/// A physical dimension: one logical axis, or several fused into one index (the `yx` of
/// `gs_oi_yxs_gsv16_yxsv4` is y*X+x), with an optional alignment of its extent (`__ai32`).
struct Dim {
  std::string axes;   ///< logical axis letters, outer first ("f", or "yx" when fused)
  int64_t align = 1;  ///< the padded extent is rounded up to a multiple of this (and of the blocks)
  /// Same axes and alignment.
  bool operator==(const Dim& o) const { return axes == o.axes && align == o.align; }
};

/// One physical level as written in a name: the outer part of a dim (plain letter or slice `fs`) or one of
/// its blocks (`fsv16`, `osa4`).
struct Level {
  int dim = 0;             ///< index into Format::dims()
  int64_t block = 0;       ///< block size; 0 for the outer part (its extent follows from the shape)
  char tag = 'v';          ///< how a block is written: 'v' (fsv16) or 'a' (osa4)
  bool new_token = true;   ///< starts a new '_'-separated token (keeps `fs_b_yx` distinct from `fs_byx`)
  /// Same dim and block (the spelling fields do not change the element order).
  bool operator==(const Level& o) const { return dim == o.dim && block == o.block; }
};

/// One mixed-radix digit of a dim in physical order: value = (dim_index / divisor) % extent.
/// Blocks give the divisors directly; swizzles reorder digits inside a tile.
struct Digit {
  int dim = 0;           ///< index into Format::dims()
  int64_t divisor = 1;   ///< weight of this digit inside the dim's index
  int64_t extent = 0;    ///< digit range; 0 for the outermost digit, whose extent follows from the shape
};

/// Where a Sophgo TPU tensor lives in local memory (seed 001): `npus` NPUs of `npu_bytes` bytes each; the
/// tensor starts at address addr = Q * npu_bytes + R (NPU Q, offset R); channel c is on NPU (Q + c) mod npus
/// in slot (Q + c) div npus. The strides follow from the rule, the shape and the type (aligned: C stride
/// rounded up to 128 bytes; compact: dense; local: given; matrix: an N x M matrix as (N, ceil(M/w), 1, w)
/// aligned). Storage modes pack 4 (4n, int8), 2 (2n, int16) or 2 (2ic, fp32 weights, input channels)
/// elements into one storage element, padding with zeros.
struct TpuPlacement {
  std::string rule;             ///< "local", "aligned", "compact" or "matrix"
  int64_t npus = 0, npu_bytes = 0, addr = 0;
  std::vector<int64_t> strides; ///< local: N, C, H, W strides in storage elements
  int64_t w = 0;                ///< matrix: the row width W
  std::string mode;             ///< "" (none), "4n", "2n" or "2ic"
  /// Elements per storage element (4 for 4n, 2 for 2n and 2ic, else 1).
  int64_t pack() const { return mode == "4n" ? 4 : mode.empty() ? 1 : 2; }
  /// The logical axis scattered over the NPUs (the TPU's C): o of 2ic weights [I, O, H, W], else f; the
  /// other of the first two axes is the TPU's N.
  int channel_axis() const { return mode == "2ic" ? 0 : 1; }
  /// Same parameters.
  bool operator==(const TpuPlacement& o) const {
    return rule == o.rule && npus == o.npus && npu_bytes == o.npu_bytes && addr == o.addr && strides == o.strides &&
           w == o.w && mode == o.mode;
  }
};

/// Channels each NPU holds for `channels` channels starting on NPU `start` of `npus`: ceil((start + C) / X).
int64_t tpu_channels_per_npu(int64_t start, int64_t channels, int64_t npus);

/// A tensor memory format: kind, logical axes and physical levels. Equality compares the element order,
/// not the spelling of the name. An immutable value: const members may be called from any thread.
class Format {
 public:
  /// Parses a format name; throws clreorder::Error naming the name and the offending part.
  static Format parse(const std::string& name);

  /// A plain format from logical axis letters in physical order, e.g. plain("byxf").
  static Format plain(const std::string& order) { return parse(order); }

  /// Canonical name, printed from the data: parse(n).name() == n for every canonical name n.
  std::string name() const;
  /// Data, weights or grouped weights (from the axes used).
  FormatKind kind() const { return kind_; }
  /// Logical axis letters in canonical order ("bfyx", "oizyx", "goiyx").
  const std::string& axes() const { return axes_; }
  /// Number of logical axes.
  int rank() const { return static_cast<int>(axes_.size()); }
  /// Physical order of the outer parts of the dims, outer first, e.g. "bfyx" for b_fs_yx_fsv16.
  std::string order() const;
  /// Physical dims (one or several fused axes each), in order of first appearance in the name.
  const std::vector<Dim>& dims() const { return dims_; }
  /// Levels as written in the name, outer first.
  const std::vector<Level>& levels() const { return levels_; }
  /// Effective digits in physical order (blocks resolved to divisors, swizzle applied).
  const std::vector<Digit>& digits() const { return digits_; }
  /// Blocks in physical order as "f16" or "o4 i8 o8 i4"; "-" when unblocked.
  std::string blocks_string() const;
  /// Whether any axis is split into blocks.
  bool is_blocked() const;
  /// Swizzle factor of the o tile (OpenVINO `_swizzled_by_N`), 0 when none.
  int64_t swizzle() const { return swizzle_; }
  /// Index of the dim holding logical axis `axis` (position in axes()).
  int dim_of_axis(int axis) const;
  /// Whether a dim's outer part is a slice (written "fs", "yxs"): it has blocks or fuses several axes.
  bool dim_is_sliced(int dim) const;
  /// The TPU placement of a tpu_* format (its digits are those of the underlying blocked format, the NPU
  /// being a block of the channel axis), nullptr for every other format.
  const TpuPlacement* tpu() const { return tpu_.empty() ? nullptr : &tpu_.front(); }

  /// Same element order (kind, axes, dims, levels, swizzle), whatever the token grouping of the names.
  bool operator==(const Format& o) const;
  /// Different element order.
  bool operator!=(const Format& o) const { return !(*this == o); }

 private:
  void finish(const std::string& name);  // validates and derives digits_
  static Format parse_tpu(const std::string& name);
  FormatKind kind_ = FormatKind::data;
  std::string axes_;
  std::vector<Dim> dims_;
  std::vector<Level> levels_;
  std::vector<Digit> digits_;
  int64_t swizzle_ = 0;
  std::vector<TpuPlacement> tpu_;  // zero or one
};

/// A registered format: a name known to inference runtimes, or one listed as not supported with why.
struct FormatEntry {
  std::string name;
  std::string source;        ///< where the row comes from ("openvino": FORMATS.md section 1)
  std::string unsupported;   ///< empty when supported; otherwise the reason
};

/// Every registered format, in the order of FORMATS.md.
const std::vector<FormatEntry>& registry();

/// The supported registered formats with their names, parsed once (thread-safe static).
const std::vector<std::pair<std::string, Format>>& registered_formats();

/// Parses a registered name or any name the grammar accepts, a oneDNN tag (letter form nChw16c, OIhw4i16o4i,
/// positional form aBcd16b, ABcd8b16a2b) or a PyTorch memory format name (channels_last). A tag or alias
/// equal to a registered OpenVINO format resolves to it. Throws naming the name and the offending part.
Format format_from_name(const std::string& name);

/// Other names of a format: PyTorch names, its oneDNN letter tag and positional tag (none where oneDNN's
/// grammar cannot say it: fused axes, alignment, swizzles).
std::vector<std::string> aliases_of(const Format& f);

/// Whether `s` has the shape of a oneDNN tag (letters and digits, starting with a letter, no '_').
bool looks_like_onednn_tag(const std::string& s);

/// The name in our grammar of a oneDNN tag: nChw16c -> b_fs_yx_fsv16, ABcd8b16a2b -> bs_fs_yx_fsv8_bsv16_fsv2.
/// Positional tags (a = first canonical axis) read as data formats. Throws naming the tag and the part.
std::string onednn_tag_to_name(const std::string& tag);

/// The oneDNN tag of a format: letter form (nChw16c; "" for data axes v, u, w, which have no letter) or
/// positional form (aBcd16b); "" where oneDNN's grammar cannot say it.
std::string onednn_tag(const Format& f, bool positional);

}  // namespace clreorder
