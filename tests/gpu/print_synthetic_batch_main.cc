// Prints trainer::SyntheticBatch as one JSON object {"inputs": [[...]], "targets": [[...]]}, so
// that bundle_test can check the PyTorch peer draws the very batches run_step trains on.
//   print_synthetic_batch SEED ROWS SEQ VOCAB
#include <cstdlib>
#include <iostream>

#include "nlohmann/json.hpp"
#include "trainer/step_loop.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: print_synthetic_batch SEED ROWS SEQ VOCAB" << std::endl;
    return 2;
  }
  const gpt_sft::data::Batch b = gpt_sft::trainer::SyntheticBatch(std::strtoull(argv[1], nullptr, 10), std::atoi(argv[2]),
                                                                  std::atoi(argv[3]), std::atoi(argv[4]));
  nlohmann::json inputs = nlohmann::json::array(), targets = nlohmann::json::array();
  for (int r = 0; r < b.B; ++r) {
    nlohmann::json in = nlohmann::json::array(), tg = nlohmann::json::array();
    for (int t = 0; t < b.T; ++t) {
      in.push_back(b.inputs[b.Offset(r, t)]);
      tg.push_back(b.targets[b.Offset(r, t)]);
    }
    inputs.push_back(in);
    targets.push_back(tg);
  }
  std::cout << nlohmann::json{{"inputs", inputs}, {"targets", targets}}.dump() << std::endl;
  return 0;
}
