// The performance suite: 56 reorder cases over every family and element size, each timed against two copies
// of the same bytes in the same run, clEnqueueCopyBuffer and our copy kernel (clreorder::bench_reorder);
// "ratio to copy" is to the faster. Writes a markdown table, a CSV and a chart; the README's table comes from
// here.
//   clreorder_suite [--runs N] [--repeat R] [--impl NAME] [--out DIR] [--filter SUBSTRING] [--views | --fused | --impls | --limits]
// --views times strided views with gaps beside their dense twins instead (views.md, views.csv); --fused the
// fused arithmetic beside the plain conversion of the same pair (fused.md, fused.csv); --impls every
// implementation that accepts each case, against each other (impls.md, impls.csv); --limits each case's kernel
// against the copy kernel with the caches evicted and warm, and what bounds it (limits.md, limits.csv).
// Each case is measured R times (each the median of N rounds' ratios, a round's reorder against the copies
// timed beside it); the repeat with the median ratio is reported, which keeps a noisy shared machine from
// deciding the figures.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "clreorder/bench.hpp"
#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/kernel_selector.hpp"
#include "clreorder/reorder.hpp"
#include "kernel_times.hpp"
#include "median.hpp"
#include "../kernel_selector/codegen.hpp"
#include "../tools/pocl_affinity.hpp"
#include "onednn.hpp"

using namespace clreorder;

namespace {

// The device and how PoCL placed its workers (pin_pocl_workers() set POCL_AFFINITY unless the caller had), as
// each table's header names them.
std::string device_line(const Engine& engine) {
  const char* affinity = std::getenv("POCL_AFFINITY");
  return std::string("Device: ") + engine.info().platform + " / " + engine.info().name + " (POCL_AFFINITY=" +
         (affinity ? affinity : "unset") + ")";
}

// Results are the point of a run: a file that cannot be written is an error, not a silent loss.
void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) throw clreorder::Error("cannot write '" + path + "'");
}

// Bars of the ratio to copy per case, with lines at the targets (0.6 floor, 0.9 mean) and at 1.0.
std::string svg_chart(const std::vector<std::pair<std::string, double>>& bars, const std::string& title) {
  const int row = 22, left = 330, width = 420, top = 40;
  const int height = top + row * static_cast<int>(bars.size()) + 40;
  const double scale = width / 1.2;
  std::string out = "<svg xmlns='http://www.w3.org/2000/svg' width='" + std::to_string(left + width + 60) +
                    "' height='" + std::to_string(height) + "' font-family='sans-serif' font-size='12'>\n";
  out += "<rect width='100%' height='100%' fill='white'/>\n";
  out += "<text x='10' y='20' font-size='14'>" + title + "</text>\n";
  char buf[512];
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = top + row * static_cast<int>(i);
    const double r = bars[i].second;
    const char* color = r >= 0.9 ? "#2e7d32" : r >= 0.6 ? "#f9a825" : "#c62828";
    std::snprintf(buf, sizeof buf,
                  "<text x='%d' y='%d' text-anchor='end'>%s</text><rect x='%d' y='%d' width='%.1f' height='%d' "
                  "fill='%s'/><text x='%.1f' y='%d'>%.2f</text>\n",
                  left - 6, y + 14, bars[i].first.c_str(), left, y + 3, std::min(r, 1.2) * scale, row - 6, color,
                  left + std::min(r, 1.2) * scale + 4, y + 14, r);
    out += buf;
  }
  for (double mark : {0.6, 0.9, 1.0}) {
    std::snprintf(buf, sizeof buf,
                  "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#555' stroke-dasharray='4,3'/>"
                  "<text x='%.1f' y='%d' text-anchor='middle'>%.1f</text>\n",
                  left + mark * scale, top - 4, left + mark * scale, height - 30, left + mark * scale, height - 14, mark);
    out += buf;
  }
  return out + "</svg>\n";
}

struct SuiteCase {
  const char* from;
  const char* to;
  const char* shape;
  const char* dtype;
  const char* to_dtype;
  const char* src_pad = "";  // lower = upper padding per axis, "" none
  const char* dst_pad = "";
  // The table's type column: "f32", or "u8->f32" for a conversion.
  std::string types() const { return std::string(dtype) + (std::string(dtype) == to_dtype ? "" : std::string("->") + to_dtype); }
};

// A case of the main list as the main table and --impls time it: its label (formats, shape, paddings) and
// its layouts.
struct PlainCase {
  std::string label;
  Layout src, dst;
};

PlainCase plain_case(const SuiteCase& c) {
  std::string label = std::string(c.from) + " -> " + c.to + " " + c.shape;
  if (*c.src_pad) label += " src pad " + std::string(c.src_pad);
  if (*c.dst_pad) label += " dst pad " + std::string(c.dst_pad);
  const Dims shape = parse_dims(c.shape);
  const Dims sp = *c.src_pad ? parse_dims(c.src_pad) : Dims{}, dp = *c.dst_pad ? parse_dims(c.dst_pad) : Dims{};
  return PlainCase{label, Layout(format_from_name(c.from), parse_data_type(c.dtype), shape, sp, sp),
                   Layout(format_from_name(c.to), parse_data_type(c.to_dtype), shape, dp, dp)};
}

// Whether --filter leaves the case out (it matches the label and the types).
bool filtered_out(const std::string& filter, const PlainCase& pc, const SuiteCase& c) {
  return !filter.empty() && (pc.label + " " + c.dtype + " -> " + c.to_dtype).find(filter) == std::string::npos;
}

// Every family in every element size (8, 16, 32 and 64 bits), both directions where a runtime meets both,
// conversions inside transposes, padded sides, tensors from 1 KB to 100 MB. Chosen for coverage, not for
// speed: the shapes are the ones networks have (ResNet-50's, MobileNet's), whatever they cost us.
const SuiteCase kCases[] = {
    // Plain transposes both ways, 4-D, 5-D and yxfb.
    {"bfyx", "byxf", "8,256,56,56", "f32", "f32"},
    {"byxf", "bfyx", "8,256,56,56", "f32", "f32"},
    {"bfyx", "byxf", "8,64,112,112", "i8", "i8"},
    {"byxf", "bfyx", "8,64,112,112", "u8", "u8"},
    {"bfyx", "byxf", "8,128,56,56", "f16", "f16"},
    {"byxf", "bfyx", "8,128,56,56", "bf16", "bf16"},
    {"bfyx", "byxf", "4,64,56,56", "i64", "i64"},
    {"yxfb", "bfyx", "32,64,28,28", "f32", "f32"},
    {"bfyx", "yxfb", "32,64,28,28", "f16", "f16"},
    {"bfzyx", "bzyxf", "1,32,32,64,64", "f32", "f32"},
    {"bzyxf", "bfzyx", "1,32,32,64,64", "i8", "i8"},
    // Plain <-> blocked, both ways.
    {"bfyx", "b_fs_yx_fsv16", "8,256,56,56", "f32", "f32"},
    {"b_fs_yx_fsv16", "bfyx", "8,256,56,56", "f32", "f32"},
    {"bfyx", "b_fs_yx_fsv16", "1,3,224,224", "f32", "f32"},
    {"bfyx", "b_fs_yx_fsv4", "8,64,112,112", "i8", "i8"},
    {"bfyx", "b_fs_yx_fsv16", "8,64,112,112", "u8", "u8"},
    {"b_fs_yx_fsv32", "bfyx", "8,64,112,112", "i8", "i8"},
    {"byxf", "b_fs_yx_fsv16", "32,64,56,56", "f32", "f32"},
    {"b_fs_yx_fsv16", "byxf", "8,128,56,56", "f16", "f16"},
    {"bfyx", "b_fs_yx_fsv32", "1,64,112,112", "f32", "f32"},
    {"bfzyx", "b_fs_zyx_fsv16", "1,32,32,64,64", "f32", "f32"},
    {"bfyx", "b_fs_yx_fsv16", "4,64,56,56", "i64", "i64"},
    {"b_fs_yx_fsv16", "bfyx", "4,64,56,56", "f64", "f64"},
    // Blocked <-> blocked.
    {"b_fs_yx_fsv16", "b_fs_yx_fsv32", "8,256,56,56", "f32", "f32"},
    {"b_fs_yx_fsv32", "b_fs_yx_fsv16", "8,256,56,56", "f16", "f16"},
    {"b_fs_yx_fsv4", "b_fs_yx_fsv16", "8,64,112,112", "i8", "i8"},
    {"fs_b_yx_fsv32", "bfyx", "8,64,56,56", "f32", "f32"},
    {"bfyx", "fs_b_yx_fsv32", "8,64,56,56", "f16", "f16"},
    // Double-blocked (batch and feature).
    {"bfyx", "bs_fs_yx_bsv16_fsv16", "32,64,56,56", "f32", "f32"},
    {"bs_fs_yx_bsv16_fsv16", "bfyx", "32,64,56,56", "f16", "f16"},
    {"bfyx", "bs_fs_yx_bsv32_fsv32", "32,64,56,56", "i8", "i8"},
    // Weights: isv/osv pairs, int8 multi-level, swizzled, aligned, yxs, and back to plain.
    {"oiyx", "os_is_yx_isv16_osv16", "256,256,3,3", "f32", "f32"},
    {"oiyx", "os_is_yx_isv16_osv16", "256,256,3,3", "f16", "f16"},
    {"oiyx", "os_iyx_osv16", "512,512,1,1", "f32", "f32"},
    {"oiyx", "os_is_yx_osa4_isa8_osv8_isv4", "256,256,3,3", "i8", "i8"},
    {"oiyx", "os_is_yx_osv32_isv4_swizzled_by_2", "256,256,3,3", "i8", "i8"},
    {"oiyx", "os_iyx_osv32__ai32", "256,256,3,3", "f16", "f16"},
    {"oiyx", "i_yxs_os_yxsv2_osv16", "256,256,3,3", "f32", "f32"},
    {"os_is_yx_isv16_osv16", "oiyx", "256,256,3,3", "f32", "f32"},
    {"oiyx", "os_iyx_osv16", "512,512,1,1", "i64", "i64"},
    // Grouped and depthwise weights (a 1 KB one among them).
    {"goiyx", "gs_oiyx_gsv16", "512,1,1,3,3", "f32", "f32"},
    {"goiyx", "g_os_is_yx_isv16_osv16", "32,32,32,3,3", "f16", "f16"},
    {"goiyx", "gs_oiyx_gsv16", "32,1,1,3,3", "f32", "f32"},
    {"goiyx", "g_os_is_yx_osv16_isv4", "32,32,32,3,3", "i8", "i8"},
    // Conversions inside transposes.
    {"bfyx", "b_fs_yx_fsv16", "8,256,56,56", "f32", "f16"},
    {"bfyx", "byxf", "8,64,112,112", "u8", "f32"},
    {"byxf", "bfyx", "8,128,56,56", "f16", "f32"},
    {"bfyx", "b_fs_yx_fsv16", "8,128,56,56", "f32", "bf16"},
    {"bfyx", "b_fs_yx_fsv4", "8,64,112,112", "f32", "i8"},
    {"b_fs_yx_fsv16", "bfyx", "8,64,56,56", "i8", "f32"},
    // Padded sources and destinations (a convolution's input border).
    {"bfyx", "b_fs_yx_fsv16", "8,64,56,56", "f16", "f16", "", "0,0,1,1"},
    {"b_fs_yx_fsv16", "bfyx", "8,64,56,56", "f32", "f32", "0,0,1,1", ""},
    // 4-bit integers, two to a byte (the generic kernel): int4 weights into a blocked layout, and back out.
    {"oiyx", "os_is_yx_isv16_osv16", "256,256,3,3", "f16", "u4"},
    {"b_fs_yx_fsv16", "bfyx", "8,64,56,56", "i4", "f16"},
    // The ends of the size range: 1 KB and about 100 MB.
    {"bfyx", "byxf", "1,16,4,4", "f32", "f32"},
    {"bfyx", "b_fs_yx_fsv16", "16,256,80,80", "f32", "f32"},
};

// Bits of a case's wider element: the element-size class its ratio counts in.
int element_bits(const Layout& src, const Layout& dst) {
  return std::max(bits_of(src.data_type()), bits_of(dst.data_type()));
}

// Strided views with gaps (crops of bigger tensors, channels padded by a stride, a weight slice), each timed
// beside the dense case of the same formats, shape and types: the view's ratio to copy over the dense one's.
// One per family and several element sizes, sources and destinations, plain and blocked sides.
struct ViewCase {
  SuiteCase c;
  const char* src_strides;  // "" dense
  const char* dst_strides;
};

const ViewCase kViewCases[] = {
    // A 56x56 crop of a 60x64 bfyx source.
    {{"bfyx", "b_fs_yx_fsv16", "8,64,56,56", "f32", "f32"}, "245760,3840,64,1", ""},
    {{"bfyx", "byxf", "8,64,56,56", "f32", "f32"}, "245760,3840,64,1", ""},
    {{"bfyx", "byxf", "8,64,56,56", "u8", "f16"}, "245760,3840,64,1", ""},
    // Into a crop of a bigger bfyx destination.
    {{"b_fs_yx_fsv16", "bfyx", "8,64,56,56", "f32", "f32"}, "", "245760,3840,64,1"},
    // Channels-last destination with 8 channels of gap per pixel.
    {{"bfyx", "byxf", "8,64,56,56", "f16", "f16"}, "", "225792,1,4032,72"},
    // Channels-last i8 source with a gap of 16 channels per pixel.
    {{"byxf", "bfyx", "8,64,56,56", "i8", "i8"}, "250880,1,4480,80", ""},
    // A y/x crop of a bigger blocked tensor (strides of whole 16-channel blocks).
    {{"b_fs_yx_fsv16", "bfyx", "8,64,56,56", "bf16", "f32"}, "245760,61440,1024,16", ""},
    // Every other output channel of a weight tensor.
    {{"oiyx", "os_is_yx_isv16_osv16", "256,256,3,3", "f32", "f32"}, "4608,9,3,1", ""},
    {{"oiyx", "os_iyx_osv16", "512,512,1,1", "i64", "i64"}, "1024,1,1,1", ""},
};

// Fused arithmetic (issue 16) beside the plain conversion of the same pair: every family (plain, strided,
// blocked, weights, grouped, TPU), destinations of every float and integer width the arithmetic meets, per
// tensor, per channel, rows of groups, normalisation and compensation sums.
struct FusedCase {
  SuiteCase c;
  const char* src_strides;  // "" dense
  const char* what;         // the parameters, as the CLI's options
  Conversion (*conversion)(const Layout& dst);
};

// `count` values from `first` by `step` (indexed parameters).
std::vector<float> fused_ramp(int64_t count, float first, float step) {
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t k = 0; k < v.size(); ++k) v[k] = first + step * static_cast<float>(k % 17);
  return v;
}

Conversion with(std::initializer_list<std::pair<Param, ParamValues>> params) {
  Conversion c;
  for (const auto& [q, v] : params) c.param(q) = v;
  return c;
}

const FusedCase kFusedCases[] = {
    {{"bfyx", "b_fs_yx_fsv16", "8,64,56,56", "f32", "i8"}, "", "--dst-scale 0.02 --dst-zero-point 3",
     [](const Layout&) { return with({{Param::dst_scale, {{0.02f}}}, {Param::dst_zero_point, {{3}}}}); }},
    {{"bfyx", "b_fs_yx_fsv16", "8,64,56,56", "f32", "i8"}, "", "--dst-scale S0,..,S63 --quant-axis f",
     [](const Layout& d) { return with({{Param::dst_scale, {fused_ramp(d.dims()[1], 0.02f, 0.001f), 1}}}); }},
    {{"byxf", "b_fs_yx_fsv16", "8,3,224,224", "u8", "f16"}, "", "--sub 123.7,116.3,103.5 --div 58.4,57.1,57.4",
     [](const Layout&) { return with({{Param::sub, {{123.7f, 116.3f, 103.5f}, 1}}, {Param::div, {{58.4f, 57.1f, 57.4f}, 1}}}); }},
    {{"bfyx", "byxf", "8,64,56,56", "i8", "f32"}, "", "--src-zero-point -3 --src-scale S0,..,S63 --quant-axis f",
     [](const Layout& d) { return with({{Param::src_zero_point, {{-3}}}, {Param::src_scale, {fused_ramp(d.dims()[1], 0.1f, 0.01f), 1}}}); }},
    {{"b_fs_yx_fsv16", "bfyx", "8,128,56,56", "f16", "bf16"}, "", "--mul 0.5",
     [](const Layout&) { return with({{Param::mul, {{0.5f}}}}); }},
    {{"bfyx", "b_fs_yx_fsv4", "8,64,56,56", "i32", "i8"}, "", "--src-scale 0.25 --dst-scale 0.5 --dst-zero-point -2",
     [](const Layout&) { return with({{Param::src_scale, {{0.25f}}}, {Param::dst_scale, {{0.5f}}}, {Param::dst_zero_point, {{-2}}}}); }},
    {{"bfyx", "byxf", "8,64,56,56", "f32", "u8"}, "245760,3840,64,1", "--dst-scale 0.02 --dst-zero-point 128",
     [](const Layout&) { return with({{Param::dst_scale, {{0.02f}}}, {Param::dst_zero_point, {{128}}}}); }},
    {{"bfyx", "tpu_aligned(npus=64,npu_bytes=4096,addr=0)", "1,64,56,56", "f32", "i8"}, "", "--dst-scale 0.02",
     [](const Layout&) { return with({{Param::dst_scale, {{0.02f}}}}); }},
    {{"oiyx", "os_is_yx_isv16_osv16", "256,256,3,3", "f32", "i8"}, "", "--dst-scale S0,..,S255 --quant-axis o",
     [](const Layout& d) { return with({{Param::dst_scale, {fused_ramp(d.dims()[0], 0.02f, 0.001f), 0}}}); }},
    {{"oiyx", "os_is_yx_isv16_osv16", "256,256,3,3", "f32", "i8"}, "", "--dst-scale 0.02 --compensation o",
     [](const Layout&) {
       Conversion c = with({{Param::dst_scale, {{0.02f}}}});
       c.compensation = Compensation{0};
       return c;
     }},
    {{"oiyx", "os_is_yx_osv16_isv4", "256,512,1,1", "f32", "i8"}, "", "--dst-scale @FILE (4096 values) --quant-axis o,i --quant-group 32",
     [](const Layout& d) { return with({{Param::dst_scale, {fused_ramp(d.dims()[0] * 16, 0.02f, 0.001f), 1, 32, 0}}}); }},
    {{"oiyx", "os_is_yx_isv16_osv16", "256,512,1,1", "f16", "i4"}, "", "--dst-scale @FILE (4096 values) --quant-axis o,i --quant-group 32",
     [](const Layout& d) { return with({{Param::dst_scale, {fused_ramp(d.dims()[0] * 16, 0.02f, 0.001f), 1, 32, 0}}}); }},
    {{"goiyx", "g_os_is_yx_osv16_isv4", "32,32,32,3,3", "f32", "i8"}, "", "--dst-scale S0,..,S31 --quant-axis o",
     [](const Layout& d) { return with({{Param::dst_scale, {fused_ramp(d.dims()[1], 0.02f, 0.001f), 1}}}); }},
    {{"os_is_yx_isv16_osv16", "oiyx", "256,256,3,3", "i8", "f16"}, "", "--src-scale S0,..,S255 --quant-axis o",
     [](const Layout& d) { return with({{Param::src_scale, {fused_ramp(d.dims()[0], 0.02f, 0.001f), 0}}}); }},
    // Same layout both sides: the parameters' axes stay apart in the kernel (an LLM's weights dequantized in
    // place of their packing, per group and per row).
    {{"oiyx", "oiyx", "4096,4096,1,1", "i8", "f16"}, "", "--src-scale @FILE (131072 values, a buffer) --quant-axis o,i --quant-group 128",
     [](const Layout& d) { return with({{Param::src_scale, {fused_ramp(d.dims()[0] * d.dims()[1] / 128, 0.02f, 0.001f), 1, 128, 0, true}}}); }},
    {{"bfyx", "bfyx", "8,64,56,56", "f32", "i8"}, "", "--dst-scale S0,..,S63 --quant-axis f",
     [](const Layout& d) { return with({{Param::dst_scale, {fused_ramp(d.dims()[1], 0.02f, 0.001f), 1}}}); }},
};

// `--fused`: the fused cases beside their plain conversions, interleaved launch by launch (bench_reorders()).
int run_fused(const Engine& engine, int runs, int repeat, const std::string& impl, const std::string& out,
              const std::string& filter);

// `--views`: the view cases beside their dense twins, interleaved, each the median-ratio repeat.
int run_views(const Engine& engine, int runs, int repeat, const std::string& impl, const std::string& out,
              const std::string& filter);

// `--impls`: every implementation that accepts each case, interleaved (bench_variants()); the fastest, and
// the selector's choice against it.
int run_impls(const Engine& engine, int runs, int repeat, const std::string& out, const std::string& filter);

// `--limits`: each case's kernel against the copy kernel of its destination's bytes, with the caches evicted
// and warm (event kernel times, interleaved): whether a case is slow with its data in cache (bound by its
// instructions) or only from memory (by its access pattern).
int run_limits(const Engine& engine, int runs, int repeat, const std::string& impl, const std::string& out,
               const std::string& filter);

}  // namespace

int main(int argc, char** argv) {
  clreorder_tools::pin_pocl_workers();  // before any OpenCL call (tools/pocl_affinity.hpp says why)
  int runs = 25, repeat = 3;
  bool views = false;
  std::string impl, out = ".", filter;
  CLI::App app("clreorder_suite: the reorder cases runtimes hit most, each timed against a copy of the same bytes",
               "clreorder_suite");
  app.add_option("--runs", runs, "timed runs per measurement (median)")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--repeat", repeat, "measurements per case; the median-ratio one is reported")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--impl", impl, "force an implementation");
  app.add_option("--out", out, "directory for the table and CSV")->capture_default_str();
  app.add_option("--filter", filter, "only the cases whose name (formats, shape, padding, types) contains this");
  app.add_flag("--views", views, "strided views beside their dense twins instead (views.md, views.csv)");
  bool fused = false, impls = false, limits = false;
  app.add_flag("--fused", fused, "fused arithmetic beside the plain conversion instead (fused.md, fused.csv)");
  app.add_flag("--impls", impls, "every implementation that accepts each case side by side instead, and the selector's "
                                 "choice against the fastest (impls.md, impls.csv)");
  app.add_flag("--limits", limits, "each case's kernel time against the copy kernel's, caches evicted and warm, and "
                                   "what bounds it: instructions or memory access (limits.md, limits.csv)");
  CLI11_PARSE(app, argc, argv);
  if (views + fused + impls + limits > 1) {
    std::fprintf(stderr, "clreorder_suite: --views, --fused, --impls and --limits are separate runs: give one\n");
    return 2;
  }
  if (impls && !impl.empty()) {
    std::fprintf(stderr, "clreorder_suite: --impls times every implementation: drop --impl\n");
    return 2;
  }
  try {
    Engine engine = Engine::open();
    if (views) return run_views(engine, runs, repeat, impl, out, filter);
    if (fused) return run_fused(engine, runs, repeat, impl, out, filter);
    if (impls) return run_impls(engine, runs, repeat, out, filter);
    if (limits) return run_limits(engine, runs, repeat, impl, out, filter);
    std::string md = "| case | dtype | impl | ms | GB/s logical | GB/s physical | copy GB/s (clEnqueueCopyBuffer / kernel) "
                     "| ratio to copy | ratio to clEnqueueCopyBuffer | host us (bare) | oneDNN GB/s logical | vs oneDNN |\n"
                     "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    std::string csv = "from,to,shape,dtype,to_dtype,src_pad,dst_pad,impl,median_ms,kernel_ms,copy_ms,copy_kernel_ms,gbps_logical,"
                      "gbps_physical,copy_gbps,copy_kernel_gbps,ratio,ratio_copy_buffer,enqueue_us,bare_enqueue_us,onednn_ms,"
                      "onednn_gbps_logical,vs_onednn\n";
    std::map<int, std::pair<double, int>> by_bits;  // element bits -> (sum of log ratios, cases)
    double log_buffer = 0;
    std::vector<std::pair<std::string, double>> bars;
    double log_sum = 0, log_dnnl = 0;
    int n = 0, n_dnnl = 0;
    double worst = 1e9;
    int streamed = 0;  // cases whose kernel streams its stores (CR_STREAM_STORE: past the device's cache)
    for (const SuiteCase& c : kCases) {
      const PlainCase pc = plain_case(c);
      if (filtered_out(filter, pc, c)) continue;
      const std::string& label = pc.label;
      const Layout &src = pc.src, &dst = pc.dst;
      if (!impl.empty()) {
        std::string declined;
        for (const Verdict& v : KernelSelector::instance().explain(ReorderParams{src, dst, engine.info(), {}}))
          if (v.impl == impl) declined = v.declines;
        if (!declined.empty()) {
          std::printf("| %s | %s declines: %s |\n", label.c_str(), impl.c_str(), declined.c_str());
          continue;
        }
      }
      std::vector<BenchResult> reps;
      for (int k = 0; k < repeat; ++k) reps.push_back(bench_reorder(engine, src, dst, impl, runs));
      std::sort(reps.begin(), reps.end(), [](const BenchResult& x, const BenchResult& y) { return x.ratio < y.ratio; });
      const BenchResult& r = reps[reps.size() / 2];
      streamed += plan_reorder(engine.info(), src, dst, r.impl).streams;
      OneDnnTiming dnnl = onednn_reorder(src, dst, runs);
      const double dnnl_gbps = dnnl.ok ? r.gbps_logical * r.median_ms / dnnl.ms : 0;
      const double vs_dnnl = dnnl.ok ? dnnl.ms / r.median_ms : 0;
      char dnnl_cols[160];
      if (dnnl.ok) std::snprintf(dnnl_cols, sizeof dnnl_cols, "%.2f | %.2f", dnnl_gbps, vs_dnnl);
      else std::snprintf(dnnl_cols, sizeof dnnl_cols, " |  ");
      if (!dnnl.ok && onednn_available()) std::fprintf(stderr, "oneDNN skipped for %s: %s\n", label.c_str(), dnnl.why.c_str());
      char row[512];
      const std::string types = c.types();
      std::snprintf(row, sizeof row, "| %s | %s | %s | %.3f | %.2f | %.2f | %.2f / %.2f | %.3f | %.3f | %.1f (%.1f) | %s |\n",
                    label.c_str(), types.c_str(), r.impl.c_str(), r.median_ms, r.gbps_logical, r.gbps_physical,
                    r.copy_gbps, r.copy_kernel_gbps, r.ratio, r.ratio_copy_buffer, r.enqueue_us, r.bare_enqueue_us, dnnl_cols);
      md += row;
      std::printf("%s", row);
      std::fflush(stdout);
      std::snprintf(row, sizeof row,
                    "\"%s\",\"%s\",\"%s\",%s,%s,\"%s\",\"%s\",%s,%.5f,%.5f,%.5f,%.5f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%.2f,%.2f,%s,%s,%s\n",
                    c.from, c.to, c.shape, c.dtype, c.to_dtype, c.src_pad, c.dst_pad, r.impl.c_str(), r.median_ms,
                    r.kernel_ms, r.copy_ms, r.copy_kernel_ms, r.gbps_logical, r.gbps_physical, r.copy_gbps,
                    r.copy_kernel_gbps, r.ratio, r.ratio_copy_buffer, r.enqueue_us, r.bare_enqueue_us,
                    dnnl.ok ? std::to_string(dnnl.ms).c_str() : "", dnnl.ok ? std::to_string(dnnl_gbps).c_str() : "",
                    dnnl.ok ? std::to_string(vs_dnnl).c_str() : "");
      csv += row;
      bars.emplace_back(label + (types.find("->") != std::string::npos ? " " + types : ""), r.ratio);
      log_sum += std::log(r.ratio);
      log_buffer += std::log(r.ratio_copy_buffer);
      auto& bits = by_bits[element_bits(src, dst)];
      bits.first += std::log(r.ratio);
      ++bits.second;
      if (dnnl.ok) {
        log_dnnl += std::log(vs_dnnl);
        ++n_dnnl;
      }
      worst = std::min(worst, r.ratio);
      ++n;
    }
    char summary[1024];
    int len = std::snprintf(summary, sizeof summary,
                            "\ngeometric mean of ratio to copy (the faster of clEnqueueCopyBuffer and the copy kernel): %.3f "
                            "over %d cases; lowest %.3f; to clEnqueueCopyBuffer alone: %.3f\n",
                            n ? std::exp(log_sum / n) : 0.0, n, n ? worst : 0.0, n ? std::exp(log_buffer / n) : 0.0);
    for (const auto& [bits, acc] : by_bits)
      len += std::snprintf(summary + len, sizeof summary - static_cast<size_t>(len),
                           "geometric mean of ratio to copy, %d-bit elements: %.3f over %d cases\n", bits,
                           std::exp(acc.first / acc.second), acc.second);
    if (n_dnnl)
      std::snprintf(summary + len, sizeof summary - static_cast<size_t>(len),
                    "geometric mean of our logical GB/s over oneDNN's: %.3f over %d cases\n", std::exp(log_dnnl / n_dnnl),
                    n_dnnl);
    md += summary;
    std::printf("%s", summary);
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    std::string md_text = device_line(engine) + "; each case: the median-ratio repeat of " + std::to_string(repeat) +
                          ", each the median of " +
                          std::to_string(runs) + " rounds' ratios (a round: the reorder, then both copies); " +
                          "times and GB/s: medians of the rounds. " +
                          (engine.info().cache_from_host ? "The device reports no cache; the host's is a " : "The device reports a ") +
                          std::to_string(engine.info().cache_bytes >> 20) + " MiB cache and " + std::to_string(engine.info().compute_units) +
                          " compute units: " + std::to_string(streamed) + " of the " + std::to_string(n) +
                          " cases' kernels stream their stores (source and destination past " +
                          std::to_string(stream_threshold(engine.info()) >> 20) +
                          " MiB: 1/4 of the cache, at most " + std::to_string(kStreamBytesPerComputeUnit >> 20) + " MiB per compute unit).\n\n" + md;
    write_file(out + "/suite.md", md_text);
    write_file(out + "/suite.csv", csv);
    write_file(out + "/suite.svg", svg_chart(bars, "clreorder on " + engine.info().name + ": ratio to the best copy (same run)"));
    std::printf("wrote %s/suite.md, %s/suite.csv and %s/suite.svg\n", out.c_str(), out.c_str(), out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clreorder_suite: error: %s\n", e.what());
    return 2;
  }
  return 0;
}

namespace {

// The end of a paired run (--fused, --views): prints `summary`, and writes <out>/<name>.md (how it was
// measured, the table `md`, the summary) and <out>/<name>.csv.
void write_paired(const Engine& engine, const std::string& out, const std::string& name, int repeat, int runs,
                  const char* pair, const std::string& md, const std::string& summary, const std::string& csv) {
  std::printf("%s", summary.c_str());
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  write_file(out + "/" + name + ".md", device_line(engine) + "; each case: the median-ratio repeat of " + std::to_string(repeat) +
                                           ", each the median of " + std::to_string(runs) + " rounds' ratios, " + pair +
                                           " interleaved.\n\n" + md + summary);
  write_file(out + "/" + name + ".csv", csv);
  std::printf("wrote %s/%s.md and %s/%s.csv\n", out.c_str(), name.c_str(), out.c_str(), name.c_str());
}

BenchResult median_ratio(std::vector<BenchResult> reps) {
  std::sort(reps.begin(), reps.end(), [](const BenchResult& x, const BenchResult& y) { return x.ratio < y.ratio; });
  return reps[reps.size() / 2];
}

int run_fused(const Engine& engine, int runs, int repeat, const std::string& impl, const std::string& out,
              const std::string& filter) {
  std::string md = "| case | dtype | fused | impl (plain / fused) | ratio to copy, plain | ratio to copy, fused | fused / plain |\n"
                   "|---|---|---|---|---:|---:|---:|\n";
  std::string csv = "from,to,shape,dtype,to_dtype,src_strides,fused,conversion,plain_impl,fused_impl,plain_ratio,fused_ratio,"
                    "fused_over_plain\n";
  double worst = 1e9, log_sum = 0;
  int n = 0, within = 0;
  for (const FusedCase& fc : kFusedCases) {
    const SuiteCase& c = fc.c;
    const std::string label = std::string(c.from) + " -> " + c.to + " " + c.shape + (*fc.src_strides ? " (view)" : "");
    if (!filter.empty() && (label + " " + fc.what).find(filter) == std::string::npos) continue;
    const Dims shape = parse_dims(c.shape);
    const Layout src(format_from_name(c.from), parse_data_type(c.dtype), shape, {}, {},
                     *fc.src_strides ? parse_dims(fc.src_strides) : Dims{});
    const Layout dst(format_from_name(c.to), parse_data_type(c.to_dtype), shape);
    const Conversion conv = fc.conversion(dst);
    std::vector<BenchResult> plain, fused;
    for (int k = 0; k < repeat; ++k) {
      const std::vector<BenchResult> both = bench_reorders(engine, src, dst, impl, runs, {Conversion{}, conv});
      plain.push_back(both[0]);
      fused.push_back(both[1]);
    }
    const BenchResult p = median_ratio(plain), f = median_ratio(fused);
    // Each repeat's fused / plain shares that repeat's copies and moments: their median, not the medians' ratio.
    std::vector<double> rels;
    for (int k = 0; k < repeat; ++k) rels.push_back(fused[static_cast<size_t>(k)].ratio / plain[static_cast<size_t>(k)].ratio);
    const double rel = clreorder_perf::median(rels);
    const std::string types = std::string(c.dtype) + "->" + c.to_dtype;
    char row[768];
    std::snprintf(row, sizeof row, "| %s | %s | `%s` | %s / %s | %.3f | %.3f | %.3f |\n", label.c_str(), types.c_str(), fc.what,
                  p.impl.c_str(), f.impl.c_str(), p.ratio, f.ratio, rel);
    md += row;
    std::printf("%s", row);
    std::fflush(stdout);
    std::snprintf(row, sizeof row, "\"%s\",\"%s\",\"%s\",%s,%s,\"%s\",\"%s\",\"%s\",%s,%s,%.4f,%.4f,%.4f\n", c.from, c.to, c.shape, c.dtype,
                  c.to_dtype, fc.src_strides, fc.what, conv.key().substr(0, 200).c_str(), p.impl.c_str(), f.impl.c_str(), p.ratio,
                  f.ratio, rel);
    csv += row;
    worst = std::min(worst, rel);
    log_sum += std::log(rel);
    within += rel >= 0.9 ? 1 : 0;
    ++n;
  }
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "\nfused over plain (ratios to copy): geometric mean %.3f over %d cases; lowest %.3f; %d within 10%%\n",
                n ? std::exp(log_sum / n) : 0.0, n, n ? worst : 0.0, within);
  write_paired(engine, out, "fused", repeat, runs,
               "plain and fused launch by launch (fused / plain: the median of the repeats' own ratios), both", md, summary, csv);
  return 0;
}

int run_views(const Engine& engine, int runs, int repeat, const std::string& impl, const std::string& out,
              const std::string& filter) {
  std::string md = "| case | dtype | view strides | impl (view) | ratio to copy, dense | ratio to copy, view | view / dense |\n"
                   "|---|---|---|---|---:|---:|---:|\n";
  std::string csv = "from,to,shape,dtype,to_dtype,src_strides,dst_strides,impl,dense_ratio,view_ratio,view_over_dense\n";
  double worst = 1e9, log_sum = 0;
  int n = 0;
  for (const ViewCase& vc : kViewCases) {
    const SuiteCase& c = vc.c;
    const std::string label = std::string(c.from) + " -> " + c.to + " " + c.shape;
    if (!filter.empty() && label.find(filter) == std::string::npos) continue;
    const Dims shape = parse_dims(c.shape);
    const DataType st = parse_data_type(c.dtype), dt = parse_data_type(c.to_dtype);
    const Layout src(format_from_name(c.from), st, shape), dst(format_from_name(c.to), dt, shape);
    const Layout vsrc(src.format(), st, shape, {}, {}, *vc.src_strides ? parse_dims(vc.src_strides) : Dims{});
    const Layout vdst(dst.format(), dt, shape, {}, {}, *vc.dst_strides ? parse_dims(vc.dst_strides) : Dims{});
    std::vector<BenchResult> dense, view;
    for (int k = 0; k < repeat; ++k) {
      dense.push_back(bench_reorder(engine, src, dst, impl, runs));
      view.push_back(bench_reorder(engine, vsrc, vdst, impl, runs));
    }
    const BenchResult d = median_ratio(dense), v = median_ratio(view);
    const double rel = v.ratio / d.ratio;
    const std::string strides = *vc.src_strides ? std::string("src ") + vc.src_strides : std::string("dst ") + vc.dst_strides;
    const std::string types = c.types();
    char row[512];
    std::snprintf(row, sizeof row, "| %s | %s | %s | %s | %.3f | %.3f | %.3f |\n", label.c_str(), types.c_str(), strides.c_str(),
                  v.impl.c_str(), d.ratio, v.ratio, rel);
    md += row;
    std::printf("%s", row);
    std::fflush(stdout);
    std::snprintf(row, sizeof row, "\"%s\",\"%s\",\"%s\",%s,%s,\"%s\",\"%s\",%s,%.4f,%.4f,%.4f\n", c.from, c.to, c.shape, c.dtype,
                  c.to_dtype, vc.src_strides, vc.dst_strides, v.impl.c_str(), d.ratio, v.ratio, rel);
    csv += row;
    worst = std::min(worst, rel);
    log_sum += std::log(rel);
    ++n;
  }
  char summary[256];
  std::snprintf(summary, sizeof summary, "\nview over dense (ratios to copy): geometric mean %.3f over %d cases; lowest %.3f\n",
                n ? std::exp(log_sum / n) : 0.0, n, n ? worst : 0.0);
  write_paired(engine, out, "views", repeat, runs, "dense and view", md, summary, csv);
  return 0;
}

int run_impls(const Engine& engine, int runs, int repeat, const std::string& out, const std::string& filter) {
  const KernelSelector& ks = KernelSelector::instance();
  std::vector<std::string> names;  // the selector's list, in its order
  {
    const Layout any(format_from_name("bfyx"), DataType::f32, {1, 1, 1, 1});
    for (const Verdict& v : ks.explain(ReorderParams{any, any, engine.info(), {}})) names.push_back(v.impl);
  }
  std::string md = "| case | dtype | chosen |", csv = "from,to,shape,dtype,to_dtype,src_pad,dst_pad,chosen,";
  for (const std::string& n : names) md += " " + n + " |", csv += n + ",";
  md += " fastest | chosen / fastest |\n|---|---|---|";
  for (size_t k = 0; k < names.size(); ++k) md += "---:|";
  md += "---|---:|\n";
  csv += "fastest,chosen_over_fastest\n";
  std::map<std::string, int> wins;
  std::map<int, std::pair<double, int>> chosen_by_bits;  // element size -> (sum of log ratio, cases)
  double log_sum = 0, log_chosen = 0, worst = 1e9;
  std::string worst_case;
  int n = 0, chosen_fastest = 0;
  for (const SuiteCase& c : kCases) {
    const PlainCase pc = plain_case(c);
    if (filtered_out(filter, pc, c)) continue;
    const std::string& label = pc.label;
    const Layout &src = pc.src, &dst = pc.dst;
    std::vector<BenchVariant> variants;
    std::string chosen;
    for (const Verdict& v : ks.explain(ReorderParams{src, dst, engine.info(), {}})) {
      if (!v.declines.empty()) continue;
      variants.push_back(BenchVariant{v.impl, {}});
      if (v.chosen) chosen = v.impl;
    }
    // Each implementation's median ratio over the repeats (each repeat interleaves them all).
    std::map<std::string, std::vector<double>> ratios;
    for (int k = 0; k < repeat; ++k) {
      const std::vector<BenchResult> rs = bench_variants(engine, src, dst, runs, variants);
      for (size_t j = 0; j < rs.size(); ++j) ratios[variants[j].force].push_back(rs[j].ratio);
    }
    std::map<std::string, double> med;
    std::string fastest;
    for (const auto& [name, r] : ratios) {
      med[name] = clreorder_perf::median(r);
      if (fastest.empty() || med[name] > med[fastest]) fastest = name;
    }
    const double rel = med[chosen] / med[fastest];
    const std::string types = c.types();
    std::string row = "| " + label + " | " + types + " | " + chosen + " |";
    char cell[64];
    std::string csv_row = std::string("\"") + c.from + "\",\"" + c.to + "\",\"" + c.shape + "\"," + c.dtype + "," + c.to_dtype +
                          ",\"" + c.src_pad + "\",\"" + c.dst_pad + "\"," + chosen + ",";
    for (const std::string& name : names) {
      if (med.count(name)) {
        std::snprintf(cell, sizeof cell, name == fastest ? " **%.3f** |" : " %.3f |", med[name]);
        row += cell;
        std::snprintf(cell, sizeof cell, "%.4f,", med[name]);
        csv_row += cell;
      } else {
        row += " - |";
        csv_row += ",";
      }
    }
    std::snprintf(cell, sizeof cell, " %.3f |\n", rel);
    row += " " + fastest + " |" + cell;
    std::snprintf(cell, sizeof cell, "%.4f\n", rel);
    csv_row += fastest + "," + cell;
    md += row;
    csv += csv_row;
    std::printf("%s", row.c_str());
    std::fflush(stdout);
    ++wins[fastest];
    chosen_fastest += chosen == fastest;
    log_sum += std::log(rel);
    log_chosen += std::log(med[chosen]);
    auto& bits = chosen_by_bits[element_bits(src, dst)];
    bits.first += std::log(med[chosen]);
    ++bits.second;
    if (rel < worst) worst = rel, worst_case = label + " " + types;
    ++n;
  }
  std::string summary = "\n";
  char line[512];
  std::snprintf(line, sizeof line,
                "the selector's choice was the fastest in %d of %d cases; its speed over the fastest's: geometric mean "
                "%.3f, lowest %.3f (%s)\nfastest:", chosen_fastest, n, n ? std::exp(log_sum / n) : 0.0, n ? worst : 0.0,
                worst_case.c_str());
  summary += line;
  for (const auto& [name, k] : wins) summary += " " + name + " in " + std::to_string(k) + ",";
  if (!wins.empty()) summary.pop_back();
  // What the selector's choices reach, as the main table would measure them (its ratio to copy).
  std::snprintf(line, sizeof line, "\nthe choice's ratio to copy: geometric mean %.3f over %d cases;", n ? std::exp(log_chosen / n) : 0.0, n);
  summary += line;
  for (const auto& [bits, acc] : chosen_by_bits) {
    std::snprintf(line, sizeof line, " %d-bit %.3f (%d),", bits, std::exp(acc.first / acc.second), acc.second);
    summary += line;
  }
  if (!chosen_by_bits.empty()) summary.pop_back();
  summary += "\n";
  write_paired(engine, out, "impls", repeat, runs, "every accepting implementation launch by launch (each the median of "
               "the repeats' ratios to copy; in bold the fastest),", md, summary, csv);
  return 0;
}

}  // namespace

namespace {

// What bounds a case, from its kernel's time over the copy kernel's (copy / reorder: 1 is copy speed) with the
// caches evicted and warm. Warm separates the two only where the reorder's source and destination and the copy's
// two buffers of the destination's size fit the cache together: past that both runs read memory. Where the
// reorder itself runs for microseconds in cache, its time is mostly PoCL's dispatch of the work-groups.
std::string bound_of(double cold, double warm, bool fits, double warm_ms) {
  constexpr double kNear = 0.8;  // within this of the copy: not bound by more than the copy is
  if (warm_ms < 0.01) return "launch (a kernel of a few microseconds)";
  if (!fits) return cold >= kNear ? "near copy" : "past the cache: instructions or access (warm cannot tell)";
  if (warm < kNear) return "instructions (slow with the data in cache)";
  if (cold < kNear) return "memory access (copy speed in cache, slow from memory)";
  return "near copy";
}

int run_limits(const Engine& engine, int runs, int repeat, const std::string& impl, const std::string& out,
               const std::string& filter) {
  std::string md = "| case | dtype | impl | MB (src + dst) | cold ms (reorder / copy) | cold copy / reorder | "
                   "warm ms (reorder / copy) | warm copy / reorder | bound |\n|---|---|---|---:|---:|---:|---:|---:|---|\n";
  std::string csv = "from,to,shape,dtype,to_dtype,src_pad,dst_pad,impl,bytes,cold_ms,cold_copy_ms,cold_ratio,warm_ms,warm_copy_ms,"
                    "warm_ratio,bound\n";
  std::map<std::string, int> by_bound;
  double log_cold = 0, log_warm = 0;
  int n = 0;
  for (const SuiteCase& c : kCases) {
    const PlainCase pc = plain_case(c);
    if (filtered_out(filter, pc, c)) continue;
    KernelData kd;
    try {
      kd = plan_reorder(engine.info(), pc.src, pc.dst, impl);
    } catch (const Error& e) {  // a forced implementation that declines the case: said, and the rest go on
      std::printf("| %s | %s declines: %s |\n", pc.label.c_str(), impl.c_str(), e.what());
      continue;
    }
    const uint64_t bytes = pc.src.bytes() + pc.dst.bytes();
    const bool fits = bytes + 2 * pc.dst.bytes() <= engine.info().cache_bytes;
    // Each repeat: the reorder and the copy kernel launch by launch, cold then warm; the repeat's ratio is of
    // its medians, and the case's is the median repeat's (as the other tables).
    struct Rep {
      double ms, copy_ms, ratio;
    };
    std::vector<Rep> cold, warm;
    for (int k = 0; k < repeat; ++k)
      for (bool w : {false, true}) {
        clreorder_perf::KernelTiming t;
        t.runs = runs;
        t.warm = w;
        t.copy = true;
        const std::vector<std::vector<double>> ms = clreorder_perf::interleaved_kernel_ms(engine, pc.src, pc.dst, {kd}, t);
        const double r = ms[0][ms[0].size() / 2], cp = ms[1][ms[1].size() / 2];
        (w ? warm : cold).push_back(Rep{r, cp, cp / r});
      }
    auto mid = [](std::vector<Rep> v) {
      std::sort(v.begin(), v.end(), [](const Rep& x, const Rep& y) { return x.ratio < y.ratio; });
      return v[v.size() / 2];
    };
    const Rep rc = mid(cold), rw = mid(warm);
    const std::string bound = bound_of(rc.ratio, rw.ratio, fits, rw.ms), types = c.types();
    char row[768];
    std::snprintf(row, sizeof row, "| %s | %s | %s | %.2f | %.4f / %.4f | %.3f | %.4f / %.4f | %.3f | %s |\n", pc.label.c_str(),
                  types.c_str(), kd.impl.c_str(), static_cast<double>(bytes) / 1e6, rc.ms, rc.copy_ms, rc.ratio, rw.ms,
                  rw.copy_ms, rw.ratio, bound.c_str());
    md += row;
    std::printf("%s", row);
    std::fflush(stdout);
    std::snprintf(row, sizeof row, "\"%s\",\"%s\",\"%s\",%s,%s,\"%s\",\"%s\",%s,%llu,%.5f,%.5f,%.4f,%.5f,%.5f,%.4f,\"%s\"\n",
                  c.from, c.to, c.shape, c.dtype, c.to_dtype, c.src_pad, c.dst_pad, kd.impl.c_str(),
                  static_cast<unsigned long long>(bytes), rc.ms, rc.copy_ms, rc.ratio, rw.ms, rw.copy_ms, rw.ratio, bound.c_str());
    csv += row;
    ++by_bound[bound];
    log_cold += std::log(rc.ratio);
    log_warm += std::log(rw.ratio);
    ++n;
  }
  std::string summary = "\n";
  char line[256];
  std::snprintf(line, sizeof line, "geometric mean of copy / reorder (kernel times): cold %.3f, warm %.3f over %d cases\n",
                n ? std::exp(log_cold / n) : 0.0, n ? std::exp(log_warm / n) : 0.0, n);
  summary += line;
  for (const auto& [bound, count] : by_bound) summary += std::to_string(count) + " bound: " + bound + "\n";
  std::printf("%s", summary.c_str());
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  write_file(out + "/limits.md",
             device_line(engine) + "; each case: the reorder's kernel and the copy kernel over its destination's bytes, " +
                 "launch by launch (event-profiled kernel times), " + std::to_string(runs) +
                 " launches each with the caches evicted before each (cold) and as many left warm; a repeat's ratio is " +
                 "copy / reorder of its medians, and the median-ratio repeat of " + std::to_string(repeat) +
                 " is reported. \"Near copy\": 0.8 of the copy or more; the device reports a " +
                 std::to_string(engine.info().cache_bytes >> 20) + " MiB cache.\n\n" + md + summary);
  write_file(out + "/limits.csv", csv);
  std::printf("wrote %s/limits.md and %s/limits.csv\n", out.c_str(), out.c_str());
  return 0;
}

}  // namespace
