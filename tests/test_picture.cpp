// Memory map pictures: the cells follow the offset model (every element where Layout::offset puts it, padding,
// gaps and other tensors' slots where the plan says), and the SVG, rendered to PNG by Debian's rsvg-convert
// and read back with libpng, shows each cell's colour where the picture says it is. The README's figures are
// what the CLI draws today.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "clreorder/error.hpp"
#include "clreorder/format.hpp"
#include "clreorder/picture.hpp"
#include "test_support.hpp"

using namespace clreorder;

namespace {

Layout layout(const std::string& name, Dims dims, DataType t = DataType::f32, Dims strides = {}, int64_t offset = 0) {
  return Layout(format_from_name(name), t, dims, {}, {}, strides, offset);
}

// The layouts the README draws, and the other families: strided views with gaps, TPU bands with other
// tensors' slots, 4N dummies, a blocked tail with padding.
std::vector<Layout> pictured() {
  return {layout("bfyx", {1, 3, 4, 4}),
          layout("b_fs_yx_fsv16", {1, 20, 2, 2}),
          layout("os_is_yx_isv16_osv16", {20, 18, 1, 1}),
          layout("bfyx", {1, 2, 3, 3}, DataType::f32, {40, 12, 4, 1}, 5),
          layout("bfyx", {2, 2, 2, 3}, DataType::f32, {400, 100, 7, 1}),
          layout("tpu_aligned(npus=4,npu_bytes=1024,addr=0)", {2, 3, 4, 5}),
          layout("tpu_local(npus=4,npu_bytes=1024,addr=1024,strides=120:0:0:2)", {2, 3, 1, 10}),
          layout("tpu_compact(npus=4,npu_bytes=1024,addr=0,mode=4n)", {6, 5, 4, 5}, DataType::i8)};
}

using clreorder_test::slurp;

std::string temp_dir() {
  static const clreorder_test::TempDir made("clreorder-picture-test");
  return made.path().empty() ? "/tmp" : made.path();
}

// RGB pixels of a PNG file, through libpng's simplified API.
struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  uint32_t at(double x, double y) const {
    const size_t i = (static_cast<size_t>(y) * width + static_cast<size_t>(x)) * 3;
    return uint32_t(rgb[i]) << 16 | uint32_t(rgb[i + 1]) << 8 | rgb[i + 2];
  }
};

Image read_png(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  Image out;
  if (!png_image_begin_read_from_file(&img, path.c_str())) {
    ADD_FAILURE() << "libpng cannot read " << path << ": " << img.message;
    return out;
  }
  img.format = PNG_FORMAT_RGB;
  out.width = img.width;
  out.height = img.height;
  out.rgb.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << "libpng cannot decode " << path << ": " << img.message;
    out.rgb.clear();
    out.width = out.height = 0;
  }
  return out;
}

bool have_rsvg() { return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0; }

int channel_diff(uint32_t a, uint32_t b) {
  int worst = 0;
  for (int s = 0; s < 24; s += 8) worst = std::max(worst, std::abs(int((a >> s) & 255) - int((b >> s) & 255)));
  return worst;
}

}  // namespace

TEST(Picture, SlotsAreTheLayoutsOwnInMemoryOrder) {
  for (const Layout& l : pictured()) {
    SCOPED_TRACE(l.describe());
    int64_t total = 0;
    const std::vector<MemorySlot> slots = memory_slots(l, 1 << 20, &total);
    EXPECT_EQ(static_cast<int64_t>(slots.size()), total);
    std::set<Dims> seen;
    int64_t prev = -1;
    for (const MemorySlot& s : slots) {
      EXPECT_GT(s.offset, prev);
      prev = s.offset;
      if (s.kind != SlotKind::element) continue;
      EXPECT_EQ(l.offset(s.coord), s.offset) << dims_to_string(s.coord, ",");
      seen.insert(s.coord);
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), l.logical_elements());
  }
  // A blocked tail: 20 channels in two blocks of 16 leave 12 padded channels at every (y, x).
  const std::vector<MemorySlot> tail = memory_slots(layout("b_fs_yx_fsv16", {1, 20, 2, 2}), 1000);
  int64_t pads = 0;
  for (const MemorySlot& s : tail) pads += s.kind == SlotKind::pad;
  EXPECT_EQ(pads, 12 * 4);
  EXPECT_EQ(tail[64 + 3].kind, SlotKind::element);  // f = 19 of (y, x) = (0, 0)
  EXPECT_EQ(tail[64 + 4].kind, SlotKind::pad);
  // A TPU tensor of 3 channels on 4 NPUs: the fourth NPU's slots are other tensors'.
  const Layout tpu = layout("tpu_aligned(npus=4,npu_bytes=1024,addr=0)", {2, 3, 4, 5});
  int64_t foreign = 0;
  for (const MemorySlot& s : memory_slots(tpu, 1 << 20)) foreign += s.kind == SlotKind::foreign;
  EXPECT_EQ(foreign, 2 * 4 * 5);
  // A limit keeps the lowest offsets and says how many there are.
  int64_t total = 0;
  const std::vector<MemorySlot> first = memory_slots(tpu, 7, &total);
  ASSERT_EQ(first.size(), 7u);
  EXPECT_EQ(first.back().offset, 6);
  EXPECT_EQ(total, 4 * 2 * 4 * 5);
}

TEST(Picture, CellsArePlacedByOffsetAndColouredByTheAxis) {
  for (const Layout& l : pictured()) {
    SCOPED_TRACE(l.describe());
    const MemoryPicture pic = draw_memory_map(l);
    const TpuPlacement* tpu = l.format().tpu();
    const int64_t npu = tpu ? tpu->npu_bytes / static_cast<int64_t>(size_of(l.data_type())) : 0;
    std::map<int64_t, const PictureCell*> by_offset;
    const PictureCell* origin = nullptr;
    for (const PictureCell& c : pic.cells) {
      EXPECT_TRUE(by_offset.emplace(c.offset, &c).second) << "offset " << c.offset << " drawn twice";
      if (c.kind == SlotKind::element) {
        EXPECT_EQ(l.offset(c.coord), c.offset);
        EXPECT_EQ(c.rgb, picture_colour(c.coord[static_cast<size_t>(pic.color_axis)]));
      }
      const uint32_t grey = c.kind == SlotKind::pad ? kPadColour : c.kind == SlotKind::gap ? kGapColour : kForeignColour;
      EXPECT_EQ(c.rgb, c.kind == SlotKind::element ? c.rgb : grey);
      if (!origin) origin = &c;
    }
    ASSERT_TRUE(origin);
    // Every slot is drawn; a cell's column is its offset (inside its NPU) modulo the row width.
    for (const MemorySlot& s : memory_slots(l, PictureOptions{}.max_cells)) {
      ASSERT_TRUE(by_offset.count(s.offset)) << "slot " << s.offset << " not drawn";
      EXPECT_EQ(by_offset[s.offset]->kind, s.kind);
    }
    for (const PictureCell& c : pic.cells) {
      const int64_t in_band = tpu ? c.offset % npu : c.offset - origin->offset;
      const int64_t first_in_band = tpu ? origin->offset % npu : 0;
      const double col = (c.x - origin->x) / pic.cell_width;
      EXPECT_EQ(static_cast<int64_t>(col + 0.5), (in_band - first_in_band) % pic.columns) << "offset " << c.offset;
    }
  }
}

TEST(Picture, ColoursFollowTheChosenAxisAndBadAxesAreNamed) {
  const Layout l = layout("b_fs_yx_fsv16", {1, 20, 2, 2});
  PictureOptions by_x;
  by_x.color_by = "x";
  for (const PictureCell& c : draw_memory_map(l, by_x).cells)
    if (c.kind == SlotKind::element) {
      EXPECT_EQ(c.rgb, picture_colour(c.coord[3]));
    }
  EXPECT_EQ(draw_memory_map(layout("oiyx", {2, 3, 1, 1})).color_axis, 0);  // weights: o
  // 2IC weights [I, O, H, W] scatter o over the NPUs: o is their channel.
  EXPECT_EQ(draw_memory_map(layout("tpu_aligned(npus=4,npu_bytes=1024,addr=0,mode=2ic)", {4, 2, 1, 1})).color_axis, 0);
  EXPECT_EQ(draw_memory_map(layout("tpu_aligned(npus=4,npu_bytes=1024,addr=0)", {4, 2, 1, 1})).color_axis, 1);
  PictureOptions bad;
  bad.color_by = "o";
  try {
    draw_memory_map(l, bad);
    ADD_FAILURE() << "colouring bfyx data by o was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--color-by 'o' is not an axis of b_fs_yx_fsv16 (its axes: bfyx)"), std::string::npos)
        << e.what();
  }
  // Neighbouring values get clearly different colours, none of them grey.
  for (int64_t v = 0; v < 64; ++v) {
    const uint32_t c = picture_colour(v);
    EXPECT_GT(channel_diff(c, picture_colour(v + 1)), 24) << v;
    EXPECT_GT(channel_diff(c, (c >> 16 & 255) * 0x010101u), 24) << v << " is nearly grey";
  }
  EXPECT_EQ(picture_colour(0), 0xe28d8du);
}

// The SVG rendered by rsvg-convert: at the inside corner of every cell, the pixel has the cell's colour.
TEST(Picture, RenderedCellsHaveTheirColours) {
  if (!have_rsvg()) {
    if (clreorder_test::in_ci()) FAIL() << "CI=true but rsvg-convert is missing (scripts/setup.sh installs librsvg2-bin)";
    GTEST_SKIP() << "rsvg-convert not found: apt-get install librsvg2-bin";
  }
  int n = 0;
  for (const Layout& l : pictured()) {
    SCOPED_TRACE(l.describe());
    const MemoryPicture pic = draw_memory_map(l);
    const std::string svg = temp_dir() + "/p" + std::to_string(n) + ".svg", png = temp_dir() + "/p" + std::to_string(n++) + ".png";
    std::ofstream(svg) << pic.svg;
    ASSERT_EQ(std::system(("rsvg-convert -o " + png + " " + svg).c_str()), 0);
    const Image img = read_png(png);
    ASSERT_EQ(img.width, static_cast<uint32_t>(pic.width + 0.5));
    ASSERT_EQ(img.height, static_cast<uint32_t>(pic.height + 0.5));
    for (const PictureCell& c : pic.cells)
      EXPECT_LE(channel_diff(img.at(c.x + 2.5, c.y + 2.5), c.rgb), 2) << "cell of offset " << c.offset << " at " << c.x << "," << c.y;
    // The white seam between cells: the picture is cells, not one smear of colour.
    const PictureCell& first = pic.cells.front();
    EXPECT_EQ(img.at(first.x + pic.cell_width - 0.5, first.y + 3), 0xffffffu);
  }
  // Known cells by hand: b_fs_yx_fsv16 1x20x2x2 in rows of 16. Row 0 holds (y, x) = (0, 0) channels 0..15,
  // row 4 (offset 64) channels 16..19 of (0, 0) then 12 pad cells.
  const MemoryPicture pic = draw_memory_map(layout("b_fs_yx_fsv16", {1, 20, 2, 2}));
  ASSERT_EQ(pic.columns, 16);
  std::ofstream(temp_dir() + "/known.svg") << pic.svg;
  ASSERT_EQ(std::system(("rsvg-convert -o " + temp_dir() + "/known.png " + temp_dir() + "/known.svg").c_str()), 0);
  const Image img = read_png(temp_dir() + "/known.png");
  const double x0 = pic.cells[0].x + 3, y0 = pic.cells[0].y + 3, w = pic.cell_width, h = pic.cell_height;
  EXPECT_EQ(img.at(x0, y0), 0xe28d8du);                                    // f = 0
  EXPECT_EQ(img.at(x0 + 5 * w, y0), picture_colour(5));                    // f = 5
  EXPECT_EQ(img.at(x0 + 3 * w, y0 + 4 * h), picture_colour(19));           // f = 19
  EXPECT_EQ(img.at(x0 + 4 * w, y0 + 4 * h), kPadColour);                   // first pad channel
  EXPECT_EQ(img.at(x0 + 15 * w, y0 + 7 * h), kPadColour);                  // last slot
}

// README's figures are what `clreorder explain --svg` draws today (scripts/pictures.sh redraws them).
TEST(Picture, ReadmeFiguresAreCurrent) {
  const std::string script = slurp(std::string(CLREORDER_SOURCE_DIR) + "/scripts/pictures.sh");
  ASSERT_FALSE(script.empty());
  int checked = 0;
  std::stringstream lines(script);
  for (std::string line; std::getline(lines, line);) {
    // Lines of the form: draw NAME FORMAT SHAPE [more explain options]
    if (line.rfind("draw ", 0) != 0) continue;
    std::stringstream words(line);
    std::string draw, name, rest, w;
    words >> draw >> name;
    std::vector<std::string> args;
    while (words >> w) args.push_back(w.front() == '\'' ? w.substr(1, w.size() - 2) : w);
    std::string cmd = std::string(CLREORDER_CLI_PATH) + " explain";
    for (const std::string& a : args) cmd += " '" + a + "'";
    const std::string out = temp_dir() + "/" + name + ".svg";
    cmd += " --svg " + out + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(slurp(out), slurp(std::string(CLREORDER_SOURCE_DIR) + "/docs/pictures/" + name + ".svg"))
        << "docs/pictures/" << name << ".svg is stale: run scripts/pictures.sh";
    ++checked;
  }
  EXPECT_GE(checked, 4);
}
