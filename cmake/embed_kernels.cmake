# Wraps every kernels_cl/*.cl file into a C++ raw string, so the library carries its kernels.
# Usage: cmake -DOUT=<file.cpp> -DFILES="a.cl|b.cl" -P embed_kernels.cmake
string(REPLACE "|" ";" FILES "${FILES}")
set(body "")
set(table "")
foreach(f IN LISTS FILES)
  get_filename_component(name "${f}" NAME)
  file(READ "${f}" text)
  string(MAKE_C_IDENTIFIER "${name}" id)
  string(APPEND body "static const char k_${id}[] = R\"CLSRC(${text})CLSRC\";\n")
  string(APPEND table "    {\"${name}\", k_${id}},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from kernels_cl/ by cmake/embed_kernels.cmake. Do not edit.
#include <map>
#include <string>
#include \"clreorder/error.hpp\"
#include \"embedded.hpp\"
namespace clreorder {
${body}
const std::string& embedded_kernel(const std::string& name) {
  static const std::map<std::string, std::string> files = {
${table}  };
  auto it = files.find(name);
  if (it == files.end()) throw Error(\"no embedded kernel file '\" + name + \"'\");
  return it->second;
}
}  // namespace clreorder
")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
