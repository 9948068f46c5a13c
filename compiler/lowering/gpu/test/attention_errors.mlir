// What the attention generators refuse, naming the op: what the interpreter's compiled path
// runs (causal, the default scale 1/sqrt(D)) and f32.
// (The remarks are gpt-plan-buffers' arena summaries.)
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --verify-diagnostics

// expected-remark @below {{arena}}
func.func @not_causal(%q: tensor<1x8x2x16xf32> {gpt.name = "q"}, %k: tensor<1x8x2x16xf32> {gpt.name = "k"},
                      %v: tensor<1x8x2x16xf32> {gpt.name = "v"}) -> (tensor<1x8x2x16xf32> {gpt.name = "out"}) {
  // expected-error @+1 {{'gpt.attention' op gpt-lower-to-gpu: the attention kernels run causal attention at the default scale 1/sqrt(D)}}
  %o = gpt.attention %q, %k, %v {causal = false} : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
  return %o : tensor<1x8x2x16xf32>
}

// -----

// expected-remark @below {{arena}}
func.func @other_scale(%q: tensor<1x8x2x16xf32> {gpt.name = "q"}, %k: tensor<1x8x2x16xf32> {gpt.name = "k"},
                       %v: tensor<1x8x2x16xf32> {gpt.name = "v"}, %o: tensor<1x8x2x16xf32> {gpt.name = "o"},
                       %do: tensor<1x8x2x16xf32> {gpt.name = "dout"})
    -> (tensor<1x8x2x16xf32> {gpt.name = "dq"}, tensor<1x8x2x16xf32> {gpt.name = "dk"}, tensor<1x8x2x16xf32> {gpt.name = "dv"}) {
  // expected-error @+1 {{'gpt.attention_grad' op gpt-lower-to-gpu: the attention kernels run causal attention at the default scale 1/sqrt(D)}}
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do {scale = 0.5 : f64} : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
  return %dq, %dk, %dv : tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>, tensor<1x8x2x16xf32>
}

// -----

// expected-remark @below {{arena}}
func.func @f64(%q: tensor<1x8x2x16xf64> {gpt.name = "q"}, %k: tensor<1x8x2x16xf64> {gpt.name = "k"},
               %v: tensor<1x8x2x16xf64> {gpt.name = "v"}) -> (tensor<1x8x2x16xf64> {gpt.name = "out"}) {
  // expected-error @+1 {{'gpt.attention' op gpt-lower-to-gpu: the attention kernels run f32 only, got 'tensor<1x8x2x16xf64>'}}
  %o = gpt.attention %q, %k, %v : tensor<1x8x2x16xf64>, tensor<1x8x2x16xf64>, tensor<1x8x2x16xf64>
  return %o : tensor<1x8x2x16xf64>
}

