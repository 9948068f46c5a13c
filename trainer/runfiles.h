// The trainer's name for base::FindRunfile (base/runfiles.h), which moved to base/ so that
// data/ tools find their runfiles too without depending on trainer/.
#ifndef GPT_SFT_TRAINER_RUNFILES_H_
#define GPT_SFT_TRAINER_RUNFILES_H_

#include "base/runfiles.h"

namespace gpt_sft::trainer {

using base::FindRunfile;

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RUNFILES_H_
