// //trainer/generation:spelling_eval: the generative evaluation of a checkpoint on nanochat's
// synthetic spelling tasks (generative_eval.h): exact-match accuracy over the first
// --max_problems of each task's test split, greedy, with the calculator tool.
//
//   spelling_eval --checkpoint_dir=D [--step=N] [--tokenizer=F] [--words=/usr/share/dict/words]
//                 [--tasks=SimpleSpelling,SpellingBee] [--max_problems=100] [--max_tokens=256]
//
// Prints one line per task ("SimpleSpelling: 12/100 = 12.00% exact match (...)"). Checkpoint
// and tokenizer flags as //trainer:chat's (chat_model.h). Errors name the flag or file; exit 2.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/command_line.h"
#include "data/tasks/spelling_tasks.h"
#include "data/tools/user_path.h"
#include "trainer/generation/chat_model.h"
#include "trainer/generation/generative_eval.h"

ABSL_FLAG(std::string, checkpoint_dir, "", "checkpoint directory (default: <base_dir>/chatsft_checkpoints/<largest d<N>>)");
ABSL_FLAG(int64_t, step, -1, "checkpoint step (default: the last one)");
ABSL_FLAG(std::string, base_dir, "", "nanochat base directory (default: $NANOCHAT_BASE_DIR, else ~/.cache/nanochat)");
ABSL_FLAG(std::string, tokenizer, "", "tokenizer file (default: <base_dir>/tokenizer/tokenizer.txt)");
ABSL_FLAG(std::string, words, "/usr/share/dict/words", "word list of the spelling tasks (lowercase a-z lines are kept)");
ABSL_FLAG(std::string, tasks, "SimpleSpelling,SpellingBee", "comma-separated: SimpleSpelling, SpellingBee");
ABSL_FLAG(int64_t, max_problems, 100, "problems per task (the first N of the test split)");
ABSL_FLAG(int, max_tokens, 256, "tokens per reply at most");
ABSL_FLAG(bool, calculator, true, "run nanochat's calculator tool after <|python_end|>");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0: all cores");

namespace gpt_sft::trainer {
namespace {

int Run() {
  auto fail = [](const absl::Status& s) {
    std::cerr << "spelling_eval: error: " << s.message() << "\n";
    return 2;
  };
  GenerativeEvalOptions options;
  options.max_problems = absl::GetFlag(FLAGS_max_problems);
  options.max_tokens = absl::GetFlag(FLAGS_max_tokens);
  options.use_calculator = absl::GetFlag(FLAGS_calculator);
  if (options.max_problems < 1) return fail(absl::InvalidArgumentError("--max_problems must be >= 1"));
  if (options.max_tokens < 1) return fail(absl::InvalidArgumentError("--max_tokens must be >= 1"));
  const std::vector<std::string> names = absl::StrSplit(absl::GetFlag(FLAGS_tasks), ',', absl::SkipEmpty());
  if (names.empty()) return fail(absl::InvalidArgumentError("--tasks is empty"));
  for (const std::string& name : names) {
    if (name != "SimpleSpelling" && name != "SpellingBee") {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("--tasks: unknown task '", name, "' (known: SimpleSpelling, SpellingBee)")));
    }
  }
  auto words = data::LoadWordList(data::UserPath(absl::GetFlag(FLAGS_words)));
  if (!words.ok()) return fail(absl::Status(words.status().code(), absl::StrCat("--words: ", words.status().message())));

  ChatModelPaths paths;
  paths.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  if (absl::GetFlag(FLAGS_step) >= 0) paths.step = absl::GetFlag(FLAGS_step);
  paths.base_dir = absl::GetFlag(FLAGS_base_dir);
  paths.tokenizer = absl::GetFlag(FLAGS_tokenizer);
  auto model = LoadChatCheckpoint(paths);
  if (!model.ok()) return fail(model.status());
  auto tok = LoadChatTokenizer(paths, model->params.config().vocab_size);
  if (!tok.ok()) return fail(tok.status());
  auto gen = Generator::Create(model->params, {absl::GetFlag(FLAGS_num_threads)});
  if (!gen.ok()) return fail(gen.status());

  for (const std::string& name : names) {
    std::unique_ptr<data::Task> task;
    if (name == "SimpleSpelling") {
      task = std::make_unique<data::SimpleSpellingTask>(*words, options.max_problems, data::Split::kTest);
    } else {
      task = std::make_unique<data::SpellingBeeTask>(*words, options.max_problems, data::Split::kTest);
    }
    auto result = RunGenerativeEval(*task, *tok, **gen, options);
    if (!result.ok()) return fail(result.status());
    std::cout << FormatGenerativeEval(*result) << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "spelling_eval --checkpoint_dir=D [--tokenizer=F] [--words=FILE] [--tasks=SimpleSpelling,SpellingBee] "
      "[--max_problems=100]: exact-match accuracy of greedy replies on the spelling tasks");
  std::vector<char*> rest = gpt_sft::base::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::cerr << "spelling_eval: error: unexpected argument '" << rest[1] << "' (flags are --name=value)\n";
    return 2;
  }
  return gpt_sft::trainer::Run();
}
