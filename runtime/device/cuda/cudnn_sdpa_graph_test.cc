// SdpaGraph::Build against a recording stand-in for cuDNN (no GPU, no library): the graphs
// hold the ops the file comment of cudnn_sdpa_graph.cc lists, bind the uids the driver's
// variant pack supplies, take the first plan that finalizes with its workspace size, and each
// refusal (no engine, GQA backward) is a FailedPrecondition naming the shape.
#include "runtime/device/cuda/cudnn_sdpa_graph.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

/// What the stand-in saw: each descriptor's type, its int64 attributes, its descriptor lists.
struct Recorded {
  std::map<int64_t, int> type;                                  // descriptor id -> backend type
  std::map<std::pair<int64_t, int>, std::vector<int64_t>> ints;  // (id, attribute) -> int64 values
  std::map<std::pair<int64_t, int>, std::vector<int64_t>> descs;  // (id, attribute) -> descriptor ids
  std::map<std::pair<int64_t, int>, int> enums;                  // (id, attribute) -> first int value
  int64_t next = 1;
  int configs_offered = 1;
  int plans_refused = 0;  // how many plans fail to finalize before one succeeds
  int64_t workspace = 4096;
};
Recorded* rec = nullptr;

int64_t Id(cudnnDescriptor d) { return reinterpret_cast<int64_t>(d); }

cudnnStatus Create(int type, cudnnDescriptor* d) {
  const int64_t id = rec->next++;
  rec->type[id] = type;
  *d = reinterpret_cast<cudnnDescriptor>(id);
  return kCudnnSuccess;
}
cudnnStatus Destroy(cudnnDescriptor) { return kCudnnSuccess; }
cudnnStatus Finalize(cudnnDescriptor d) {
  if (rec->type[Id(d)] == cudnn_desc::kExecutionPlan && rec->plans_refused > 0) {
    --rec->plans_refused;
    return kCudnnNotSupported;
  }
  return kCudnnSuccess;
}
cudnnStatus Set(cudnnDescriptor d, int name, int type, int64_t count, const void* values) {
  if (type == cudnn_type::kInt64) {
    const auto* v = static_cast<const int64_t*>(values);
    rec->ints[{Id(d), name}] = std::vector<int64_t>(v, v + count);
  } else if (type == cudnn_type::kBackendDescriptor) {
    const auto* v = static_cast<const cudnnDescriptor*>(values);
    std::vector<int64_t>& out = rec->descs[{Id(d), name}];
    for (int64_t i = 0; i < count; ++i) out.push_back(Id(v[i]));
  } else if (type == cudnn_type::kDataType || type == cudnn_type::kPointwiseMode ||
             type == cudnn_type::kReductionOperator || type == cudnn_type::kHeurMode) {
    rec->enums[{Id(d), name}] = *static_cast<const int*>(values);
  }
  return kCudnnSuccess;
}
cudnnStatus Get(cudnnDescriptor d, int name, int, int64_t requested, int64_t* returned, void* values) {
  if (name == cudnn_attr::kEngineHeurResults) {
    *returned = std::min<int64_t>(requested, rec->configs_offered);
  } else if (name == cudnn_attr::kPlanWorkspaceSize) {
    *returned = 1;
    std::memcpy(values, &rec->workspace, sizeof(int64_t));
  }
  (void)d;
  return kCudnnSuccess;
}
const char* Name(cudnnStatus s) { return s == kCudnnNotSupported ? "CUDNN_STATUS_NOT_SUPPORTED" : "CUDNN_STATUS_?"; }

CudnnApi FakeApi() {
  CudnnApi api{};
  api.GetErrorString = Name;
  api.BackendCreateDescriptor = Create;
  api.BackendDestroyDescriptor = Destroy;
  api.BackendFinalize = Finalize;
  api.BackendSetAttribute = Set;
  api.BackendGetAttribute = Get;
  return api;
}

class SdpaGraphTest : public ::testing::Test {
 protected:
  void SetUp() override { rec = &recorded_; }
  void TearDown() override { rec = nullptr; }

  /// Ops of the operation graph by backend type, and the uids of its non-virtual tensors.
  std::map<int, int> OpsByType() const {
    std::map<int, int> count;
    for (const auto& [key, ids] : recorded_.descs) {
      if (key.second != cudnn_attr::kGraphOps) continue;
      for (int64_t id : ids) ++count[recorded_.type.at(id)];
    }
    return count;
  }
  std::set<int64_t> BoundUids() const {
    std::set<int64_t> uids;
    for (const auto& [key, values] : recorded_.ints) {
      if (key.second == cudnn_attr::kTensorUniqueId && values[0] < 1000) uids.insert(values[0]);
    }
    return uids;
  }
  int PointwiseModeCount(int mode) const {
    int n = 0;
    for (const auto& [key, value] : recorded_.enums) n += key.second == cudnn_attr::kPointwiseMode && value == mode;
    return n;
  }

  Recorded recorded_;
  CudnnApi api_ = FakeApi();
};

SdpaShape D20(bool backward, int64_t hkv = 10) { return {backward, 4, 2048, 10, hkv, 128, true, 0.0883883f}; }

TEST_F(SdpaGraphTest, TheForwardIsTheFusedPatternOverTheStepsLayout) {
  absl::StatusOr<std::unique_ptr<SdpaGraph>> g = SdpaGraph::Build(api_, nullptr, D20(false));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->workspace_bytes(), 4096);
  EXPECT_NE((*g)->plan(), nullptr);
  // Q Kᵀ and P V; scale, two generated indices, the compare, the select, and the softmax's
  // sub, exp, log, add (stats), div; its max and sum.
  const std::map<int, int> ops = OpsByType();
  EXPECT_EQ(ops.at(cudnn_desc::kOperationMatmul), 2);
  EXPECT_EQ(ops.at(cudnn_desc::kOperationPointwise), 10);
  EXPECT_EQ(ops.at(cudnn_desc::kOperationReduction), 2);
  EXPECT_EQ(ops.count(cudnn_desc::kOperationReshape), 0u);
  EXPECT_EQ(PointwiseModeCount(cudnn_pointwise::kGenIndex), 2);
  EXPECT_EQ(PointwiseModeCount(cudnn_pointwise::kBinarySelect), 1);
  EXPECT_EQ(BoundUids(), (std::set<int64_t>{kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale, kUidNegInf}));
  // Q is [B, H, T, D] read through the step's [B, T, H, D] strides; K is read transposed.
  for (const auto& [key, values] : recorded_.ints) {
    if (key.second != cudnn_attr::kTensorUniqueId) continue;
    const std::vector<int64_t>& dims = recorded_.ints.at({key.first, cudnn_attr::kTensorDimensions});
    const std::vector<int64_t>& strides = recorded_.ints.at({key.first, cudnn_attr::kTensorStrides});
    if (values[0] == kUidQ) {
      EXPECT_EQ(dims, (std::vector<int64_t>{4, 10, 2048, 128}));
      EXPECT_EQ(strides, (std::vector<int64_t>{2048 * 10 * 128, 128, 10 * 128, 1}));
      EXPECT_EQ(recorded_.enums.at({key.first, cudnn_attr::kTensorDataType}), kCudnnDataBf16);
    } else if (values[0] == kUidK) {
      EXPECT_EQ(dims, (std::vector<int64_t>{4, 10, 128, 2048}));
      EXPECT_EQ(strides, (std::vector<int64_t>{2048 * 10 * 128, 128, 1, 10 * 128}));
    } else if (values[0] == kUidStats) {
      EXPECT_EQ(dims, (std::vector<int64_t>{4, 10, 2048, 1}));
      EXPECT_EQ(recorded_.enums.at({key.first, cudnn_attr::kTensorDataType}), kCudnnDataFloat);
    }
  }
}

TEST_F(SdpaGraphTest, TheBackwardBindsTheGradientsAndItsRowSumScratch) {
  absl::StatusOr<std::unique_ptr<SdpaGraph>> g = SdpaGraph::Build(api_, nullptr, D20(true));
  ASSERT_TRUE(g.ok()) << g.status();
  // S = Q Kᵀ, dV = Pᵀ dO, dP = dO Vᵀ, dQ = dS K, dK = dSᵀ Q; Kᵀ, Vᵀ, Pᵀ, dSᵀ as reshapes.
  const std::map<int, int> ops = OpsByType();
  EXPECT_EQ(ops.at(cudnn_desc::kOperationMatmul), 5);
  EXPECT_EQ(ops.at(cudnn_desc::kOperationReshape), 4);
  EXPECT_EQ(ops.at(cudnn_desc::kOperationReduction), 1);
  EXPECT_EQ(BoundUids(), (std::set<int64_t>{kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale, kUidNegInf, kUidDO,
                                            kUidDQ, kUidDK, kUidDV, kUidRowSum}));
}

TEST_F(SdpaGraphTest, ThePlanIsTheFirstConfigurationThatFinalizes) {
  recorded_.configs_offered = 3;
  recorded_.plans_refused = 2;
  EXPECT_TRUE(SdpaGraph::Build(api_, nullptr, D20(false)).ok());
}

TEST_F(SdpaGraphTest, NoEngineIsOneErrorNamingTheShape) {
  recorded_.configs_offered = 2;
  recorded_.plans_refused = 2;
  absl::StatusOr<std::unique_ptr<SdpaGraph>> g = SdpaGraph::Build(api_, nullptr, D20(false));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string m(g.status().message());
  EXPECT_NE(m.find("cuDNN sdpa_fwd [B=4, T=2048, H=10, Hkv=10, D=128, causal]: cuDNN has no engine"), std::string::npos)
      << m;
  EXPECT_NE(m.find("CUDNN_STATUS_NOT_SUPPORTED"), std::string::npos) << m;
}

TEST_F(SdpaGraphTest, TheGqaBackwardIsRefusedClearly) {
  absl::StatusOr<std::unique_ptr<SdpaGraph>> g = SdpaGraph::Build(api_, nullptr, D20(true, /*hkv=*/5));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(g.status().message()).find("H == Hkv only"), std::string::npos) << g.status();
}

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
