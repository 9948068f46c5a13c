// //trainer:validate: the validation report, produced by the product (trainer/validation/).
//
//   ./bazelw run //trainer:validate -- --model_tag=d20 --max_iterations=100
//   ./bazelw run //trainer:validate -- --demo --max_iterations=12
//
// Exit status: 0 when every test and correctness check passed and every criterion was
// measured; 1 otherwise (the report is written either way); 2 for a bad flag.
#include <iostream>
#include <string>
#include <vector>

#include "trainer/validation/validate_flags.h"
#include "trainer/validation/validation_run.h"

int main(int argc, char** argv) {
  namespace v = gpt_sft::trainer::validation;
  absl::StatusOr<v::ValidateOptions> options = v::ParseValidateFlags(std::vector<std::string>(argv, argv + argc));
  if (!options.ok()) {
    std::cerr << "validate: error: " << options.status().message() << std::endl;
    return 2;
  }
  if (options->help) {
    std::cout << v::ValidateUsage();
    return 0;
  }
  absl::StatusOr<int> exit_code = v::RunValidation(*options, std::cout);
  if (!exit_code.ok()) {
    std::cerr << "validate: error: " << exit_code.status().message() << std::endl;
    return 1;
  }
  return *exit_code;
}
