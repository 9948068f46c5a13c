#include "trainer/run_dir/param_checksum.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/xxhash.h"

namespace gpt_sft::trainer {

std::vector<uint64_t> ParamChecksums(const runtime::ParamStore& params) {
  std::vector<uint64_t> sums;
  for (const runtime::Param& p : params.params()) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(p.data());
    sums.push_back(llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(bytes, p.numel() * sizeof(float))));
  }
  return sums;
}

absl::Status VerifyParamsIdenticalAcrossRanks(const runtime::ParamStore& params,
                                              runtime::collectives::Communicator& communicator) {
  const std::vector<uint64_t> mine = ParamChecksums(params);
  const int64_t n = static_cast<int64_t>(mine.size());
  std::vector<uint64_t> all(n * communicator.world_size());
  if (absl::Status s = communicator.AllGather(mine.data(), all.data(), n, runtime::collectives::DataType::kUint64);
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("comparing the ranks' parameter checksums: ", s.message()));
  }
  for (int r = 1; r < communicator.world_size(); ++r) {
    for (int64_t i = 0; i < n; ++i) {
      if (all[r * n + i] != all[i]) {
        return absl::FailedPreconditionError(absl::StrCat(
            "rank ", r, " starts from parameters that differ from rank 0's (first: ", params.params()[i].name,
            ", xxh3 ", all[r * n + i], " vs ", all[i], "); every rank must load the same checkpoint"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
