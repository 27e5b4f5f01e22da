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
/// f32 -> f16 bits, round toward zero: finite values beyond the largest half give it, infinities and NaN stay.
uint16_t f32_to_f16_rtz(float f);
/// f32 -> bf16 bits, round toward zero; NaN stays NaN (quiet).
uint16_t f32_to_bf16_rtz(float f);
/// f32 -> f8e4m3 bits (OCP E4M3: no infinities, largest finite 448, NaN S.1111.111), rounded to nearest even
/// or (`toward_zero`) truncated. As OpenVINO's conversion: NaN, infinities and finite values that round
/// beyond 448 give NaN; truncated, finite values beyond 448 give 448.
uint8_t f32_to_f8e4m3(float f, bool toward_zero = false);
/// f8e4m3 bits -> f32, exact; NaN gives a quiet NaN of the same sign.
float f8e4m3_to_f32(uint8_t b);
/// f32 -> f8e5m2 bits (OCP E5M2: f16's exponent range, largest finite 57344), rounded once to nearest even
/// or truncated. Overflow gives inf (truncated: 57344); infinities stay; NaN stays NaN (quiet, sign and top
/// payload bit kept, as the top byte of the f16 conversion).
uint8_t f32_to_f8e5m2(float f, bool toward_zero = false);
/// f8e5m2 bits -> f32, exact (the top byte of an f16).
float f8e5m2_to_f32(uint8_t b);
/// f64 -> f32, round to nearest even; NaN stays NaN (quiet, sign and top payload bits kept), as the device
/// code writes it out, since hardware conversions differ in NaN payloads.
float f64_to_f32(double d);

/// Converts one element: equal types copy bits; every inexact value rounds once, by `conv.rounding` (to
/// nearest even by default, or toward zero); float to integer saturates or wraps by `conv.overflow`, NaN
/// gives 0; integer to integer saturates or wraps; anything to f16, bf16 or an 8-bit float goes through f32
/// (an f64 or a 32- or 64-bit integer rounded to odd there when rounding to nearest, so the one rounding
/// after it is exact). Only `conv`'s modes count here: its parameters are reference_reorder()'s.
/// u4 and i4 travel as one byte holding the value (i4 sign-extended, as read_element() gives it): a 4-bit
/// destination saturates to 0..15 or -8..7, or keeps the low 4 bits.
void convert_element(DataType from, const void* src, DataType to, void* dst, const Conversion& conv = {});

/// Element number `offset` of a buffer of type `t` into `out` (size_of(t) bytes; a u4 or i4 as one byte
/// holding its value, i4 sign-extended).
void read_element(DataType t, const void* data, int64_t offset, void* out);
/// Writes element number `offset` of a buffer of type `t` from `in` (as read_element() gives it); a u4 or i4
/// changes its own nibble only.
void write_element(DataType t, void* data, int64_t offset, const void* in);

/// One step of the fused arithmetic: parameter `p`'s applied operation on `x` with operand `a` (operand_of()),
/// rounded to f32 (the host's proofs about kernel values in kernel_selector/codegen.cpp take it from here too).
float apply_operation(Param p, float x, float a);

/// The fused arithmetic of `conv` (Conversion::params) on the f32 value `x` of the destination element at
/// logical coordinate `coord`: each operation rounded to f32 in the documented order; a NaN result is
/// 0x7fc00000.
float apply_params(const Conversion& conv, float x, const int64_t* coord, const Dims& dims);

/// One element as a reorder converts it: `in` (of type `from`, as read_element() gives it) to `out` (of type
/// `to`) under `conv`, its arithmetic taken at the destination's logical coordinate `coord` within `dims`.
void convert_value(DataType from, const void* in, DataType to, void* out, const Conversion& conv, const int64_t* coord,
                   const Dims& dims);

/// Reorders `src` (src.bytes() bytes) into `dst` (dst.bytes() bytes) converting by `conv`: every destination
/// element the layout owns is written, padding with zero (or, with Padding::keep, left as it was). Throws when the logical shapes differ.
void reference_reorder(const Layout& src, const void* src_data, const Layout& dst, void* dst_data,
                       const Conversion& conv = {});

/// The zero-point compensation sums (Conversion::compensation) of a reorder's result: for each index of the
/// compensation's axes, the sum of the values of `dst` (dst.bytes() bytes; an integer type of at most 32 bits)
/// at those indices, modulo 2^32, row-major over (outer_axis, axis).
std::vector<int32_t> reference_compensation(const Layout& dst, const void* dst_data, const Compensation& comp);

/// The deterministic source pattern: each element is its logical linear index in canonical order, wrapped
/// to the type's exact range (f32: mod 2^24, f16: mod 2048, bf16: mod 256, f8e4m3: mod 16, f8e5m2: mod 8,
/// f64: exact, integers: two's-complement wrap, u4 and i4 to their 4 bits); padding is zero.
std::vector<uint8_t> make_pattern(const Layout& layout);

/// Throws unless src can be reordered into dst: the same number of elements (shapes that differ are a
/// reshape: elements correspond by their canonical row-major index, as OpenVINO's reorder between bfyx,
/// bfzyx and bfwzyx), compatible kinds (data <-> data or weights, grouped <-> grouped), and no two
/// destination elements in one place (Layout::overlap()). The message names both layouts.
void check_compatible(const Layout& src, const Layout& dst);

}  // namespace clreorder
