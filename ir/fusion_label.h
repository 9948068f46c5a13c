// The attribute that keeps a fusion's ops known after gpt-lower-fusions turns its region into
// a linalg.generic of scalar code: profiles group launches by what they compute
// ("fusion(round_bf16,add)"), not by "fusion" alone. Here, below the transforms that set it
// and the lowerings that read it.
#ifndef GPT_SFT_IR_FUSION_LABEL_H_
#define GPT_SFT_IR_FUSION_LABEL_H_

namespace gpt_sft::compiler {

/// On a lowered fusion (linalg.generic): its region's ops in order, without the dialect
/// prefix, comma-separated (`gpt.fusion_ops = "round_bf16,add"`).
inline constexpr char kFusionOpsAttr[] = "gpt.fusion_ops";

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_IR_FUSION_LABEL_H_
