// The start-of-run check of data-parallel training: every rank must begin from bit-identical
// parameters (they loaded the same checkpoint), or their updates silently diverge. Each rank
// hashes each parameter (xxh3 of its bytes), the hashes are gathered over the communicator,
// and any rank whose hashes differ from rank 0's is named with its first differing parameter.
#ifndef GPT_SFT_TRAINER_RUN_DIR_PARAM_CHECKSUM_H_
#define GPT_SFT_TRAINER_RUN_DIR_PARAM_CHECKSUM_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "runtime/collectives/communicator.h"
#include "runtime/params/param_store.h"

namespace gpt_sft::trainer {

/// xxh3 of each parameter's bytes, in ParamStore order.
std::vector<uint64_t> ParamChecksums(const runtime::ParamStore& params);

/// Collective (every rank calls it). FailedPrecondition naming the first rank that differs
/// from rank 0 and the parameter; the communicator's error when the exchange fails.
absl::Status VerifyParamsIdenticalAcrossRanks(const runtime::ParamStore& params,
                                              runtime::collectives::Communicator& communicator);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_RUN_DIR_PARAM_CHECKSUM_H_
