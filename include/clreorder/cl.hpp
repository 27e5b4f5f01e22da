// clreorder: the one place the C++ API includes the OpenCL C++ bindings. Each macro below is a default, set
// only where the consumer set none, so a consumer's own choices (OpenCL 3.0 headers, say) stand; the
// library itself is built with all four at 1.2 (CMakeLists.txt), and the C API (clreorder.h) sets nothing.
#pragma once

#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error "clreorder's C++ API reports errors by exception; a -fno-exceptions program uses the C API, clreorder/clreorder.h"
#endif
// The bindings' inline functions throw or return codes depending on this macro; the library is built with
// it, and one program must see one definition of them.
#if defined(CL_HPP_) && !defined(CL_HPP_ENABLE_EXCEPTIONS)
#error "CL/opencl.hpp was included without CL_HPP_ENABLE_EXCEPTIONS before clreorder's C++ headers, which need it: define it first, or include clreorder's headers first"
#endif
#ifndef CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_ENABLE_EXCEPTIONS
#endif
// The library needs nothing past OpenCL 1.2. Debian's CLHPP does not compile with a target of 2.0 or more
// and a minimum of 1.2, so such a target gets a minimum of 1.1.
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#if CL_HPP_TARGET_OPENCL_VERSION >= 200
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#else
#define CL_HPP_MINIMUM_OPENCL_VERSION CL_HPP_TARGET_OPENCL_VERSION
#endif
#endif

#include <CL/opencl.hpp>
