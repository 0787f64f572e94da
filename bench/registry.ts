/**
 * The benchmarks `pnpm bench` runs, in order. Add one line per module.
 *
 * @since 0.1.0
 */
import type { Benchmark } from "./harness.js"
import { liveBench } from "./live.js"
import { ownPolicyBench, powerOfChoicesBench } from "./ownPolicies.js"
import { peerPolicyBench } from "./peers.js"
import { sglangPolicyBench } from "./sglangPolicies.js"
import { simBench } from "./sim.js"
import { simCellsBench } from "./simCells.js"
import { stepTimeBench } from "./step-time.js"
import { trtllmPolicyBench } from "./trtllm.js"
import { vllmPolicyBench } from "./vllm.js"

export const benchmarks: ReadonlyArray<Benchmark> = [
  sglangPolicyBench,
  vllmPolicyBench,
  ownPolicyBench,
  powerOfChoicesBench,
  peerPolicyBench,
  trtllmPolicyBench,
  simBench,
  simCellsBench,
  stepTimeBench,
  liveBench
]
