// //trainer:chat: talks with a checkpoint (nanochat's chat_cli).
//
//   chat --checkpoint_dir=D [--step=N] [--tokenizer=F] [--prompt=TEXT]
//        [--temperature=0.6] [--top_k=50] [--seed=42] [--max_tokens=256]
//
// Loads the checkpoint (runtime/checkpoint; the last step when --step is not given; without
// --checkpoint_dir, the largest-depth tag under <base_dir>/chatsft_checkpoints) and the
// tokenizer (trainer/generation/chat_model.h says where it is looked for). With --prompt, one
// turn: the reply on one line of stdout. Otherwise one multi-turn conversation, as nanochat's
// chat_cli keeps it: every stdin line is the user's next turn, answered in the context of
// every turn before it (trainer/generation/chat_session.h); `clear` starts a new
// conversation, `quit` or `exit` (or end of input) ends. On a terminal the turns are shown
// as "User: " and "Assistant: "; from a pipe, stdout has the replies only, one per line.
// Replies are sampled with the KV-cache decoder (trainer/generation, with nanochat's
// calculator tool unless --calculator=false) until <|assistant_end|> or --max_tokens (their
// own newlines kept; special tokens as their text). Speed goes to stderr. Every error names
// the flag or file at fault and exits 2.
#include <unistd.h>

#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "data/conversation/render.h"
#include "data/tokenizer/tokenizer.h"
#include "trainer/generation/calculator.h"
#include "trainer/generation/chat_model.h"
#include "trainer/generation/chat_session.h"
#include "trainer/generation/generator.h"

ABSL_FLAG(std::string, checkpoint_dir, "",
          "a trainer's run directory (its step_<step>/ directories) or a directory of model_<step>.safetensors + "
          "meta_<step>.json (default: the largest d<N> under <base_dir>/chatsft_checkpoints)");
ABSL_FLAG(int64_t, step, -1, "checkpoint step (default: the last one in --checkpoint_dir)");
ABSL_FLAG(std::string, base_dir, "", "nanochat base directory (default: $NANOCHAT_BASE_DIR, else ~/.cache/nanochat)");
ABSL_FLAG(std::string, tokenizer, "", "tokenizer file (default: <base_dir>/tokenizer/tokenizer.txt)");
ABSL_FLAG(std::string, prompt, "", "one prompt; when empty, one prompt per stdin line");
ABSL_FLAG(double, temperature, 0.6, "sampling temperature; 0: greedy");
ABSL_FLAG(int, top_k, 50, "sample among the k most likely tokens; 0: all");
ABSL_FLAG(uint64_t, seed, 42, "sampling seed (per prompt: same seed, same reply)");
ABSL_FLAG(int, max_tokens, 256, "tokens per reply at most");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0: all cores");
ABSL_FLAG(bool, calculator, true,
          "run nanochat's calculator tool: after <|python_end|>, force <|output_start|> value <|output_end|>");

namespace gpt_sft::trainer {
namespace {

ChatModelPaths Paths() {
  ChatModelPaths paths;
  paths.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  if (absl::GetFlag(FLAGS_step) >= 0) paths.step = absl::GetFlag(FLAGS_step);
  paths.base_dir = absl::GetFlag(FLAGS_base_dir);
  paths.tokenizer = absl::GetFlag(FLAGS_tokenizer);
  return paths;
}

/// Completes `prompt` (every token of the conversation so far) and prints the reply; returns
/// its tokens.
absl::StatusOr<std::vector<int32_t>> Reply(const std::vector<int32_t>& prompt, const data::Tokenizer& tok,
                                           Generator& gen, const GenerateOptions& options) {
  auto reply = gen.Generate(prompt, options);
  if (!reply.ok()) return reply.status();
  std::cout << tok.Decode(*reply) << std::endl;
  const GenerateStats& s = gen.last_stats();
  std::cerr << absl::StrFormat("[%d prompt tokens in %.3f s; %d reply tokens in %.3f s, %.1f tokens/s]\n",
                               s.prompt_tokens, s.prefill_seconds, reply->size(), s.decode_seconds,
                               s.decode_seconds > 0 ? reply->size() / s.decode_seconds : 0.0);
  return reply;
}

/// The conversation on stdin, one user turn per line, until quit/exit or the end of input.
absl::Status Converse(const data::Tokenizer& tok, Generator& gen, const GenerateOptions& options,
                      int sequence_len) {
  const bool terminal = isatty(STDIN_FILENO) == 1;
  if (terminal) {
    std::cout << "Chat with the model: one line per turn; 'clear' starts a new conversation, 'quit' or "
                 "Ctrl-D ends.\n";
  }
  ChatSession session(tok);
  bool warned = false;
  std::string line;
  while (true) {
    if (terminal) std::cout << "\nUser: " << std::flush;
    if (!std::getline(std::cin, line)) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t\r\f\v") == std::string::npos) continue;  // blank: no turn
    if (line == "quit" || line == "exit") break;
    if (line == "clear") {
      session.Clear();
      if (terminal) std::cout << "(a new conversation)" << std::endl;
      continue;
    }
    const std::vector<int32_t>& prompt = session.UserTurn(line);
    if (!warned && int64_t(prompt.size()) + options.max_tokens > sequence_len) {
      std::cerr << "[the conversation is " << prompt.size() << " tokens; the model was trained on " << sequence_len
                << " at most, so replies may degrade: 'clear' starts anew]\n";
      warned = true;
    }
    if (terminal) std::cout << "Assistant: " << std::flush;
    absl::StatusOr<std::vector<int32_t>> reply = Reply(prompt, tok, gen, options);
    if (!reply.ok() && reply.status().code() == absl::StatusCode::kOutOfRange) {
      // A turn too long for the model is refused; the conversation goes on without it.
      session.UndoUserTurn();
      std::cerr << "[not sent: " << reply.status().message() << "; shorten the turn, or 'clear' starts anew]"
                << std::endl;
      continue;
    }
    if (!reply.ok()) return reply.status();
    session.AssistantTurn(*reply);
  }
  return absl::OkStatus();
}

int Run() {
  auto fail = [](const absl::Status& s) {
    std::cerr << "chat: error: " << s.message() << "\n";
    return 2;
  };
  GenerateOptions options;
  options.sampling = {absl::GetFlag(FLAGS_temperature), absl::GetFlag(FLAGS_top_k), absl::GetFlag(FLAGS_seed)};
  options.max_tokens = absl::GetFlag(FLAGS_max_tokens);
  if (absl::Status s = options.sampling.Validate(); !s.ok()) return fail(s);
  if (options.max_tokens < 1) {
    return fail(absl::InvalidArgumentError(absl::StrCat("--max_tokens must be >= 1, got ", options.max_tokens)));
  }
  if (absl::GetFlag(FLAGS_num_threads) < 0) {
    return fail(absl::InvalidArgumentError("--num_threads must be >= 0"));
  }
  auto model = LoadChatCheckpoint(Paths());
  if (!model.ok()) return fail(model.status());
  // Which weights answer: the step, so a reply can be traced to a checkpoint.
  std::cerr << "[chat] step " << model->meta.record.step << " of "
            << (Paths().checkpoint_dir.empty() ? std::string("the newest run under the base dir")
                                               : Paths().checkpoint_dir)
            << " (" << model->params.NumParams() << " parameters)" << std::endl;
  auto tok = LoadChatTokenizer(Paths(), model->params.config().vocab_size);
  if (!tok.ok()) return fail(tok.status());
  options.stop_tokens = {tok->SpecialId(data::SpecialToken::kAssistantEnd), tok->SpecialId(data::SpecialToken::kBos)};
  if (absl::GetFlag(FLAGS_calculator)) options.tool = CalculatorTool(*tok);
  auto gen = Generator::Create(model->params, {absl::GetFlag(FLAGS_num_threads)});
  if (!gen.ok()) return fail(gen.status());

  const std::string prompt = absl::GetFlag(FLAGS_prompt);
  if (!prompt.empty()) {
    ChatSession one_turn(*tok);
    if (auto reply = Reply(one_turn.UserTurn(prompt), *tok, **gen, options); !reply.ok()) return fail(reply.status());
    return 0;
  }
  if (absl::Status s = Converse(*tok, **gen, options, model->params.config().sequence_len); !s.ok()) return fail(s);
  return 0;
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "chat --checkpoint_dir=D [--step=N] [--tokenizer=F] [--prompt=TEXT] [--temperature=0.6] [--top_k=50] "
      "[--seed=42] [--max_tokens=256]: talks with a checkpoint (--prompt: one turn; else a conversation on stdin)");
  std::vector<char*> rest = gpt_sft::base::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::cerr << "chat: error: unexpected argument '" << rest[1] << "' (flags are --name=value)\n";
    return 2;
  }
  return gpt_sft::trainer::Run();
}
