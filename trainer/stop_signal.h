// StopSignal: SIGINT and SIGTERM ask the trainer to stop cleanly. The first one is recorded
// (and a line on stderr says what will happen); the loop finishes the step in flight, saves a
// checkpoint and exits 128 + the signal (130, 143). A second one ends the process at once with
// that status, without saving (for a save that takes too long, or a stuck run).
#ifndef GPT_SFT_TRAINER_STOP_SIGNAL_H_
#define GPT_SFT_TRAINER_STOP_SIGNAL_H_

namespace gpt_sft::trainer {

/// Installs the handlers (idempotent).
void InstallStopSignalHandlers();

/// 0, or the first stop signal received (SIGINT, SIGTERM).
int StopSignalReceived();

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_STOP_SIGNAL_H_
