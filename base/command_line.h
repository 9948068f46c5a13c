// ParseCommandLine for our binaries: Abseil's parse, except that asking for help is a
// success. The system Abseil (20220623) prints the usage for --help, --helpfull, --helpshort,
// --helppackage, --helpon=X and --helpmatch=X and then exits 1, which scripts and users read as
// a failure; here the usage goes to stdout and the process exits 0. Everything else (unknown
// flags, bad values, --version, --only_check_args) behaves exactly as absl::ParseCommandLine.
#ifndef GPT_SFT_BASE_COMMAND_LINE_H_
#define GPT_SFT_BASE_COMMAND_LINE_H_

#include <vector>

namespace gpt_sft::base {

/// Parses every flag of argv (absl::ParseCommandLine's rules) and returns the positional
/// arguments, argv[0] first. A usage flag prints the help to stdout and exits the process
/// with 0. Call absl::SetProgramUsageMessage first.
std::vector<char*> ParseCommandLine(int argc, char** argv);

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_COMMAND_LINE_H_
