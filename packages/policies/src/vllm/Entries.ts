/**
 * The registry entries of vLLM's data-parallel balancer (`vllm-kv-pressure`, and the same with the KV-saturation guard).
 *
 * @since 0.1.0
 */
import { erasePolicy as erase } from "../internal/erasePolicy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { makeVllmPowerOfTwo } from "./PowerOfTwo.js"
import { makeVllmFixedStart, makeVllmPrefixAffinity } from "./PrefixAffinity.js"
import { makeVllmLb } from "./VllmLbPolicy.js"

/**
 * Registry entries for vLLM's DP balancer: `vllm-kv-pressure` (`reference: true`, upstream
 * `DPLBAsyncMPClient` exactly) and `vllm-kv-pressure-kv-guard` (`reference: false`, the same plus the
 * beyond-upstream KV-saturation guard of fault case S07, and a known load winning a tie against an
 * unknown one, `unknownLosesTies`). Both read `clientCount` / `clientIndex`
 * (API-server processes and this one's index; defaults 1 and 0).
 *
 * **When to use**: pick the vLLM balancer by name (CLI `--policy`, simulator, live router) via `findPolicy`.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * const p = findPolicy("vllm-kv-pressure")!.make({ clientCount: 2, clientIndex: 1 })
 * p.name // => "vllm-kv-pressure"
 * // client 1 of 2 on 4 engines starts its scan at floor(4 * 1 / 2) = 2
 * const r = p.route(p.init(4), { requestId: "a", inputLength: 1 }, 0)
 * r._tag === "Routed" && r.rank // => 2
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const vllmPolicyEntries: ReadonlyArray<PolicyEntry> = [
  {
    name: "vllm-kv-pressure",
    engine: "vllm",
    reference: true,
    description:
      "vLLM DPLBAsyncMPClient: max(C*inflight, waiting+running) + KV penalty on waiting, rotating start, local bump (core_client.py)",
    make: (o) => erase(makeVllmLb({ clientCount: o.clientCount, clientIndex: o.clientIndex }))
  },
  {
    name: "vllm-kv-pressure-kv-guard",
    engine: "vllm",
    reference: false,
    description:
      "vllm-kv-pressure plus a guard: no rank with kv >= 0.99 and waiting requests while some rank has kv < 0.9, nor one whose free KV cannot hold the prompt while another can",
    make: (o) =>
      erase(
        makeVllmLb({
          clientCount: o.clientCount,
          clientIndex: o.clientIndex,
          kvSaturationGuard: true,
          unknownLosesTies: true
        })
      )
  },
  {
    name: "vllm-prefix-affinity",
    engine: "vllm",
    reference: true,
    proposed: "vllm-project/vllm#52464",
    description:
      "vllm-kv-pressure, and a tie goes to the engine that last served the prompt's first KV block (LRU of 16k per front end; block size 256 as in issue #52463)",
    make: (o) =>
      erase(
        makeVllmPrefixAffinity({ clientCount: o.clientCount, clientIndex: o.clientIndex, blockSize: 256 })
      )
  },
  {
    name: "vllm-kv-pressure-fixed-start",
    engine: "vllm",
    reference: false,
    description:
      "vllm-kv-pressure with the fixed scan start of before #47420 (v0.23.0's tie-break; the score is the current one); a known load wins a tie against an unknown one",
    make: (o) =>
      erase(
        makeVllmFixedStart({ clientCount: o.clientCount, clientIndex: o.clientIndex, unknownLosesTies: true })
      )
  },
  {
    name: "vllm-power-of-two",
    engine: "vllm",
    reference: true,
    proposed: "vllm-project/vllm#43279",
    description:
      "vllm-kv-pressure up to 4 engines; above, the lower score of two distinct engines drawn uniformly, the first drawn on a tie (seeded draws)",
    make: (o) =>
      erase(makeVllmPowerOfTwo({ clientCount: o.clientCount, clientIndex: o.clientIndex, seed: o.seed }))
  }
]
