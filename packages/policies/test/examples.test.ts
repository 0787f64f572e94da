// Every docstring @example of this package and its README Usage block run as tests (CONTRIBUTING.md).
import { describeDocExamples } from "../../../test-support/docExamples.js"

/**
 * Examples still written as `expr // value` (unchecked) instead of `expr // => value`: the runner
 * rejects them. Their docstrings are in packages/policies/src, which another change is editing
 * until 16:05 UTC; they are converted then and this list emptied. Each one must fail meanwhile.
 */
const PENDING_DOCSTRING_FIXES: ReadonlyArray<string> = [
  "src/sglang/DpBudget.ts empty",
  "src/sglang/DpBudget.ts filled",
  "src/sglang/DpBudget.ts update",
  "src/sglang/DpBudget.ts argminRequests",
  "src/sglang/DpBudget.ts argminTokens",
  "src/sglang/DpBudget.ts charge",
  "src/sglang/DpController.ts refresh",
  "src/sglang/DpController.ts setStatus",
  "src/sglang/DpController.ts refreshesOnDispatch",
  "src/sglang/DpController.ts dispatchBatch",
  "src/sglang/SglangPolicies.ts sglangPolicies",
  "src/vllm/VllmLbClient.ts vllmLbScore",
  "src/vllm/VllmLbClient.ts vllmLbFinish",
  "src/vllm/VllmWave.ts vllmWaveSnapshotProfile",
  "src/vllm/VllmWave.ts vllmWaveLaterProfile",
  "src/vllm/VllmWave.ts vllmWaveInit",
  "src/vllm/VllmWave.ts vllmDummyShare"
]

describeDocExamples(new URL("../", import.meta.url), { pending: PENDING_DOCSTRING_FIXES })
