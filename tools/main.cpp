// clreorder command-line tool. See `clreorder help`.
#include "cli.hpp"
#include "pocl_affinity.hpp"

int main(int argc, char** argv) {
  clreorder_tools::pin_pocl_workers();  // this program's own process only: the library never sets it
  return clreorder::run_cli(argc, argv);
}
