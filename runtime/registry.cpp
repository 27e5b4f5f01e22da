// The format registry: every OpenVINO format of FORMATS.md section 1 as a row of data (its name is its
// description: the grammar derives the layout), and the oneDNN / PyTorch names of section 2-3 as aliases.
// Adding a format is adding a row, or just using its name.
// Where OpenVINO's traits table and its OpenCL index functions disagree (same-axis double blocks,
// g_os_is_zyx_isv16_osv16, g_os_zyx_is_*, the swizzles, the isv2 of os_is_yx_osv{32,64}_isv2), the names
// below are read as the OpenCL functions lay the elements out; tests/test_weights.cpp checks each offset.
#include <algorithm>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"

namespace clreorder {

namespace {

struct Alias {
  const char* alias;
  const char* target;
};

// PyTorch memory formats (FORMATS.md section 3). oneDNN tags need no rows: they are parsed by grammar
// (runtime/onednn_tag.cpp).
const Alias kAliases[] = {
    {"contiguous_format", "bfyx"},
    {"channels_last", "byxf"},
    {"channels_last_3d", "bzyxf"},
};

}  // namespace

const std::vector<std::pair<std::string, Format>>& registered_formats() {
  static const std::vector<std::pair<std::string, Format>> rows = [] {
    std::vector<std::pair<std::string, Format>> out;
    for (const FormatEntry& e : registry())
      if (e.unsupported.empty()) out.emplace_back(e.name, Format::parse(e.name));
    return out;
  }();
  return rows;
}

const std::vector<FormatEntry>& registry() {
  static const std::vector<FormatEntry> rows = {
    {"yxfb", "openvino", ""},
    {"byxf", "openvino", ""},
    {"bfyx", "openvino", ""},
    {"bfxy", "openvino", ""},
    {"fbyx", "openvino", ""},
    {"fyxb", "openvino", ""},
    {"fybx", "openvino", ""},
    {"xbfy", "openvino", ""},
    {"ybfx", "openvino", ""},
    {"byfx", "openvino", ""},
    {"bxfy", "openvino", ""},
    {"b_fs_yx_fsv2", "openvino", ""},
    {"b_fs_yx_fsv4", "openvino", ""},
    {"b_fs_yx_fsv8", "openvino", ""},
    {"b_fs_yx_fsv16", "openvino", ""},
    {"b_fs_yx_fsv32", "openvino", ""},
    {"b_fs_zyx_fsv2", "openvino", ""},
    {"b_fs_zyx_fsv4", "openvino", ""},
    {"b_fs_zyx_fsv8", "openvino", ""},
    {"b_fs_zyx_fsv32", "openvino", ""},
    {"bs_fs_fsv8_bsv8", "openvino", ""},
    {"bs_fs_fsv8_bsv16", "openvino", ""},
    {"bs_f_bsv16", "openvino", ""},
    {"winograd_2x3_s1_data", "openvino", "Winograd-transformed: the values change, so it is a transform, not a reorder"},
    {"bzyxf", "openvino", ""},
    {"bfzyx", "openvino", ""},
    {"bfwzyx", "openvino", ""},
    {"bfuwzyx", "openvino", ""},
    {"bfvuwzyx", "openvino", ""},
    {"fs_b_yx_fsv32", "openvino", ""},
    {"b_fs_zyx_fsv16", "openvino", ""},
    {"bs_fs_zyx_bsv16_fsv32", "openvino", ""},
    {"bs_fs_zyx_bsv16_fsv16", "openvino", ""},
    {"bs_fs_yx_bsv16_fsv16", "openvino", ""},
    {"bs_fs_yx_bsv16_fsv32", "openvino", ""},
    {"bs_fs_yx_bsv4_fsv4", "openvino", ""},
    {"bs_fs_yx_bsv8_fsv4", "openvino", ""},
    {"bs_fs_zyx_bsv8_fsv4", "openvino", ""},
    {"bs_fs_yx_bsv16_fsv8", "openvino", ""},
    {"bs_fs_zyx_bsv16_fsv8", "openvino", ""},
    {"bs_fs_yx_bsv16_fsv4", "openvino", ""},
    {"bs_fs_zyx_bsv16_fsv4", "openvino", ""},
    {"bs_fs_yx_bsv16_fsv2", "openvino", ""},
    {"bs_fs_zyx_bsv16_fsv2", "openvino", ""},
    {"bs_fs_yx_bsv8_fsv2", "openvino", ""},
    {"bs_fs_zyx_bsv8_fsv2", "openvino", ""},
    {"bs_fs_yx_bsv4_fsv2", "openvino", ""},
    {"bs_fs_zyx_bsv4_fsv4", "openvino", ""},
    {"bs_fs_zyx_bsv4_fsv2", "openvino", ""},
    {"bs_fs_zyx_bsv32_fsv32", "openvino", ""},
    {"bs_fs_zyx_bsv32_fsv16", "openvino", ""},
    {"bs_fs_yx_bsv32_fsv32", "openvino", ""},
    {"bs_fs_yx_bsv32_fsv16", "openvino", ""},
    {"nv12", "openvino", "a two-plane YUV image (OpenCL images), not a buffer"},
    {"image_2d_rgba", "openvino", "an OpenCL image object (image_2d), not a buffer"},
    {"oiyx", "openvino", ""},
    {"ioyx", "openvino", ""},
    {"iyxo", "openvino", ""},
    {"oyxi", "openvino", ""},
    {"oyix", "openvino", ""},
    {"oxiy", "openvino", ""},
    {"yxio", "openvino", ""},
    {"oizyx", "openvino", ""},
    {"iozyx", "openvino", ""},
    {"os_is_yx_isv16_osv16", "openvino", ""},
    {"o_is_yx_isv4", "openvino", ""},
    {"o_is_yx_isv16", "openvino", ""},
    {"os_iyx_osv16", "openvino", ""},
    {"os_iyx_osv32", "openvino", ""},
    {"os_iyx_osv64", "openvino", ""},
    {"winograd_2x3_s1_weights", "openvino", "Winograd-transformed: the values change, so it is a transform, not a reorder"},
    {"winograd_2x3_s1_fused_weights", "openvino", "Winograd-transformed: the values change, so it is a transform, not a reorder"},
    {"winograd_6x3_s1_fused_weights", "openvino", "Winograd-transformed: the values change, so it is a transform, not a reorder"},
    {"image_2d_weights_winograd_6x3_s1_fbxyb", "openvino", "an OpenCL image object holding Winograd-transformed weights: needs images and a transform, not a reorder"},
    {"image_2d_weights_winograd_6x3_s1_xfbyb", "openvino", "an OpenCL image object holding Winograd-transformed weights: needs images and a transform, not a reorder"},
    {"image_2d_weights_c4_fyx_b", "openvino", "an OpenCL image object (image_2d), not a buffer"},
    {"image_2d_weights_c1_b_fyx", "openvino", "an OpenCL image object (image_2d), not a buffer"},
    {"os_is_yx_isa8_osv16_isv4", "openvino", ""},
    {"os_is_yx_osa4_isa8_osv8_isv4", "openvino", ""},
    {"os_is_zyx_osa4_isa8_osv8_isv4", "openvino", ""},
    {"os_is_zyx_isa8_osv8_isv4", "openvino", ""},
    {"os_is_zyx_isa8_osv16_isv4", "openvino", ""},
    {"os_is_yx_osa4_isa8_osv8_isv4_swizzled_by_4", "openvino", ""},
    {"os_is_zyx_osa4_isa8_osv8_isv4_swizzled_by_4", "openvino", ""},
    {"os_is_yx_osv16_isv4", "openvino", ""},
    {"os_is_yx_osv8_isv4", "openvino", ""},
    {"os_is_zyx_osv16_isv16", "openvino", ""},
    {"os_is_yx_osv32_isv4_swizzled_by_2", "openvino", ""},
    {"os_is_yx_osv32_isv4", "openvino", ""},
    {"os_is_zyx_osv32_isv4", "openvino", ""},
    {"os_is_zyx_isv16_osv16", "openvino", ""},
    {"is_os_zyx_isv16_osv16", "openvino", ""},
    {"is_os_yx_isv16_osv16", "openvino", ""},
    {"os_is_yx_isa8_osv8_isv4", "openvino", ""},
    {"os_is_zyx_isv8_osv16_isv2", "openvino", ""},
    {"os_zyxi_osv16", "openvino", ""},
    {"os_is_yx_isv8_osv16_isv2", "openvino", ""},
    {"os_is_yx_osv16_isv16", "openvino", ""},
    {"os_is_yx_osv32_isv2", "openvino", ""},
    {"os_is_yx_osv64_isv2", "openvino", ""},
    {"os_is_zyx_osv32_isv16", "openvino", ""},
    {"os_is_zyx_osv64_isv16", "openvino", ""},
    {"os_iyx_osv8", "openvino", ""},
    {"os_iyx_osv32__ai32", "openvino", ""},
    {"i_yxs_os_yxsv2_osv16", "openvino", ""},
    {"iy_xs_os_xsv2_osv8__ao32", "openvino", ""},
    {"iy_xs_os_xsv2_osv16__ao32", "openvino", ""},
    {"os_i_osv16", "openvino", ""},
    {"os_i_osv16__ai8", "openvino", ""},
    {"os_i_osv8__ai8", "openvino", ""},
    {"goiyx", "openvino", ""},
    {"gioyx", "openvino", ""},
    {"goizyx", "openvino", ""},
    {"giozyx", "openvino", ""},
    {"g_os_iyx_osv8", "openvino", ""},
    {"g_os_iyx_osv16", "openvino", ""},
    {"g_os_iyx_osv32", "openvino", ""},
    {"gs_oiyx_gsv16", "openvino", ""},
    {"gs_oizyx_gsv16", "openvino", ""},
    {"gs_oiyx_gsv32", "openvino", ""},
    {"gyxio", "openvino", ""},
    {"g_is_os_zyx_isv16_osv16", "openvino", ""},
    {"g_is_os_yx_isv16_osv16", "openvino", ""},
    {"g_os_is_zyx_isv8_osv16_isv2", "openvino", ""},
    {"g_os_is_yx_isv8_osv16_isv2", "openvino", ""},
    {"g_os_is_zyx_isv16_osv16", "openvino", ""},
    {"g_os_is_yx_osv16_isv4", "openvino", ""},
    {"g_os_is_zyx_osv16_isv16", "openvino", ""},
    {"g_os_zyx_is_osv16_isv4", "openvino", ""},
    {"g_os_zyx_is_osv16_isv16", "openvino", ""},
    {"g_os_zyx_is_osv16_isv32", "openvino", ""},
    {"g_os_zyx_is_osv32_isv4", "openvino", ""},
    {"g_os_zyx_is_osv32_isv16", "openvino", ""},
    {"g_os_zyx_is_osv32_isv32", "openvino", ""},
    {"gs_oi_yxs_gsv4_yxsv4", "openvino", ""},
    {"gs_oi_yxs_gsv16_yxsv4", "openvino", ""},
    {"gs_oi_yxs_gsv32_yxsv4", "openvino", ""},
    {"g_os_is_yx_isv16_osv16", "openvino", ""},
    {"gi_yxs_os_yxsv2_osv16", "openvino", ""},
    {"giy_xs_os_xsv2_osv8__ao32", "openvino", ""},
    {"giy_xs_os_xsv2_osv16__ao32", "openvino", ""},
  };
  return rows;
}

Format format_from_name(const std::string& name) {
  for (const Alias& a : kAliases)
    if (name == a.alias) return Format::parse(a.target);
  for (const FormatEntry& e : registry())
    if (e.name == name && !e.unsupported.empty())
      throw Error("format '" + name + "' is not supported: " + e.unsupported);
  try {
    return Format::parse(name);
  } catch (const Error& as_openvino) {
    if (!looks_like_onednn_tag(name)) throw;
    Format f;
    try {
      f = Format::parse(onednn_tag_to_name(name));
    } catch (const Error& as_tag) {
      throw Error(std::string(as_openvino.what()) + "; as a oneDNN tag: " + as_tag.what());
    }
    for (const auto& [registered, g] : registered_formats())
      if (g == f) return g;  // a tag equal to an OpenVINO format resolves to it
    return f;
  }
}

std::vector<std::string> aliases_of(const Format& f) {
  std::vector<std::string> out;
  for (const Alias& a : kAliases)
    if (Format::parse(a.target) == f) out.push_back(a.alias);
  for (bool positional : {false, true}) {
    const std::string tag = onednn_tag(f, positional);
    if (!tag.empty()) out.push_back(tag);
  }
  return out;
}

}  // namespace clreorder
