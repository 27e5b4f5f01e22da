// clreorder command-line tool. See `clreorder help`.
#include "cli.hpp"

int main(int argc, char** argv) { return clreorder::run_cli(argc, argv); }
