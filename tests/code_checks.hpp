// Checks of generated kernel text shared by the test drivers (which forms a kernel holds), defined once in
// test_support.cpp: each of them matches a regular expression, and <regex> compiled into every driver that
// asked was 6 s of GCC's time (11 s of clang's under the sanitizers) per file.
#pragma once

#include <cstdint>
#include <string>

namespace clreorder_test {

/// Which of tiled's row copies with a B of two digits the code holds (impl_tiled.cpp, plan_on()): "inside"
/// when the digit continuing A in the source is B's inner one (the source's rows read whole), "outside" when
/// it is the outer one (next to a far digit that alone left a work-item one pixel), else "".
std::string two_digit_rows(const std::string& code);

/// Where tiled's steps holding columns the source lacks are (transpose_loops(): their loads go through a loop
/// into a private tile, in a branch of their own): "inside" when the checked axis is B's innermost digit (a
/// step's readable columns are one run), "outside" when it is an outer one (the first column's coordinate
/// divides ib first), else "" (no such steps).
std::string edge_step_checks(const std::string& code);

/// The elements of A a tiled transpose's work-item walks (the `ia` loop inside the `ib` loop of
/// TILE_LOOPS, impl_tiled.cpp, past the flags a step computes first, or outside it: columns_inner()), or 0
/// where the code holds no such loops (row copies, other implementations).
int64_t transpose_a_length(const std::string& code);

/// Whether a tiled transpose takes its steps of B inside those of A (transpose_loops(): both steps of a two-step
/// B together where A's rows lie near in the source).
bool columns_inner(const std::string& code);

/// Whether a tiled row copy's `ia` loop is unrolled (row_loops(): rows of a parameter per group).
bool rows_unrolled(const std::string& code);

/// Whether the code holds scalar loops over B's columns from one past 0 (a transpose's tail of B after its
/// steps, where no V divides B).
bool scalar_b_tail(const std::string& code);

/// Whether the code steps along B from a column past 0 (tiled's transposes from the first real column of a
/// lower-padded B).
bool steps_from_real_column(const std::string& code);

}  // namespace clreorder_test
