// clreorder: the host reference reorder over the index plan (the oracle of every device test), the
// element conversions it shares with the device code, and the deterministic test pattern.
#pragma once

#include <cstdint>
#include <vector>

#include "clreorder/layout.hpp"

namespace clreorder {

/// f32 -> f16 bits, round to nearest even; overflow gives inf; NaN stays NaN (quiet, top payload bits kept).
uint16_t f32_to_f16(float f);
/// f16 bits -> f32, exact.
float f16_to_f32(uint16_t h);
/// f32 -> bf16 bits, round to nearest even; NaN stays NaN (quiet).
uint16_t f32_to_bf16(float f);
/// bf16 bits -> f32, exact.
float bf16_to_f32(uint16_t h);

/// Converts one element: equal types copy bits; float to integer rounds to nearest even and saturates,
/// NaN gives 0; integer to integer saturates; anything to f16/bf16 goes through f32, rounding to nearest even.
void convert_element(DataType from, const void* src, DataType to, void* dst);

/// Reorders `src` (src.bytes() bytes) into `dst` (dst.bytes() bytes): every destination element the layout
/// owns is written, padding with zero. Throws when the logical shapes differ.
void reference_reorder(const Layout& src, const void* src_data, const Layout& dst, void* dst_data);

/// The deterministic source pattern: each element is its logical linear index in canonical order, wrapped
/// to the type's exact range (f32: mod 2^24, f16: mod 2048, bf16: mod 256, integers: two's-complement
/// wrap); padding is zero.
std::vector<uint8_t> make_pattern(const Layout& layout);

/// Throws unless src and dst can be reordered into each other: same rank and dims, and compatible kinds
/// (data <-> data or weights, grouped <-> grouped). The message names both layouts.
void check_compatible(const Layout& src, const Layout& dst);

}  // namespace clreorder
