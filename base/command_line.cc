#include "base/command_line.h"

#include <cstdlib>
#include <iostream>

#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/usage.h"

namespace gpt_sft::base {

std::vector<char*> ParseCommandLine(int argc, char** argv) {
  namespace fi = absl::flags_internal;
  // The usage flags are parsed (and their mode recorded) but not acted on, so that the
  // exit code below is ours. Abseil's own handler is what prints the help, unchanged.
  std::vector<char*> positional = fi::ParseCommandLineImpl(
      argc, argv, fi::ArgvListAction::kRemoveParsedArgs, fi::UsageFlagsAction::kIgnoreUsage,
      fi::OnUndefinedFlag::kAbortIfUndefined);
  const int usage_exit = fi::HandleUsageFlags(std::cout, absl::ProgramUsageMessage());
  if (usage_exit >= 0) {
    std::cout << std::flush;
    std::exit(0);
  }
  return positional;
}

}  // namespace gpt_sft::base
