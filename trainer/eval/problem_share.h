// ProblemShare: which of an evaluation's problems one rank scores. Rank r of W takes problems
// r, r + W, r + 2W, ... of the first N, so W ranks together score exactly the problems one rank
// would (the same N, the same order within each rank), and summing their counts over the ranks
// gives the one-rank figures.
#ifndef GPT_SFT_TRAINER_EVAL_PROBLEM_SHARE_H_
#define GPT_SFT_TRAINER_EVAL_PROBLEM_SHARE_H_

#include <cstdint>

namespace gpt_sft::trainer {

struct ProblemShare {
  int64_t rank = 0;   // in [0, ranks)
  int64_t ranks = 1;  // >= 1

  /// How many of problems 0..n-1 this rank scores.
  int64_t CountOf(int64_t n) const { return n > rank ? (n - rank + ranks - 1) / ranks : 0; }
  bool valid() const { return ranks >= 1 && rank >= 0 && rank < ranks; }
};

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EVAL_PROBLEM_SHARE_H_
