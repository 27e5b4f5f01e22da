// Memory maps: a layout's slots in memory order (what `explain` prints) and the SVG picture of them (what
// `explain --svg` draws). Both walk the index plan, the one offset model, so the picture shows exactly where
// the reference and the kernels put each element.
#include "clreorder/picture.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "clreorder/error.hpp"

namespace clreorder {

std::vector<MemorySlot> memory_slots(const Layout& l, int64_t max_slots, int64_t* total) {
  // Digits sorted by stride make tuple order memory order for any plan (a TPU plan keeps the NPU digit where
  // the blocked format has its block), so the first tuples are the lowest offsets.
  IndexPlan plan = l.plan();
  std::stable_sort(plan.digits.begin(), plan.digits.end(),
                   [](const PlanDigit& a, const PlanDigit& b) { return a.stride > b.stride; });
  if (total) *total = plan.digit_space;
  const int64_t n = std::min(plan.digit_space, std::max<int64_t>(max_slots, 0));
  std::vector<MemorySlot> slots;
  slots.reserve(static_cast<size_t>(n));
  Dims coord(static_cast<size_t>(l.rank()));
  for (int64_t p = 0; p < n; ++p) {
    MemorySlot s;
    bool owned = true;
    if (plan.decode(p, &s.offset, coord.data(), &owned)) {
      s.coord = coord;
    } else {
      s.kind = owned ? SlotKind::pad : SlotKind::foreign;
    }
    slots.push_back(std::move(s));
  }
  std::stable_sort(slots.begin(), slots.end(), [](const MemorySlot& a, const MemorySlot& b) { return a.offset < b.offset; });
  slots.erase(std::unique(slots.begin(), slots.end(), [](const MemorySlot& a, const MemorySlot& b) { return a.offset == b.offset; }),
              slots.end());
  return slots;
}

uint32_t picture_colour(int64_t v) {
  // HSL to RGB with s = 0.6, l = 0.72.
  const double h = std::fmod(static_cast<double>(v % 1000003) * 137.50776405003785, 360.0) / 60.0;
  const double s = 0.6, li = 0.72;
  const double c = (1 - std::fabs(2 * li - 1)) * s, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = li - c / 2;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(h) % 6) {
    case 0: r = c, g = x; break;
    case 1: r = x, g = c; break;
    case 2: g = c, b = x; break;
    case 3: g = x, b = c; break;
    case 4: r = x, b = c; break;
    default: r = c, b = x; break;
  }
  auto byte = [&](double t) { return static_cast<uint32_t>(std::lround((t + m) * 255.0)); };
  return byte(r) << 16 | byte(g) << 8 | byte(b);
}

namespace {

std::string hex(uint32_t rgb) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", rgb & 0xffffffu);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string xml_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string coord_label(const Dims& c) {
  std::string s;
  for (size_t a = 0; a < c.size(); ++a) s += (a ? "," : "") + std::to_string(c[a]);
  return s;
}

int colour_axis(const Layout& l, const std::string& color_by) {
  const Format& f = l.format();
  const std::string& axes = f.axes();
  if (color_by.empty()) {
    if (const TpuPlacement* t = f.tpu()) return t->channel_axis();
    const size_t p = axes.find(f.kind() == FormatKind::data ? 'f' : 'o');
    return p == std::string::npos ? 0 : static_cast<int>(p);
  }
  const size_t p = color_by.size() == 1 ? axes.find(color_by[0]) : std::string::npos;
  if (p == std::string::npos)
    throw Error("--color-by '" + color_by + "' is not an axis of " + f.name() + " (its axes: " + axes + ")");
  return static_cast<int>(p);
}

// Cells per row when not given: the largest digit stride or digit span (stride x extent) of at most 24, so
// rows start at the same value of every digit finer than it (a y row of bfyx, a 16-channel block of
// b_fs_yx_fsv16, an H row of a TPU tensor with a W stride of 2); a layout whose finest digit is wider wraps at 32.
int64_t default_columns(const Layout& l) {
  int64_t cols = 1, finest = 32;
  for (const PlanDigit& g : l.plan().digits) {
    if (g.extent <= 1) continue;
    for (int64_t v : {g.stride, g.stride * g.extent})
      if (v <= 24) cols = std::max(cols, v);
    if (g.stride == 1) finest = std::min<int64_t>(g.extent, 32);
  }
  return cols > 1 ? cols : finest;
}

// Geometry: left margin for row labels, cell size from the longest label, the caption on top.
constexpr double kFont = 10, kCharWidth = 6.1, kMargin = 8, kCellHeight = 22, kCaption = 22, kBandGap = 8;

}  // namespace

MemoryPicture draw_memory_map(const Layout& l, const PictureOptions& o) {
  if (o.max_cells < 1) throw Error("max_cells " + std::to_string(o.max_cells) + " must be at least 1");
  if (o.columns < 0 || o.columns > 4096) throw Error("--columns " + std::to_string(o.columns) + ": expected 1 to 4096");
  MemoryPicture pic;
  pic.color_axis = colour_axis(l, o.color_by);
  const std::vector<MemorySlot> slots = memory_slots(l, o.max_cells, &pic.total);
  pic.shown = static_cast<int64_t>(slots.size());
  const Format& f = l.format();
  const TpuPlacement* tpu = f.tpu();
  const int64_t npu_elems = tpu ? tpu->npu_bytes / static_cast<int64_t>(size_of(l.data_type())) : 0;  // no 4-bit TPU layouts

  // Each slot's band (the NPU of a TPU layout, else 0) and index inside it; rows are `cols` indices wide,
  // counted from the lowest index of any band, so equal offsets inside NPUs line up.
  auto band_of = [&](int64_t off) { return tpu ? off / npu_elems : 0; };
  auto index_of = [&](int64_t off) { return tpu ? off % npu_elems : off; };
  int64_t lo = slots.empty() ? 0 : index_of(slots.front().offset), hi = lo;
  for (const MemorySlot& s : slots) {
    lo = std::min(lo, index_of(s.offset));
    hi = std::max(hi, index_of(s.offset));
  }
  int64_t cols = o.columns;
  if (cols == 0) cols = tpu && hi - lo < 64 ? hi - lo + 1 : default_columns(l);
  pic.columns = cols;

  size_t label_chars = 3;
  for (const MemorySlot& s : slots)
    if (s.kind == SlotKind::element) label_chars = std::max(label_chars, coord_label(s.coord).size());
  pic.cell_width = std::max(24.0, std::ceil(label_chars * kCharWidth) + 6);
  pic.cell_height = kCellHeight;
  const std::string rowlabel_sample = tpu ? "NPU " + std::to_string(tpu->npus - 1) : std::to_string(l.elements());
  const double left = kMargin + std::ceil((rowlabel_sample.size() + 1) * kCharWidth);

  std::string body;
  double y = kMargin + kCaption;
  auto text = [&](double tx, double ty, const std::string& s, const char* anchor) {
    body += "<text x=\"" + num(tx) + "\" y=\"" + num(ty) + "\" text-anchor=\"" + anchor + "\">" + xml_text(s) + "</text>\n";
  };
  auto cell = [&](int64_t off, SlotKind kind, const Dims& coord, int64_t col) {
    PictureCell c;
    c.offset = off;
    c.kind = kind;
    c.coord = coord;
    c.x = left + static_cast<double>(col) * pic.cell_width;
    c.y = y;
    c.rgb = kind == SlotKind::element ? picture_colour(coord[static_cast<size_t>(pic.color_axis)])
            : kind == SlotKind::pad   ? kPadColour
            : kind == SlotKind::gap   ? kGapColour
                                      : kForeignColour;
    body += "<rect x=\"" + num(c.x) + "\" y=\"" + num(c.y) + "\" width=\"" + num(pic.cell_width - 1) + "\" height=\"" +
            num(pic.cell_height - 1) + "\" fill=\"" + hex(c.rgb) + "\"/>\n";
    const char* word = kind == SlotKind::pad ? "pad" : kind == SlotKind::foreign ? "x" : "";
    const std::string label = kind == SlotKind::element ? coord_label(coord) : word;
    if (!label.empty()) text(c.x + pic.cell_width / 2 - 0.5, c.y + pic.cell_height / 2 + kFont / 2 - 1.5, label, "middle");
    pic.cells.push_back(std::move(c));
  };

  // Bands in offset order (slots are sorted by offset, and an NPU's offsets follow the previous NPU's).
  size_t i = 0;
  while (i < slots.size()) {
    const int64_t band = band_of(slots[i].offset);
    const int64_t origin = tpu ? band * npu_elems : 0;
    const int64_t first = tpu ? lo : index_of(slots[i].offset);
    int64_t row = -1;  // row being drawn, relative to `first`
    int64_t next_col = 0;
    bool band_label = tpu != nullptr;
    auto start_row = [&](int64_t r) {
      if (row >= 0) y += pic.cell_height;
      if (row >= 0 && r > row + 1) {
        // Rows with no slot: one row of gap cells, or a line saying how many elements a longer run holds.
        const int64_t empty = r - row - 1;
        if (empty == 1) {
          for (int64_t c = 0; c < cols; ++c) cell(origin + first + (row + 1) * cols + c, SlotKind::gap, {}, c);
          y += pic.cell_height;
        } else {
          text(left + 4, y + pic.cell_height * 0.6, "... " + std::to_string(empty * cols) + " elements not this tensor's", "start");
          y += pic.cell_height - 2;
        }
      }
      row = r;
      next_col = 0;
      const std::string label = band_label ? "NPU " + std::to_string(band) : tpu ? "" : std::to_string(first + r * cols);
      band_label = false;
      if (!label.empty()) text(left - 6, y + pic.cell_height / 2 + kFont / 2 - 1.5, label, "end");
    };
    for (; i < slots.size() && band_of(slots[i].offset) == band; ++i) {
      const MemorySlot& s = slots[i];
      const int64_t at = index_of(s.offset) - first, r = at / cols, col = at % cols;
      if (r != row) start_row(r);
      for (int64_t c = next_col; c < col; ++c) cell(origin + first + r * cols + c, SlotKind::gap, {}, c);
      cell(s.offset, s.kind, s.coord, col);
      next_col = col + 1;
    }
    y += pic.cell_height + (tpu ? kBandGap : 0);
  }

  // Legend: the colour axis's first values, then the greys that appear.
  const std::string axis(1, f.axes()[static_cast<size_t>(pic.color_axis)]);
  double lx = kMargin;
  y += 4;
  auto swatch = [&](uint32_t rgb, const std::string& what) {
    const double w = 16 + std::ceil((what.size() + 1) * kCharWidth) + 10;
    if (lx + w > std::max(left + cols * pic.cell_width, 400.0)) {
      lx = kMargin;
      y += 18;
    }
    body += "<rect x=\"" + num(lx) + "\" y=\"" + num(y) + "\" width=\"12\" height=\"12\" fill=\"" + hex(rgb) + "\"/>\n";
    text(lx + 16, y + 10, what, "start");
    lx += w;
  };
  std::map<int64_t, bool> values;
  bool kinds[4] = {false, false, false, false};
  for (const PictureCell& c : pic.cells) {
    kinds[static_cast<int>(c.kind)] = true;
    if (c.kind == SlotKind::element && values.size() < 16) values[c.coord[static_cast<size_t>(pic.color_axis)]] = true;
  }
  for (const auto& [v, unused] : values) swatch(picture_colour(v), axis + "=" + std::to_string(v));
  if (kinds[static_cast<int>(SlotKind::pad)]) swatch(kPadColour, "padding (written 0)");
  if (kinds[static_cast<int>(SlotKind::gap)]) swatch(kGapColour, "gap (not written)");
  if (kinds[static_cast<int>(SlotKind::foreign)]) swatch(kForeignColour, "other tensors (not written)");
  y += 12 + kMargin;

  pic.width = std::max(left + static_cast<double>(cols) * pic.cell_width + kMargin, 400.0);
  pic.height = y;
  std::string caption = l.describe() + ", " +
                        (is_nibble(l.data_type()) ? std::string("4-bit") : std::to_string(size_of(l.data_type())) + "-byte") +
                        " elements; colour: " + axis;
  if (pic.shown < pic.total) caption += "; first " + std::to_string(pic.shown) + " of " + std::to_string(pic.total) + " slots";
  std::string head = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(pic.width) + "\" height=\"" + num(pic.height) +
                     "\" viewBox=\"0 0 " + num(pic.width) + " " + num(pic.height) + "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"" +
                     num(kFont) + "\" fill=\"#222222\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  head += "<text x=\"" + num(kMargin) + "\" y=\"" + num(kMargin + 12) + "\" font-size=\"12\">" + xml_text(caption) + "</text>\n";
  pic.svg = head + body + "</svg>\n";
  return pic;
}

}  // namespace clreorder
