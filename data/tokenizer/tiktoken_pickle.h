// nanochat's tokenizer.pkl (NANOCHAT.md 5.4): a pickle of a tiktoken.core.Encoding, whose
// state is {"name", "pat_str", "mergeable_ranks": bytes -> rank, "special_tokens": str -> id}.
// Read without Python into our Tokenizer, and written from one so that nanochat's
// RustBPETokenizer.from_directory (pickle.load) gets an equal Encoding.
//
// Our tokenizer is a merge list with ranks 0..255 the single bytes in byte order and merge i
// making rank 256 + i (data/tokenizer/FORMAT.md); encoding joins by the rank of the joined
// bytes, as tiktoken does, so any rank table of that shape encodes identically in both. A
// rank r >= 256 becomes the merge BPE itself finds for its bytes with ranks below r (for a
// BPE-trained table, the pair training merged). Refused, each by name: ranks that are not
// 0..N-1, a first 256 that are not the single bytes in order (GPT-2's shuffled byte order),
// a token that no two earlier tokens make, special tokens other than nanochat's nine at
// N + position, and an encoding pickled by its registered name.
#ifndef GPT_SFT_DATA_TOKENIZER_TIKTOKEN_PICKLE_H_
#define GPT_SFT_DATA_TOKENIZER_TIKTOKEN_PICKLE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {

/// Reads a tokenizer.pkl. Errors name the file and the token or key at fault.
absl::StatusOr<Tokenizer> LoadTiktokenPickle(const std::string& path);

/// A tokenizer file of either kind, told apart by its first byte: nanochat's tokenizer.pkl (a
/// pickle starts with the PROTO opcode 0x80) or ours (data/tokenizer/FORMAT.md, text).
absl::StatusOr<Tokenizer> LoadTokenizerOfAnyKind(const std::string& path);

/// Writes `tokenizer` as nanochat's tokenizer.pkl (protocol 4, name "rustbpe"), atomically.
absl::Status SaveTiktokenPickle(const Tokenizer& tokenizer, const std::string& path);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_TIKTOKEN_PICKLE_H_
