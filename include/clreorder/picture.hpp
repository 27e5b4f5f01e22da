// clreorder: a layout's memory map as data (its slots in memory order) and as a picture (SVG), drawn the way
// the seed documents draw layouts: one cell per element slot in memory order, coloured by one logical axis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clreorder/layout.hpp"

namespace clreorder {

/// What an element slot of a layout's buffer holds.
enum class SlotKind {
  element,  ///< a tensor element (its coordinate is known)
  pad,      ///< padding the layout owns: a reorder writes zero there
  gap,      ///< an offset between strided elements: not the tensor's, never written
  foreign,  ///< a slot of another tensor inside the layout's span (a TPU channel slot before or after it)
};

/// One slot of a layout: its element offset, what it holds and, for an element, its logical coordinate.
struct MemorySlot {
  int64_t offset = 0;
  SlotKind kind = SlotKind::element;
  Dims coord;  ///< canonical axis order; empty unless kind is element
};

/// The layout's slots with the lowest offsets, at most `max_slots` of them, sorted by offset; a slot that
/// several coordinates share (a stride-0 broadcast) is listed once, with its first coordinate. Gaps are not
/// listed: they are the offsets between. `total`, when given, receives the number of slots the plan describes.
std::vector<MemorySlot> memory_slots(const Layout& l, int64_t max_slots, int64_t* total = nullptr);

/// How draw_memory_map() draws.
struct PictureOptions {
  /// The logical axis whose value picks a cell's colour, as its letter ("f", "x", "o"); "" picks the channel:
  /// f for data, o for weights, the TPU's C for a TPU layout.
  std::string color_by;
  /// Cells per row; 0 picks one from the layout (the largest digit stride or span of at most 24, so each row
  /// starts at the same value of the digits inside it; a TPU layout's NPU on one row when it spans at most 64
  /// cells).
  int64_t columns = 0;
  /// Slots drawn at most; the caption says how many more the layout has.
  int64_t max_cells = 4096;
};

/// One drawn cell.
struct PictureCell {
  int64_t offset = 0;              ///< element offset in the buffer
  SlotKind kind = SlotKind::gap;
  Dims coord;                      ///< of an element
  double x = 0, y = 0;             ///< top-left corner in SVG units (pixels when rendered at scale 1)
  uint32_t rgb = 0;                ///< fill colour, 0xRRGGBB
};

/// A memory map picture: the SVG document and where each cell went (so a test can check rendered pixels).
struct MemoryPicture {
  std::string svg;
  std::vector<PictureCell> cells;
  double width = 0, height = 0;            ///< of the whole picture
  double cell_width = 0, cell_height = 0;  ///< every cell's size, the white seam between cells included
  int64_t columns = 0;                     ///< cells per row
  int color_axis = 0;                      ///< position of the colour axis in the format's axes
  int64_t shown = 0, total = 0;            ///< slots drawn and slots the layout has
};

/// Draws the memory map of `l`: cells in memory order, left to right and wrapped every `columns` cells,
/// each element labelled with its coordinate and coloured by the colour axis, padding and gaps grey, the
/// element offset of each row at its left. A TPU layout gets one band per NPU (its local memory, labelled
/// "NPU q"), aligned so the same offset inside each NPU is in the same column. Long runs of rows with no slot
/// of the layout collapse into one line saying how many elements they hold. Throws naming a bad option.
MemoryPicture draw_memory_map(const Layout& l, const PictureOptions& options = {});

/// Fill colour of value `v` of the colour axis: hue v * 137.5 degrees (the golden angle, so neighbouring
/// values differ clearly), saturation 0.6, lightness 0.72 (dark text stays readable); never grey.
uint32_t picture_colour(int64_t v);
/// Fill of padding the layout owns.
inline constexpr uint32_t kPadColour = 0xb4b4b4;
/// Fill of gaps between strided elements.
inline constexpr uint32_t kGapColour = 0xe6e6e6;
/// Fill of other tensors' slots.
inline constexpr uint32_t kForeignColour = 0x8c8c8c;

}  // namespace clreorder
