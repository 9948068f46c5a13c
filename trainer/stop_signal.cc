// Implements the stop-signal handlers: async-signal-safe only (an atomic flag, write, _exit).
#include "trainer/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace gpt_sft::trainer {
namespace {

std::atomic<int> received{0};

void Write(const char* text) {
  ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
  (void)ignored;
}

void OnStopSignal(int sig) {
  int expected = 0;
  if (!received.compare_exchange_strong(expected, sig)) {
    Write("\ntrainer: a second stop signal: exiting now, without saving\n");
    _exit(128 + sig);
  }
  Write(sig == SIGINT ? "\ntrainer: SIGINT: finishing the step in flight, then saving a checkpoint "
                        "(Ctrl-C again to exit at once, without saving)\n"
                      : "\ntrainer: SIGTERM: finishing the step in flight, then saving a checkpoint "
                        "(a second signal exits at once, without saving)\n");
}

}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A file-size limit is a full disk to us: the write fails with EFBIG and its error names the
  // file, instead of the process dying of SIGXFSZ with a file half written.
  signal(SIGXFSZ, SIG_IGN);
}

int StopSignalReceived() { return received.load(); }

}  // namespace gpt_sft::trainer
