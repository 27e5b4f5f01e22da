// Every implementation forced, in the CPU and the GPU tuning, on small reorders across data, weights and
// grouped formats, 8/16/32/64-bit types, conversions, tails, lower and upper paddings and non-zero buffer
// offsets, checked byte for byte against the host reference inside guarded arguments.
// ctest runs this binary under Oclgrind (tests/oclgrind_check.sh), where every memory access is checked and
// each argument is a buffer of its own, so a read or write outside a layout fails the test even when the
// bytes it moves are masked; it also runs on the default device like every device test.
// CLREORDER_SWEEP_VERBOSE=1 prints each run before it starts (where a crash of the simulator stops).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "code_checks.hpp"
#include "device_cases.hpp"
#include "plan_checks.hpp"
#include "test_support.hpp"

using namespace clreorder;
using namespace clreorder_test;

namespace {

struct Sweep {
  Case c;
  size_t src_off = 0, dst_off = 0;  // units of unit_bytes(): elements, bytes of u4 and i4
};

Format F(const char* name) { return format_from_name(name); }

// A strided view: its gaps must stay untouched, its reads stay inside the source.
Layout V(const char* name, const Dims& dims, const Dims& strides, int64_t offset, DataType t) {
  return Layout(F(name), t, dims, {}, {}, strides, offset);
}

std::vector<Sweep> sweep_cases() {
  using T = DataType;
  return {
      // Data: blocked tails, lower and upper paddings on either side, every element size, conversions.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {3, 19, 5, 7}, T::f32, T::f32, {}, {}, {0, 0, 1, 1}, {0, 0, 1, 0}), 0, 3},
      {make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 3, 4}, T::f16, T::f32, {0, 16, 0, 1}, {0, 0, 1, 0}), 1, 0},
      {make_case(F("bfyx"), F("byxf"), {2, 13, 4, 8}, T::u8, T::u8), 3, 1},
      {make_case(F("byxf"), F("bfyx"), {2, 24, 3, 3}, T::i8, T::f16, {0, 0, 0, 0}, {0, 0, 1, 1}), 0, 1},
      {make_case(F("bfyx"), F("bs_fs_yx_bsv16_fsv16"), {17, 18, 2, 3}, T::f16, T::f16, {}, {}, {0, 0, 1, 1}), 0, 0},
      {make_case(F("fs_b_yx_fsv32"), F("bfyx"), {3, 40, 2, 3}, T::f32, T::f32), 0, 0},
      // Every row a tail (12 of 16 lanes): tiled's masked lanes, whose f32 signalling NaNs (from f16's) a float
      // select() quieted under Oclgrind (its builtins compute in double); the random pass holds two.
      {make_case(F("bs_f_bsv16"), F("bs_f_bsv16"), {12, 17}, T::f16, T::f32, {}, {0, 1}), 0, 0},
      {make_case(F("bfzyx"), F("b_fs_zyx_fsv16"), {2, 19, 2, 3, 4}, T::bf16, T::f32, {0, 1, 1, 0, 2}, {1, 0, 0, 1, 0},
                 {0, 2, 0, 1, 1}, {0, 1, 1, 0, 1}), 1, 2},
      {make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 7, 3, 5}, T::i64, T::i32, {}, {}, {}, {0, 2, 1, 1}), 1, 1},
      {make_case(F("yxfb"), F("bs_fs_yx_bsv32_fsv16"), {17, 19, 2, 3}, T::i8, T::f32), 0, 0},
      // Pixels 8 KiB apart whose 4 batches (32 bytes) CPU tiles join with 8 of the 256 channels (B of four lines):
      // transposes, and scalar loops into a destination padded in x.
      {make_case(F("yxfb"), F("bfyx"), {4, 256, 2, 4}, T::i64, T::i64), 0, 0},
      {make_case(F("yxfb"), F("bfyx"), {4, 256, 2, 4}, T::i64, T::i64, {}, {}, {}, {0, 0, 0, 1}), 0, 0},
      // 3136 positions in 8-bit steps: planned to stream (the sweep's cache of 1 byte), CPU tiles take 448 of them
      // (a multiple of a line), not 784, and unroll to whole lines.
      {make_case(F("b_fs_yx_fsv16"), F("bfyx"), {1, 16, 56, 56}, T::i8, T::i8), 0, 0},
      // 32-byte blocks whose CPU tiles take part of the batch block's 32 into A (two for a line per column of
      // i8, eight for four lines of f16: 128 rows), over a batch tail and a channel tail.
      {make_case(F("bfyx"), F("bs_fs_yx_bsv32_fsv32"), {34, 40, 2, 3}, T::i8, T::i8), 0, 1},
      {make_case(F("bfyx"), F("bs_fs_yx_bsv32_fsv16"), {33, 20, 3, 2}, T::f16, T::f16, {}, {}, {0, 0, 1, 0}), 1, 0},
      {make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::bf16, {0, 0, 1, 0}, {}, {}, {0, 0, 0, 0}), 0, 1},
      {make_case(F("byxf"), F("b_fs_yx_fsv32"), {2, 33, 3, 4}, T::i32, T::i64), 0, 0},
      // Rows of 16 of 48 channels: in CPU tiles a work-item takes the source's whole rows (B: fs, then x), and
      // back (B: fs, then x, where a block's plane is over 2 KiB).
      {make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 48, 3, 5}, T::f32, T::f16, {}, {}, {0, 0, 1, 0}, {0, 0, 0, 2}), 0, 1},
      {make_case(F("b_fs_yx_fsv16"), F("byxf"), {1, 48, 6, 7}, T::f32, T::f32, {}, {}, {0, 0, 1, 0}), 1, 0},
      // 8- and 16-bit transposes whose B is at its floor: in CPU tiles A goes past 256 elements (320), over a
      // masked channel tail and a padded source.
      {make_case(F("byxf"), F("bfyx"), {1, 16, 16, 20}, T::u8, T::u8), 0, 1},
      {make_case(F("b_fs_yx_fsv32"), F("bfyx"), {1, 24, 16, 20}, T::f16, T::f16, {0, 0, 1, 0}), 1, 0},
      // Source rows 2 KiB apart: CPU tiles prefetch them (transpose_loops()), here through OpenCL's prefetch();
      // the second with a channel tail, whose rows of padding get no hint.
      {make_case(F("bfyx"), F("byxf"), {1, 16, 2, 128}, T::i64, T::i64), 1, 0},
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {1, 20, 1, 512}, T::f32, T::f16), 0, 1},
      {make_case(F("b_fs_yx_fsv16"), F("byxf"), {1, 128, 8, 8}, T::f16, T::f16), 1, 0},  // row copies from 8 planes
      // More such rows than kFarRows (impl_tiled.cpp): CPU tiles read 32 of them at a time into 16-bit
      // destinations (64 channels: two chunks of A), the rows 2 KiB apart through the source's padding, and 16
      // of them into 4- and 8-byte ones (kWideFarRows: four chunks of A; 256 positions: four chunks of B). The
      // smallest such tensors (8-byte elements need the fewest positions for 2 KiB rows; Oclgrind's time goes
      // with the elements): the other types take the same code with other lengths, which host.format checks.
      {make_case(F("bfyx"), F("byxf"), {1, 64, 1, 16}, T::f16, T::f16, {}, {0, 0, 0, 1008}), 1, 0},
      {make_case(F("bfyx"), F("byxf"), {1, 64, 1, 256}, T::i64, T::i64), 1, 2},
      // ... and 64 of them into 8-bit destinations, a line of each destination row (two chunks of 128 channels),
      // the rows 2 KiB apart through the source's padding.
      {make_case(F("bfyx"), F("byxf"), {1, 128, 1, 16}, T::i8, T::i8, {}, {0, 0, 0, 2032}), 1, 0},
      // Nested destination blocks (16 batches x 16 channels: 256 rows 2 KiB apart through the source's
      // padding; two channel blocks, so that the batch block does not continue the channels' rows): CPU tiles
      // read 64 of them into 16-bit destinations (kFarBlockRows), the batch block's outer quarters in the grid;
      // and (16 batches x 8 channels, 128 rows) 16 of them into 8-byte ones (kWideFarRows), the batch block's
      // outer eighths in the grid. The smallest such tensors.
      {make_case(F("bfyx"), F("bs_fs_yx_bsv16_fsv16"), {16, 32, 1, 16}, T::f16, T::f16, {}, {0, 0, 0, 1008}), 0, 1},
      {make_case(F("bfyx"), F("bs_fs_yx_bsv16_fsv8"), {16, 16, 1, 256}, T::f64, T::f64), 0, 1},
      // Nested source blocks (16 channels x 16 batches, 256 destination rows): CPU tiles write 64 of them at a
      // time into 8- and 16-bit destinations, the batch block's outer quarters in the grid (host.format checks
      // the plan on a network's shape).
      {make_case(F("bs_fs_yx_bsv16_fsv16"), F("bfyx"), {32, 32, 1, 4}, T::f16, T::f16), 1, 0},
      // 16-bit elements along an A past one block: 16 columns a step in CPU tiles (vector_width()), from a source
      // offset by an odd number of elements, and into a destination padded in y.
      {make_case(F("bfyx"), F("byxf"), {1, 32, 2, 16}, T::f16, T::f16), 1, 2},
      {make_case(F("byxf"), F("bfyx"), {1, 32, 2, 16}, T::bf16, T::bf16, {}, {}, {0, 0, 1, 0}), 0, 1},
      // Scalar loops whose source rows (9 floats) are under a line: CPU tiles walk the input channel innermost,
      // and prefetch the rows, 2304 bytes apart.
      {make_case(F("oiyx"), F("i_yxs_os_yxsv2_osv16"), {32, 64, 3, 3}, T::f32, T::f32), 1, 1},
      // Weights whose output channels' rows lie 2 KiB apart: staged and lanes prefetch them in CPU tiles.
      {make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {16, 64, 3, 3}, T::f32, T::f32), 0, 1},
      {make_case(F("oiyx"), F("os_is_yx_osv32_isv4_swizzled_by_2"), {32, 512, 2, 2}, T::i8, T::i8), 1, 0},
      // Out of isv16_osv16 blocks: CPU tiles' A takes 3 x 3 positions and the block's 16 input channels, its rows'
      // source offsets from a table (with tails of both channel blocks in the second).
      {make_case(F("os_is_yx_isv16_osv16"), F("oiyx"), {32, 32, 3, 3}, T::f16, T::f16), 0, 1},
      {make_case(F("os_is_yx_isv16_osv16"), F("oiyx"), {17, 33, 3, 3}, T::f32, T::f32), 1, 0},
      // A swizzle's tail mask exchanging two binary digits, which clang -O2 makes llvm.bitreverse.i2: Oclgrind
      // cannot create that kernel, so it is built again without optimisation (ProgramCache::make()).
      {make_case(F("os_x_ys_ysv2_osv4_i_swizzled_by_2"), F("yi_os_osv32_x"), {8, 1, 4, 7}, T::f8e4m3, T::i32), 0, 0},
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 32, 4, 4}, T::f32, T::f16), 0, 1},
      {make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 32, 7, 7}, T::u8, T::u8), 2, 0},
      // Destination rows that padding makes odd (13 + 2 = 15, 22 + 1 = 23): tiled iterates them to 16 and 24
      // (rounded_source_row()), the overshoot neither read nor written; the second's source is padded too.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 13}, T::f16, T::f16, {}, {}, {0, 0, 1, 2}, {0, 1, 0, 0}), 0, 1},
      {make_case(F("bfyx"), F("byxf"), {1, 16, 2, 22}, T::f32, T::f32, {0, 0, 0, 1}, {0, 0, 0, 2}, {0, 0, 0, 1}), 1, 0},
      // Rows whose steps hold unreadable columns (lower and upper padding): tiled loads such a step's readable
      // columns in a loop into a private tile; the CPU tuning's second step has a readable prefix and a run
      // of none, the GPU tuning's steps move with the grid.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 32, 3, 25}, T::f16, T::f16, {}, {}, {0, 0, 1, 2}, {0, 1, 0, 5}), 1, 0},
      // Destination rows 4 KiB apart (one cache set): tiled's CPU tiles run two steps along A and store each
      // row's line in one go, past a source tail along the rows' axis, through per-channel tables.
      {converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {1, 9, 32, 32}, T::f32, T::f32),
                  with_params({}, {{Param::mul, ParamValues{ramp(9, 0.5f, 0.25f), 1}}})), 0, 1},
      // The 16-, 32- and 64-bit types: f64 into f16 (through f32 rounded to odd), i16 and u16 words, u64 tails.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f64, T::f16, {}, {}, {0, 1, 0, 0}), 0, 1},
      {make_case(F("byxf"), F("bfyx"), {2, 24, 3, 3}, T::i16, T::f64), 1, 0},
      {make_case(F("bfyx"), F("byxf"), {2, 13, 4, 8}, T::u16, T::u16), 1, 3},
      {make_case(F("b_fs_yx_fsv16"), F("byxf"), {2, 19, 2, 3}, T::u64, T::u32, {0, 0, 1, 0}), 0, 0},
      // Issue 16's rounding and overflow modes: the vector conversions of each (shifts, 64-bit masks).
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f32, T::i8), modes(Rounding::toward_zero, Overflow::wrap)), 0, 1},
      {converting(make_case(F("byxf"), F("bfyx"), {2, 24, 3, 3}, T::f64, T::u16), modes(Rounding::nearest_even, Overflow::wrap)), 1, 0},
      {converting(make_case(F("bfyx"), F("byxf"), {2, 13, 4, 8}, T::i32, T::bf16), modes(Rounding::toward_zero, Overflow::saturate)), 0, 2},
      // The 8-bit floats: packed byte words, both directions, one of them truncating.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f32, T::f8e4m3, {}, {}, {0, 1, 0, 0}), 0, 1},
      {converting(make_case(F("byxf"), F("bfyx"), {2, 24, 3, 3}, T::f8e5m2, T::f8e4m3), modes(Rounding::toward_zero, Overflow::saturate)), 1, 0},
      // Fused arithmetic (issue 16): per tensor in tiled's, lanes' and staged's vector conversions (dividing:
      // by a reciprocal), per channel in the generic kernel's and tiled's table reads.
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f32, T::i8),
                  with_params(modes(Rounding::toward_zero, Overflow::wrap), {{Param::src_scale, {{0.37f}, -1}},
                              {Param::dst_scale, {{0.21f}, -1}}, {Param::dst_zero_point, {{-7}, -1}}})), 0, 1},
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::i8, T::u8),
                  with_params({}, {{Param::src_zero_point, {{3}, -1}}, {Param::src_scale, {{2.5f}, -1}}})), 0, 2},
      {converting(make_case(F("bfyx"), F("byxf"), {2, 24, 3, 3}, T::u8, T::f16),
                  with_params({}, {{Param::sub, {{1.7f}, -1}}, {Param::div, {{1.9f}, -1}}})), 1, 0},
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 19, 2, 3}, T::u8, T::f16, {}, {}, {0, 1, 0, 0}),
                  with_params({}, {{Param::sub, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 1}},
                                   {Param::mul, {{0.5f, -2}, 0}}})), 0, 1},
      // Tiled's rows into a blocked tail looking an 8-bit source's tail lanes up (byte_table()): per channel
      // (3 lanes) and one table (a vector, then 3 lanes).
      {converting(make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 3, 2, 3}, T::u8, T::f16),
                  with_params({}, {{Param::sub, {{123.7f, 116.3f, 103.5f}, 1}}, {Param::div, {{58.4f, 57.1f, 57.4f}, 1}}})), 0, 1},
      {make_case(F("byxf"), F("b_fs_yx_fsv16"), {2, 19, 2, 3}, T::i8, T::bf16), 0, 0},
      // ... and in tiled's register transposes (lanes along f, into a tail) and vector rows (one value per row,
      // and a vector load of 16 along x),
      // staged's tiles (lanes along x, f in its loop) and lanes' picked words (f16 pairs of channels).
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {1, 19, 4, 16}, T::f32, T::f16),
                  with_params({}, {{Param::div, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 1}}})), 0, 1},
      {converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i8, {}, {}, {0, 0, 1, 0}, {0, 1, 0, 0}),
                  with_params({}, {{Param::src_scale, {{0.5f, 2, -3, 0.25f}, 2}},
                                   {Param::mul, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, -16}, 3}}})), 0, 0},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 8, 7, 7}, T::i8, T::i8),
                  with_params({}, {{Param::src_scale, {{0.5f, 2, 3, 4, 5, 6, 7}, 3}}, {Param::sub, {{1, 2, 3, 4, 5, 6, 7, 8}, 1}}})), 0, 0},
      {converting(make_case(F("bfyx"), F("byxf"), {3, 4, 1, 17}, T::f16, T::f16),
                  with_params({}, {{Param::mul, {{1.5f, -2, 0.25f, 3}, 1}}})), 0, 0},
      // Groups along one axis for every index of another, constants or from buffers (exactly their values'
      // size): weights' tails on both block axes, destination padding (lanes that clamp their coordinates),
      // lanes' picked words, staged's tiles.
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8),
                  with_params({}, {{Param::dst_scale, ParamValues{ramp(33 * 3, 0.02f, 0.01f), 1, 8, 0}}})), 0, 1},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f32, T::f16, {}, {}, {0, 0, 1, 0}, {0, 0, 0, 1}),
                  with_params({}, {{Param::sub, ParamValues{ramp(19, 1, 1), 1, 1, -1, true}},
                                   {Param::src_scale, ParamValues{{0.5f}, -1, 1, -1, true}},
                                   {Param::mul, ParamValues{ramp(19 * 3, -2, 0.37f), 3, 2, 1, true}}})), 0, 1},
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::i8, T::u8),
                  with_params({}, {{Param::src_scale, ParamValues{ramp(32 * 5, 0.8f, 0.03f), 1, 4, 0, true}},
                                   {Param::dst_zero_point, ParamValues{{128}, -1}}})), 0, 2},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 8, 7, 7}, T::i8, T::i8),
                  with_params({}, {{Param::src_scale, ParamValues{ramp(8 * 3, 0.5f, 0.125f), 3, 3, 1}}})), 0, 0},
      // Lanes along the groups' axis, no more than a group: two reads and a select (staged's tiles of 4,
      // lanes' words of 8), or where the lanes start at a multiple of their width one read (tiled's rows of
      // 4), o's tail clamping the row of padding lanes; a divisor from a buffer (its reciprocal computed in the
      // kernel); groups of 4 under tiled's transposes of 16 lanes along x: a read per group.
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {20, 24, 1, 1}, T::f32, T::i8),
                  with_params({}, {{Param::dst_scale, ParamValues{ramp(20 * 3, 0.02f, 0.013f), 1, 8, 0}}})), 0, 1},
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 24, 1, 1}, T::f32, T::u8),
                  with_params({}, {{Param::dst_scale, ParamValues{ramp(32 * 3, 0.5f, 0.25f), 1, 8, 0, true}},
                                   {Param::dst_zero_point, ParamValues{{7}, -1}}})), 1, 0},
      {converting(make_case(F("bfyx"), F("byxf"), {2, 16, 2, 64}, T::f32, T::i8),
                  with_params({}, {{Param::src_scale, ParamValues{ramp(16 * 16, 0.5f, 0.25f), 3, 4, 1}}})), 0, 1},
      // Rows longer than the CPU tiles' 256 kept apart by per-index parameters: a work-item takes one chunk of
      // a row (600 = 3 x 200), groups of 128 ending inside chunks and vectors, offsets on both sides.
      {converting(make_case(F("oiyx"), F("oiyx"), {3, 600, 1, 1}, T::i8, T::f16),
                  with_params({}, {{Param::src_scale, ParamValues{ramp(3 * 5, 0.5f, 0.25f), 1, 128, 0}}})), 1, 3},
      // Padding kept (issue 16): tails inside the vector rows (stored lane by lane), padding on the grid axes.
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 8}, T::f32, T::f16, {}, {}, {0, 0, 1, 0}, {0, 0, 0, 1}),
                  modes(Rounding::nearest_even, Overflow::saturate, Padding::keep)), 0, 1},
      {converting(make_case(F("bfyx"), F("byxf"), {3, 24, 3, 3}, T::i8, T::i8, {}, {}, {0, 0, 0, 0}, {2, 0, 0, 0}),
                  modes(Rounding::nearest_even, Overflow::saturate, Padding::keep)), 1, 0},
      // Strided views: a slice with gaps on either side, a broadcast source, blocks with room between them.
      {case_of(Layout(F("b_fs_yx_fsv16"), T::f32, {2, 19, 5, 7}), V("bfyx", {2, 19, 5, 7}, {7 * 11 * 24, 1, 11 * 24, 24}, 313, T::f32)), 0, 1},
      {case_of(V("bfyx", {2, 19, 5, 7}, {24 * 77, 77, 11, 1}, 90, T::f16), Layout(F("byxf"), T::f16, {2, 19, 5, 7})), 1, 0},
      {case_of(V("bfyx", {3, 20, 3, 5}, {15, 0, 5, 1}, 0, T::f32), V("b_fs_yx_fsv16", {3, 20, 3, 5}, {1000, 300, 96, 16}, 7, T::f32)), 0, 0},
      // A crop whose 72-long source rows are split into tiles of 24 (CPU) or 8 (GPU) for the register transposes.
      {case_of(V("bfyx", {2, 16, 2, 72}, {16 * 3 * 80, 3 * 80, 80, 1}, 5, T::f32), Layout(F("byxf"), T::f32, {2, 16, 2, 72})), 0, 0},
      // TPU local memory: the other tensors' slots untouched, 4N dummies zero, a matrix's ragged last channel.
      {case_of(Layout(F("bfyx"), T::i8, {6, 5, 4, 5}), Layout(F("tpu_aligned(npus=4,npu_bytes=1024,addr=1024,mode=4n)"), T::i8, {6, 5, 4, 5})), 0, 0},
      {case_of(Layout(F("tpu_matrix(npus=4,npu_bytes=1024,addr=2176,w=15)"), T::f32, {2, 40}), Layout(F("bf"), T::f16, {2, 40})), 0, 1},
      // A reshape: bfzyx into a blocked bfyx of another shape, z folded into y.
      {case_of(Layout(F("bfzyx"), T::f32, {2, 19, 2, 3, 2}), Layout(F("b_fs_yx_fsv16"), T::f16, {2, 19, 6, 2}, {0, 0, 1, 0})), 0, 0},
      // Weights: tails on both block axes (33 x 17), int8 packed words, swizzles, fused y*x, 3D.
      {make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}), 0, 0},
      {make_case(F("oiyx"), F("os_is_yx_osa4_isa8_osv8_isv4"), {32, 32, 3, 3}, T::i8, T::i8), 1, 0},
      {make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::u8, T::u8), 0, 4},
      {make_case(F("os_iyx_osv16"), F("oiyx"), {33, 17, 1, 1}, T::f16, T::f32), 0, 0},
      {make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {32, 20, 3, 3}, T::i16, T::i16), 0, 2},
      {make_case(F("oiyx"), F("os_is_yx_osv32_isv4_swizzled_by_2"), {33, 17, 3, 3}, T::i8, T::i8, {1, 0, 0, 0}), 0, 0},
      {make_case(F("b_fs_zyx_fsv4"), F("is_os_zyx_isv16_osv16"), {4, 9, 11, 5, 1}, T::u8, T::bf16, {}, {}, {},
                 {0, 1, 1, 1, 2}), 0, 0},
      {make_case(F("oiyx"), F("i_yxs_os_yxsv2_osv16"), {33, 17, 3, 3}, T::f32, T::f32, {}, {}, {2, 0, 1, 0}), 0, 0},
      {make_case(F("gs_oi_yxs_gsv4_yxsv4"), F("goiyx"), {6, 3, 2, 3, 3}, T::f16, T::f16, {}, {}, {0, 0, 0, 1, 0}), 0, 0},
      {make_case(F("oiyx"), F("bfyx"), {16, 4, 1, 17}, T::f16, T::f16), 0, 0},
      // A of two digits both padded below (i's 32 slots over 3 + 21, x's 2 over 1 + 1): in CPU tiles each
      // row's test of i's two bounds, on the tile loop's counter, once became LLVM 14's switch on its low bits,
      // which Oclgrind ran wrong (loads of padding rows 70 bytes outside the source); one unsigned test now.
      {make_case(F("iox"), F("o_is_x_isv32__ai2"), {23, 21, 1}, T::u8, T::u8, {}, {}, {0, 3, 1}), 0, 0},
      // Grouped weights: depthwise, group tails.
      {make_case(F("goiyx"), F("gs_oiyx_gsv16"), {32, 1, 1, 3, 3}), 0, 0},
      {make_case(F("goiyx"), F("g_os_is_yx_isv16_osv16"), {3, 33, 17, 3, 3}, T::f16, T::f16), 0, 0},
      {make_case(F("gs_oiyx_gsv16"), F("goiyx"), {19, 2, 3, 3, 3}, T::i8, T::i8), 0, 0},
      {make_case(F("goiyx"), F("g_os_is_yx_osv16_isv4"), {2, 16, 8, 3, 3}, T::i8, T::i8), 0, 0},
      // Compensation sums (issue 16): atomic adds into a buffer of exactly their size.
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8),
                  with_compensation(with_params({}, {{Param::dst_scale, {{0.25f}, -1}}}), 0)), 0, 1},
      {converting(make_case(F("goiyx"), F("gs_oiyx_gsv16"), {19, 2, 3, 3, 3}, T::i8, T::i8), with_compensation({}, 1, 0)), 0, 0},
      // tiled's sums per position: along B behind its column masks with padding kept, none on vector rows
      // between kept padding, along B in scalar loops; each position's atomic only inside the tensor.
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {33, 17, 3, 3}, T::f32, T::i8),
                  with_compensation(modes(Rounding::nearest_even, Overflow::saturate, Padding::keep), 1)), 1, 0},
      {converting(make_case(F("bfyx"), F("bfyx"), {2, 3, 4, 16}, T::f32, T::i16, {}, {}, {0, 1, 1, 0}, {1, 0, 0, 0}),
                  with_compensation(modes(Rounding::nearest_even, Overflow::saturate, Padding::keep), 1)), 0, 1},
      {converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 5, 7}, T::i32, T::i32), with_compensation({}, 1)), 0, 0},
      // staged's sums per tile part of their index: tiles of o's padding whose index lies past the sums, rows
      // per (g, o), a register's lanes four sums (per x).
      {converting(make_case(F("oiyx"), F("os_is_yx_osv16_isv4"), {20, 36, 1, 1}, T::f32, T::i8),
                  with_compensation(with_params({}, {{Param::dst_scale, {{0.25f}, -1}}}), 0)), 1, 0},
      {converting(make_case(F("goiyx"), F("g_os_is_yx_osv16_isv4"), {2, 16, 8, 3, 3}, T::i8, T::i8), with_compensation({}, 1, 0)), 0, 1},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv4"), {2, 8, 5, 8}, T::f32, T::i16), with_compensation({}, 3)), 0, 0},
      // u4 and i4 (issue 16): each byte's two nibbles from one work-item (--data-races), a blocked tail, dense
      // layouts ending and starting inside a byte, kept padding beside written nibbles, compensation sums.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 5}, T::f32, T::u4, {}, {}, {0, 1, 0, 0}), 0, 1},
      {make_case(F("b_fs_yx_fsv16"), F("byxf"), {2, 19, 2, 3}, T::i4, T::i4), 1, 0},
      {case_of(Layout(F("byxf"), T::u4, {1, 3, 3, 3}), Layout(F("bfyx"), T::f16, {1, 3, 3, 3})), 0, 0},
      // local's words of 8 nibbles (a block of 16 is two), the second behind a base that is no whole word:
      // four byte loads there.
      {make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 2, 3}, T::i4, T::f16, {0, 0, 1, 0}), 0, 0},
      {make_case(F("b_fs_yx_fsv16"), F("byxf"), {1, 32, 2, 2}, T::u4, T::i32), 1, 0},
      {case_of(Layout(F("byxf"), T::i8, {2, 3, 3, 3}), Layout(F("bfyx"), T::u4, {2, 3, 3, 3}, {}, {}, {}, 1)), 0, 1},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::f16, T::i4, {}, {}, {0, 0, 1, 0}),
                  modes(Rounding::toward_zero, Overflow::wrap, Padding::keep)), 0, 0},
      // A view whose rows of 3 nibbles start bytes 2 apart: tiled keeps each row's last high nibble.
      {case_of(Layout(F("byxf"), T::f16, {2, 3, 2, 3}), V("bfyx", {2, 3, 2, 3}, {28, 8, 4, 1}, 2, T::u4)), 0, 1},
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {17, 17, 1, 3}, T::f32, T::i4),
                  with_compensation(with_params({}, {{Param::dst_scale, {{0.5f}, -1}}}), 0)), 0, 0},
      // Tiled's transposes packing 8-bit lanes into u4 and i4 bytes: a tail of zero rows, a byte offset that
      // is not a whole word (byte-wise stores), groups of scales under 16 lanes, padding after each row.
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 8}, T::f32, T::u4, {}, {}, {0, 0, 1, 0}), 0, 3},
      {converting(make_case(F("oiyx"), F("os_is_yx_isv16_osv16"), {20, 32, 1, 1}, T::f16, T::i4),
                  with_params({}, {{Param::dst_scale, ParamValues{ramp(20 * 4, 0.02f, 0.011f), 1, 8, 0}}})), 0, 0},
      {converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 16, 2, 16}, T::i8, T::i4, {}, {}, {}, {0, 0, 0, 2}),
                  modes(Rounding::nearest_even, Overflow::wrap)), 1, 0},
      // ... and its vector rows: a type compressed in place, groups of scales, padding rows of zeros.
      {converting(make_case(F("oiyx"), F("oiyx"), {24, 96, 1, 1}, T::f16, T::u4),
                  with_params({}, {{Param::dst_scale, ParamValues{ramp(24 * 3, 0.01f, 0.003f), 1, 32, 0}}})), 0, 1},
      {make_case(F("bfyx"), F("bfyx"), {2, 3, 5, 16}, T::f32, T::i4, {}, {}, {0, 0, 1, 0}, {0, 1, 0, 0}), 1, 0},
      // u4 and i4 sources loaded as bytes and unpacked: a transpose from blocks, columns of destination padding
      // the source lacks (read nibble by nibble), rows of a dequantization with groups.
      {make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 32, 2, 16}, T::i4, T::f16), 3, 1},
      {make_case(F("bfyx"), F("byxf"), {1, 16, 2, 14}, T::u4, T::f16, {}, {}, {0, 0, 0, 2}), 0, 0},
      {converting(make_case(F("oiyx"), F("oiyx"), {24, 96, 1, 1}, T::i4, T::f32),
                  with_params({}, {{Param::src_scale, ParamValues{ramp(24 * 3, 0.01f, 0.003f), 1, 32, 0}}})), 1, 1},
  };
}

// The device a kernel is generated for: this one, with the tuning (and cache size, and the maker a CPU's
// tiles follow) overridden.
DeviceInfo tuned(const Engine& e, const char* tuning, uint64_t cache_bytes, uint32_t vendor_id) {
  DeviceInfo d = e.info();
  d.type = tuning;
  d.cache_bytes = cache_bytes;
  d.vendor_id = vendor_id;
  return d;
}
DeviceInfo tuned(const Engine& e, const char* tuning, uint64_t cache_bytes) { return tuned(e, tuning, cache_bytes, e.info().vendor_id); }

struct Planned {
  const Sweep* sweep;
  KernelData kd;
  std::string what;
};

// A run is determined by its case, its kernel's text and its launch: where two tunings (or cache sizes) plan
// the same kernel, running it twice checks nothing more.
std::string launch_key(const Sweep& s, const KernelData& kd) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(&s)) + '\n' + kd.source.options + '\n' + kd.source.code;
  for (const std::vector<size_t>* sizes : {&kd.global, &kd.local})
    for (size_t n : *sizes) key += ' ' + std::to_string(n);
  for (int64_t a : kd.plan_args) key += ' ' + std::to_string(a);
  return key;
}

// CLREORDER_SWEEP_SOURCES=random: each kernel on its random-bits pass alone (run_planned()'s random_only), the
// uninitialized-value run (tests/CMakeLists.txt), which interprets each launch at -O0. A read of an
// uninitialized value follows the kernel's paths, which the random bits (NaN payloads, subnormals, saturation)
// take most of; the visible passes, which prove every element's place, run in the other two sweeps.
bool random_pass_only() {
  const char* only = std::getenv("CLREORDER_SWEEP_SOURCES");
  return only && std::string(only) == "random";
}

// Compiles every kernel in one program (PoCL builds a program in one go, then each kernel at its first
// launch), then runs each against the host reference.
int run_all(const Engine& e, const std::vector<Planned>& planned) {
  std::vector<KernelSource> sources;
  for (const Planned& p : planned) sources.push_back(p.kd.source);
  ProgramCache::instance().build(e.context(), e.device(), sources);
  int failures = 0;
  for (const Planned& p : planned) {
    if (std::getenv("CLREORDER_SWEEP_VERBOSE")) std::printf("%s %s %s\n", p.kd.impl.c_str(), p.what.c_str(), p.sweep->c.label.c_str());
    const std::string err = run_planned(e, p.sweep->c, p.kd, p.sweep->dst_off, p.sweep->src_off, random_pass_only());
    if (!err.empty() && ++failures <= 20) ADD_FAILURE() << p.what << ": " << err;
  }
  return failures;
}

}  // namespace

// Under tests/oclgrind_check.sh the device must be Oclgrind's: a run that silently found another device
// would check nothing.
TEST(Sweep, RunsWhereItIsMeantTo) {
  REQUIRE_DEVICE(e);
  const char* expect = std::getenv("CLREORDER_EXPECT_OCLGRIND");
  if (expect && std::string(expect) == "1") {
    EXPECT_TRUE(on_oclgrind(*e)) << "device: " << e->info().platform;
  }
}

// Every implementation that accepts each case, forced, in both tunings; tiled also with a cache so small
// that its stores stream (a CPU policy: in the CPU tuning), and in the CPU tuning for Intel's and AMD's CPUs,
// whose far-row tiles differ (plan_on()), whatever this device's maker.
TEST(Sweep, EveryImplementationInBothTunings) {
  REQUIRE_DEVICE(e);
  const std::vector<Sweep> cases = sweep_cases();
  std::vector<Planned> planned;
  std::map<std::string, int> per_impl;
  std::set<std::string> seen;
  size_t same = 0, streamed_lines = 0;
  // tiled's steps with columns the source lacks (transpose_loops()): rows loaded whole where every column is
  // readable, else through a loop into a private tile, counted per tuning and by whether the checked axis is
  // B's innermost digit (the readable columns one run: padding along the source's rows, 1 x 1 weights' i) or not.
  const std::pair<const char*, const char*> edge_forms[] = {{"inside", "B's innermost digit checked"}, {"outside", "an outer digit of B checked"}};
  std::map<std::string, int> edge_steps;
  // tiled's row copies whose B holds the digit continuing A in the source, inside or outside (CPU tiles only).
  std::map<std::string, int> two_digit;
  // CPU-tuned transposes whose A goes past 256 elements (8- and 16-bit with B at its floor, plan_on()).
  int long_a = 0;
  // CPU-tuned kernels that prefetch their source rows, per implementation.
  std::map<std::string, int> prefetching;
  // CPU-tuned transposes reading 32 rows 2 KiB or more apart at a time (A cut to kFarRows, plan_on()), and 16
  // such rows into 4- and 8-byte destinations (kWideFarRows; a block of 16 counts too).
  int far_rows = 0, wide_rows = 0;
  // The same into 4- and 8-byte destinations planned for an Intel CPU: 32 rows, or 64 of nested blocks.
  int intel_wide_rows = 0;
  // CPU-tuned transposes reading 64 rows of nested destination blocks 2 KiB or more apart (kFarBlockRows), and
  // 64 such rows into 8-bit destinations.
  int block_rows = 0, line_rows = 0;
  // CPU-tuned transposes of 16-bit elements 16 columns a step along an A past one block (vector_width()).
  int wide16 = 0;
  // CPU-tuned staged conversions from 4- and 8-byte sources into 8-bit types with 16-element runs (config_for()).
  int staged_bytes16 = 0;
  // staged kernels writing compensation sums.
  int staged_sums = 0;
  // CPU-tuned tiled kernels written for g_ok known true and known false (a grid with padding).
  int split = 0;
  // tiled's transposes that leave a tail of B's columns to scalar loops after them, per tuning.
  std::map<std::string, int> b_tails;
  // tiled's transposes stepping from the first real column of a lower-padded B, per tuning.
  std::map<std::string, int> b_real;
  // CPU-tuned transposes reading their columns' or their rows' offsets from a table (takes_offset_table(): 3 x 3
  // weights into and out of isv16_osv16 blocks).
  int offset_tables = 0, row_tables = 0;
  // CPU-tuned transposes taking both steps of a two-step B inside each step of A (transpose_loops()).
  int cols_inner = 0;
  // CPU-tuned row loops unrolled for a parameter per group (row_loops()).
  int unrolled_rows = 0;
  for (const Sweep& s : cases)
    for (const auto& impl : KernelSelector::instance().impls())
      for (const char* tuning : {"cpu", "gpu"}) {
        const bool tiled = std::string(impl->name()) == "tiled";
        std::vector<std::pair<uint64_t, uint32_t>> devices = {{e->info().cache_bytes, e->info().vendor_id}};
        if (tiled) devices.push_back({1, e->info().vendor_id});
        if (tiled && std::string(tuning) == "cpu")
          for (uint32_t maker : {0x8086u, 0x1022u}) devices.push_back({e->info().cache_bytes, maker});
        for (const auto& [cache, maker] : devices) {
          const DeviceInfo dev = tuned(*e, tuning, cache, maker);
          if (!impl->reject(ReorderParams{s.c.src, s.c.dst, dev, s.c.conversion}).empty()) continue;
          KernelData kd = plan_reorder(dev, s.c.src, s.c.dst, impl->name(), s.c.conversion);
          if (!seen.insert(launch_key(s, kd)).second) { ++same; continue; }
          // Streamed transposes whose column lines take unrolled steps (transpose_loops()).
          const std::string& code = kd.source.code;
          streamed_lines += kd.streams && code.find("const IDX_T ia1 = ia + ") != std::string::npos;
          if (const std::string where = edge_step_checks(code); !where.empty())
            for (const auto& [mark, form] : edge_forms)
              if (where == mark) ++edge_steps[std::string(tuning) + " tuning, " + form];
          if (const std::string form = two_digit_rows(code); !form.empty()) ++two_digit[form];
          const int64_t a_len = transpose_a_length(code);  // 0: not a transpose
          const bool cpu = std::string(tuning) == "cpu", prefetches = code.find("CR_PREFETCH(src + ") != std::string::npos;
          long_a += cpu && a_len > 256;
          if (prefetches) ++prefetching[impl->name()];
          far_rows += cpu && a_len == 32 && prefetches;
          const bool wide_dst = unit_bytes(s.c.dst.data_type()) >= 4 && !is_nibble(s.c.dst.data_type());
          wide_rows += cpu && a_len == 16 && prefetches && wide_dst;
          intel_wide_rows += cpu && maker == 0x8086u && (a_len == 32 || a_len == 64) && prefetches && wide_dst;
          wide16 += cpu && a_len > 16 && code.find("short16 r0") != std::string::npos;
          const bool bytes = bits_of(s.c.dst.data_type()) == 8, staged = std::string(impl->name()) == "staged";
          block_rows += cpu && a_len == 64 && prefetches && !bytes;
          line_rows += cpu && a_len == 64 && prefetches && bytes;
          staged_sums += staged && code.find(" cr_s0_") != std::string::npos;
          staged_bytes16 += cpu && staged && bits_of(s.c.src.data_type()) >= 32 && bytes && code.find("char16 l") != std::string::npos;
          split += code.find("#define CR_GRID_SPLIT 1") != std::string::npos;
          b_tails[tuning] += a_len > 0 && scalar_b_tail(code);
          b_real[tuning] += steps_from_real_column(code);
          offset_tables += cpu && a_len > 0 && code.find("_bo)[ib + 0]") != std::string::npos;
          row_tables += cpu && a_len > 0 && code.find("_ao)[ia + 0]") != std::string::npos;
          cols_inner += cpu && columns_inner(code);
          unrolled_rows += cpu && rows_unrolled(code);
          planned.push_back({&s, std::move(kd), std::string(tuning) + " tuning, cache " + std::to_string(cache) + ", vendor " + std::to_string(maker)});
          ++per_impl[impl->name()];
        }
      }
  for (const auto& impl : KernelSelector::instance().impls()) EXPECT_GT(per_impl[impl->name()], 0) << impl->name();
  EXPECT_GT(streamed_lines, 0u) << "no streamed transpose with unrolled steps";
  for (const char* form : {"inside", "outside"})
    EXPECT_GT(two_digit[form], 0) << "no tiled row copy with B's digit continuing A in the source " << form;
  EXPECT_GT(long_a, 0) << "no CPU-tuned transpose with A over 256 elements";
  EXPECT_GT(far_rows, 0) << "no CPU-tuned transpose reading 32 rows pages apart at a time";
  EXPECT_GT(wide_rows, 0) << "no CPU-tuned transpose reading 16 rows pages apart into a 4- or 8-byte destination";
  EXPECT_GT(intel_wide_rows, 0) << "no transpose planned for an Intel CPU reading 32 or 64 rows pages apart into a 4- or 8-byte destination";
  EXPECT_GT(wide16, 0) << "no CPU-tuned 16-bit transpose 16 columns a step";
  EXPECT_GT(block_rows, 0) << "no CPU-tuned transpose reading 64 rows of nested blocks pages apart";
  EXPECT_GT(line_rows, 0) << "no CPU-tuned transpose reading 64 rows pages apart into an 8-bit destination";
  EXPECT_GT(staged_bytes16, 0) << "no CPU-tuned staged conversion into an 8-bit type 16 elements a run";
  EXPECT_GT(staged_sums, 0) << "no staged kernel writing compensation sums";
  for (const char* impl : {"tiled", "staged", "lanes"}) EXPECT_GT(prefetching[impl], 0) << "no " << impl << " kernel prefetching its source rows";
  EXPECT_GT(split, 0) << "no tiled kernel written for both values of g_ok";
  EXPECT_GT(offset_tables, 0) << "no CPU-tuned transpose reading its columns' offsets from a table";
  EXPECT_GT(row_tables, 0) << "no CPU-tuned transpose reading its rows' offsets from a table";
  EXPECT_GT(cols_inner, 0) << "no CPU-tuned transpose taking its steps of B inside those of A";
  EXPECT_GT(unrolled_rows, 0) << "no CPU-tuned row loop unrolled for a parameter per group";
  for (const char* tuning : {"cpu", "gpu"}) {
    EXPECT_GT(b_tails[tuning], 0) << "no tiled transpose with a scalar tail of B in the " << tuning << " tuning";
    EXPECT_GT(b_real[tuning], 0) << "no tiled transpose stepping from B's first real column in the " << tuning << " tuning";
  }
  for (const char* tuning : {"cpu", "gpu"})
    for (const auto& [mark, form] : edge_forms)
      EXPECT_GT(edge_steps[std::string(tuning) + " tuning, " + form], 0) << "no tiled edge steps as " << form << " in the " << tuning << " tuning";
  const int failures = run_all(*e, planned);
  EXPECT_EQ(failures, 0) << "of " << planned.size() << " runs";
  std::printf("sweep: %zu cases, %zu runs (case x implementation x tuning x cache x maker), %d failed; %zu more planned "
              "the same kernel and launch as one of these; %zu streamed transposes of unrolled steps\n", cases.size(),
              planned.size(), failures, same, streamed_lines);
  for (const auto& [form, count] : edge_steps) std::printf("sweep: tiled's edge steps, %s: %d kernels\n", form.c_str(), count);
  for (const auto& [form, count] : two_digit)
    std::printf("sweep: tiled's row copies, B's digit continuing A in the source %s: %d kernels\n", form.c_str(), count);
  std::printf("sweep: CPU-tuned transposes with A over 256 elements: %d kernels\n", long_a);
  std::printf("sweep: CPU-tuned transposes reading 32 rows pages apart at a time: %d kernels\n", far_rows);
  std::printf("sweep: CPU-tuned transposes reading 16 rows pages apart into 4- and 8-byte destinations: %d kernels\n", wide_rows);
  std::printf("sweep: the same planned for an Intel CPU, 32 or 64 rows: %d kernels\n", intel_wide_rows);
  std::printf("sweep: CPU-tuned 16-bit transposes 16 columns a step: %d kernels\n", wide16);
  std::printf("sweep: CPU-tuned transposes reading their columns' offsets from a table: %d kernels, their rows': %d\n", offset_tables,
              row_tables);
  std::printf("sweep: CPU-tuned transposes reading 64 rows of nested blocks pages apart: %d kernels\n", block_rows);
  std::printf("sweep: CPU-tuned transposes taking their steps of B inside those of A: %d kernels\n", cols_inner);
  std::printf("sweep: CPU-tuned row loops unrolled for a parameter per group: %d kernels\n", unrolled_rows);
  std::printf("sweep: CPU-tuned transposes reading 64 rows pages apart into 8-bit destinations: %d kernels\n", line_rows);
  std::printf("sweep: CPU-tuned staged conversions into 8-bit types 16 elements a run: %d kernels\n", staged_bytes16);
  std::printf("sweep: staged kernels writing compensation sums: %d\n", staged_sums);
  std::printf("sweep: CPU-tuned tiled kernels written for both values of g_ok: %d\n", split);
  for (const auto& [tuning, count] : b_tails) std::printf("sweep: tiled transposes with a scalar tail of B, %s tuning: %d kernels\n", tuning.c_str(), count);
  for (const auto& [tuning, count] : b_real)
    std::printf("sweep: tiled transposes stepping from B's first real column, %s tuning: %d kernels\n", tuning.c_str(), count);
  for (const auto& [impl, count] : prefetching) std::printf("sweep: %s prefetching its source rows: %d kernels\n", impl.c_str(), count);
}

// The shape-agnostic kernel (plans passed at run time) on small cases of every family: blocked tails and
// paddings, conversions, strided views with gaps and a broadcast, TPU local memory with 4N dummies, a reshape,
// weights with swizzles and fused axes, grouped weights, 64-bit types. Small, since under Oclgrind each of
// its work-items interprets the plan loops. The property test draws it too.
TEST(Sweep, ShapeAgnosticKernelOnEveryFamily) {
  REQUIRE_DEVICE(e);
  using T = DataType;
  auto V = [](const char* f, const Dims& d, const Dims& s, int64_t o, T t) { return Layout(F(f), t, d, {}, {}, s, o); };
  const std::vector<Sweep> cases = {
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::f32, T::f16, {}, {}, {0, 1, 1, 0}, {0, 0, 1, 1}), 1, 2},
      {make_case(F("b_fs_yx_fsv16"), F("bfyx"), {1, 19, 2, 3}, T::u8, T::f32, {0, 16, 0, 1}, {0, 0, 1, 0}), 0, 1},
      {case_of(V("bfyx", {2, 5, 3, 4}, {100, 20, 6, 1}, 3, T::i16), V("byxf", {2, 5, 3, 4}, {90, 1, 28, 7}, 2, T::i16)), 0, 0},
      {case_of(V("bfyx", {2, 17, 2, 2}, {4, 0, 2, 1}, 0, T::f32), Layout(F("b_fs_yx_fsv16"), T::f32, {2, 17, 2, 2})), 0, 0},
      {case_of(Layout(F("bfyx"), T::i8, {6, 5, 2, 3}), Layout(F("tpu_aligned(npus=4,npu_bytes=512,addr=512,mode=4n)"), T::i8, {6, 5, 2, 3})), 0, 0},
      {case_of(Layout(F("bfzyx"), T::f32, {2, 3, 2, 2, 2}), Layout(F("b_fs_yx_fsv16"), T::bf16, {2, 3, 4, 2})), 0, 0},
      {make_case(F("oiyx"), F("os_is_yx_osv32_isv4_swizzled_by_2"), {33, 5, 1, 1}, T::i8, T::i8), 0, 0},
      {make_case(F("oiyx"), F("i_yxs_os_yxsv2_osv16"), {17, 3, 3, 3}, T::f32, T::f32, {}, {}, {2, 0, 1, 0}), 0, 0},
      {make_case(F("goiyx"), F("g_os_is_yx_isv16_osv16"), {2, 17, 3, 1, 1}, T::f16, T::f16), 0, 0},
      {make_case(F("bfyx"), F("byxf"), {1, 3, 2, 2}, T::f64, T::u64), 0, 1},
      {converting(make_case(F("bfyx"), F("byxf"), {1, 3, 2, 2}, T::f16, T::i16), modes(Rounding::toward_zero, Overflow::wrap)), 0, 1},
      {make_case(F("byxf"), F("bfyx"), {1, 3, 2, 2}, T::f8e5m2, T::bf16), 0, 1},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::f32, T::f32, {}, {}, {0, 1, 1, 0}, {0, 0, 1, 1}),
                  modes(Rounding::nearest_even, Overflow::saturate, Padding::keep)), 1, 2},
      // Fused arithmetic per tensor (the permutation walk) and per channel (the plan walk, at dc[axis]).
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::u8, T::f16),
                  with_params({}, {{Param::sub, {{1.5f}, -1}}, {Param::div, {{3}, -1}}})), 0, 1},
      {converting(make_case(F("b_fs_yx_fsv16"), F("bfyx"), {2, 19, 2, 3}, T::f32, T::i8, {0, 16, 0, 1}),
                  with_params({}, {{Param::dst_scale, {{0.5f, 0.25f}, 0}}, {Param::dst_zero_point, {{2}, -1}}})), 1, 0},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::u8, T::f16, {}, {}, {0, 1, 1, 0}, {0, 0, 1, 1}),
                  with_params({}, {{Param::src_zero_point, ParamValues{ramp(15, -3, 1), 1, 4, 2, true}},
                                   {Param::div, ParamValues{ramp(5, 2, 1), 1, 4, -1, false}}})), 1, 0},
      // A padded innermost axis longer than a work-item's piece in both tunings (64 and 1024): pieces with
      // padding before the first and after the last, and a short last piece.
      {make_case(F("bfyx"), F("bfyx"), {1, 2, 1, 1100}, T::u8, T::f32, {}, {}, {0, 0, 0, 3}, {0, 1, 0, 2}), 0, 0},
      // Compensation sums, at dc[axis] with the run-time dims (the plan walk).
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::f32, T::i8, {}, {}, {0, 1, 1, 0}, {0, 0, 1, 1}),
                  with_compensation({}, 1, 0)), 1, 2},
      // u4 and i4: a 4-bit source on the permutation walk, a destination's rows of whole bytes on the plan walk
      // (kept padding beside them).
      {make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::u4, T::f32), 1, 2},
      {converting(make_case(F("bfyx"), F("b_fs_yx_fsv16"), {2, 19, 3, 2}, T::f32, T::i4, {}, {}, {0, 0, 1, 0}),
                  modes(Rounding::nearest_even, Overflow::saturate, Padding::keep)), 0, 1},
  };
  std::vector<Planned> planned;
  // The kernel's three modes (reorder_agnostic.cl; each compiled alone, CR_AG_MODE): all must run here.
  int per_mode[3] = {0, 0, 0};
  for (const char* tuning : {"gpu", "cpu"}) {
    const DeviceInfo dev = tuned(*e, tuning, 0);
    for (const Sweep& s : cases) {
      planned.push_back({&s, plan_reorder(dev, s.c.src, s.c.dst, "agnostic", s.c.conversion), tuning});
      const int64_t mode = planned.back().kd.plan_args.at(1);
      ASSERT_TRUE(mode >= 0 && mode <= 2) << s.c.label;
      EXPECT_NE(planned.back().kd.source.code.find("#define CR_AG_MODE " + std::to_string(mode) + "\n"), std::string::npos)
          << s.c.label;
      ++per_mode[mode];
    }
  }
  for (int mode = 0; mode < 3; ++mode) EXPECT_GT(per_mode[mode], 0) << "mode " << mode;
  const int failures = run_all(*e, planned);
  EXPECT_EQ(failures, 0) << "of " << planned.size() << " runs";
  std::printf("sweep: %zu runs of the shape-agnostic kernel, %d failed\n", planned.size(), failures);
}

// Every case once more in 64-bit index arithmetic, on every implementation that accepts it.
TEST(Sweep, SixtyFourBitIndicesOnEveryImplementation) {
  REQUIRE_DEVICE(e);
  const std::vector<Sweep> cases = sweep_cases();
  std::vector<Planned> planned;
  setenv("CLREORDER_INDEX_BITS", "64", 1);
  for (const Sweep& s : cases)
    for (const auto& impl : KernelSelector::instance().impls()) {
      const DeviceInfo dev = tuned(*e, "gpu", 0);
      if (!impl->reject(ReorderParams{s.c.src, s.c.dst, dev, s.c.conversion}).empty()) continue;
      planned.push_back({&s, plan_reorder(dev, s.c.src, s.c.dst, impl->name(), s.c.conversion), "64-bit indices"});
      EXPECT_NE(planned.back().kd.source.code.find("#define IDX_T long"), std::string::npos) << s.c.label;
    }
  unsetenv("CLREORDER_INDEX_BITS");
  const int failures = run_all(*e, planned);
  EXPECT_EQ(failures, 0) << "of " << planned.size() << " runs";
  std::printf("sweep: %zu runs with 64-bit indices, %d failed\n", planned.size(), failures);
}

namespace {

// The sweep's cases planned for `dev` (by the selector, or forced to `impl` where it accepts), as batch
// kernels of as many items as the device's arguments allow (each item its own two buffers), each launched once on guarded arguments (the cases' own
// offsets) with its first visible source: the items' kernels are the ones checked above, so what is checked
// here is the batch's dispatch, its arguments and its items' offsets.
int run_batches(const Engine& e, const std::vector<Sweep>& cases, const DeviceInfo& dev, const std::string& impl, size_t* items) {
  // Planned as batch items, as reorder_batch() plans them (local keeps its configured group size).
  auto item = [&](const Sweep& s) {
    ReorderParams p{s.c.src, s.c.dst, dev, s.c.conversion};
    p.batch_item = true;
    return p;
  };
  std::vector<const Sweep*> accepted;
  for (const Sweep& s : cases) {
    if (s.c.conversion.from_buffers() || s.c.conversion.compensation.present()) continue;  // a batch takes neither
    const ReorderImpl* chosen = impl.empty() ? nullptr : KernelSelector::instance().find(impl);
    if (!chosen || chosen->reject(item(s)).empty()) accepted.push_back(&s);
  }
  int failures = 0;
  size_t capacity = 1;  // each item its own two buffers
  while (batch_fits(dev, 2 * (capacity + 1), capacity + 1)) ++capacity;
  for (size_t first = 0; first < accepted.size(); first += capacity) {
    const size_t n = std::min(capacity, accepted.size() - first);
    std::vector<KernelData> kernels;
    std::vector<std::pair<DataType, DataType>> types;
    std::vector<Case> group;
    std::vector<std::vector<uint8_t>> srcs;
    std::vector<std::pair<size_t, size_t>> offsets;
    std::vector<cl_ulong> bases;
    std::vector<std::pair<size_t, size_t>> buffers;
    for (size_t k = first; k < first + n; ++k) {
      buffers.emplace_back(2 * (k - first), 2 * (k - first) + 1);
      const Sweep& s = *accepted[k];
      kernels.push_back(KernelSelector::instance().select(item(s), impl));
      types.emplace_back(s.c.src.data_type(), s.c.dst.data_type());
      group.push_back(s.c);
      srcs.push_back(visible_sources(s.c.src, s.c.dst.data_type(), k).front());
      offsets.emplace_back(s.src_off * unit_bytes(s.c.src.data_type()), s.dst_off * unit_bytes(s.c.dst.data_type()));
      bases.push_back(s.src_off);
      bases.push_back(s.dst_off);
    }
    const KernelData kd = batch_kernel(kernels, types, buffers, 2 * n, dev);
    const std::string err = check_launches(e, group, srcs, offsets, [&](const std::vector<cl::Buffer>& args) {
      LockedKernel k = ProgramCache::instance().kernel(e.context(), e.device(), kd.source);
      set_batch_args(k.kernel, args, bases, kd.local_bytes);
      e.queue().enqueueNDRangeKernel(k.kernel, cl::NullRange, kd.global_range(), kd.local_range());
    });
    if (!err.empty() && ++failures <= 20) ADD_FAILURE() << (impl.empty() ? "selector's choice" : impl) << ", batch: " << err;
    *items += n;
  }
  return failures;
}

}  // namespace

// The sweep's cases as batches (one launch for many reorders), in both tunings: the selector's choices
// together (several implementations in one kernel), then each implementation forced on the cases it
// accepts, in one tuning each (alternating; the kernels themselves were swept in both above).
// CLREORDER_SWEEP_BATCHES=choices keeps the choices only: the uninitialized-value run (tests/CMakeLists.txt),
// where each forced batch repeats item kernels that ran checked above, in a seventh of its time.
TEST(Sweep, BatchedLaunchesInBothTunings) {
  REQUIRE_DEVICE(e);
  const std::vector<Sweep> cases = sweep_cases();
  int failures = 0;
  size_t items = 0, launches = 0;
  const auto& all = KernelSelector::instance().impls();
  const char* only = std::getenv("CLREORDER_SWEEP_BATCHES");
  const bool forced = !(only && std::string(only) == "choices");
  for (size_t t = 0; t < 2; ++t) {
    const DeviceInfo dev = tuned(*e, t == 0 ? "gpu" : "cpu", e->info().cache_bytes);
    std::vector<std::string> impls = {""};
    for (size_t i = t; forced && i < all.size(); i += 2) impls.push_back(all[i]->name());
    for (const std::string& impl : impls) {
      failures += run_batches(*e, cases, dev, impl, &items);
      ++launches;
    }
  }
  EXPECT_EQ(failures, 0);
  std::printf("sweep: %zu reorders in %zu batches, %d failed\n", items, launches, failures);
}

// The benchmarks' copy kernel (the baseline of "ratio to copy"): every byte, none past the end, in both
// tunings and with streaming stores, on sizes around its vector width and its per-work-item chunk.
TEST(Sweep, CopyKernelInBothTunings) {
  REQUIRE_DEVICE(e);
  int runs = 0;
  for (const char* tuning : {"gpu", "cpu"})
    for (uint64_t cache : {e->info().cache_bytes, uint64_t{1}})
      for (int64_t bytes : {1, 15, 64, 65, 4096 + 64 * 3 + 5, 3 * 4096}) {
        const DeviceInfo dev = tuned(*e, tuning, cache);
        const Layout bytes_layout(F("bfyx"), DataType::u8, {1, 1, 1, bytes});
        const Case c = case_of(bytes_layout, bytes_layout);
        const KernelData kd = copy_kernel(dev, static_cast<size_t>(bytes));
        const std::string err = check_launch(*e, c, random_bytes(static_cast<size_t>(bytes), 7), 0, 0,
                                             [&](const cl::Buffer& s, const cl::Buffer& d) {
                                               LockedKernel k = ProgramCache::instance().kernel(e->context(), e->device(), kd.source);
                                               k.kernel.setArg(0, s);
                                               k.kernel.setArg(1, d);
                                               k.kernel.setArg(2, static_cast<cl_ulong>(bytes));
                                               e->queue().enqueueNDRangeKernel(k.kernel, cl::NullRange, kd.global_range(),
                                                                               kd.local_range());
                                             });
        EXPECT_EQ(err, "") << tuning << " tuning, cache " << cache << ", " << bytes << " bytes";
        ++runs;
      }
  std::printf("sweep: %d runs of the copy kernel\n", runs);
}
