// What a signal handler may write: one write(2) of a NUL-terminated text to stderr, no
// allocation, no locks (stop_signal.cc and rank_launcher.cc's handlers).
#ifndef GPT_SFT_TRAINER_LAUNCH_SIGNAL_SAFE_WRITE_H_
#define GPT_SFT_TRAINER_LAUNCH_SIGNAL_SAFE_WRITE_H_

#include <unistd.h>

#include <cstring>

namespace gpt_sft::trainer {

inline void WriteToStderr(const char* text) {
  ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LAUNCH_SIGNAL_SAFE_WRITE_H_
