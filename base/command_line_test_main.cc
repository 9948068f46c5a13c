// A binary with one flag, parsed by base::ParseCommandLine, for command_line_test.sh:
// prints "value=<--value> positional=<count>" and exits 0.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "base/command_line.h"

ABSL_FLAG(std::string, value, "default", "a value to print back");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("command_line_test_main: prints --value back");
  std::vector<char*> positional = gpt_sft::base::ParseCommandLine(argc, argv);
  std::cout << "value=" << absl::GetFlag(FLAGS_value) << " positional=" << positional.size() - 1 << std::endl;
  return 0;
}
