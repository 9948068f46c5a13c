// //tests:random_checkpoint (test only): writes a checkpoint of a randomly initialised model
// (ParamStore::InitNanochat with every output projection drawn too, so replies are not
// constant) through runtime/checkpoint SaveCheckpoint, for end-to-end tests of the tools
// that load one.
//   random_checkpoint --output_dir=D --vocab_size=V [--depth=1 --n_embd=64 --n_head=2
//                     --sequence_len=256 --seed=1 --step=0]
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "compiler/config/model_config.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/params/param_store.h"

ABSL_FLAG(std::string, output_dir, "", "where to write model_<step>.safetensors and meta_<step>.json");
ABSL_FLAG(int, vocab_size, 0, "the tokenizer's vocabulary size");
ABSL_FLAG(int, depth, 1, "layers");
ABSL_FLAG(int, n_embd, 64, "width");
ABSL_FLAG(int, n_head, 2, "heads");
ABSL_FLAG(int, sequence_len, 256, "context length");
ABSL_FLAG(uint64_t, seed, 1, "initialisation seed");
ABSL_FLAG(int64_t, step, 0, "the checkpoint's step");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  using namespace gpt_sft;
  auto fail = [](const std::string& message) {
    std::cerr << "random_checkpoint: error: " << message << "\n";
    return 2;
  };
  if (absl::GetFlag(FLAGS_output_dir).empty()) return fail("--output_dir is required");
  auto config = compiler::ModelConfig::FromDepth(absl::GetFlag(FLAGS_depth), absl::GetFlag(FLAGS_vocab_size),
                                                 absl::GetFlag(FLAGS_sequence_len), absl::GetFlag(FLAGS_n_embd),
                                                 absl::GetFlag(FLAGS_n_head));
  if (!config.ok()) return fail(std::string(config.status().message()));
  auto store = runtime::ParamStore::Create(*config);
  if (!store.ok()) return fail(std::string(store.status().message()));
  store->InitNanochat(absl::GetFlag(FLAGS_seed), /*zero_output_projections=*/false);
  runtime::CheckpointRecord record;
  record.step = absl::GetFlag(FLAGS_step);
  auto saved = runtime::SaveCheckpoint(absl::GetFlag(FLAGS_output_dir), *store, record);
  if (!saved.ok()) return fail(std::string(saved.status().message()));
  std::cout << "wrote " << saved->model_path << " (" << store->NumParams() << " parameters)\n";
  return 0;
}
