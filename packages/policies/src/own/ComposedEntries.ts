/**
 * Registry entries for issue 16's building blocks: a scorer combination (`ledger-scored`), power of
 * two choices (`power-of-two-ledger`) and vLLM's balancer with the staleness and KV-admission
 * wrappers.
 *
 * @since 0.4.0
 */
import { erasePolicy as erase } from "../internal/erasePolicy.js"
import type { PolicyEntry } from "../PolicyEntry.js"
import { makeVllmLb } from "../vllm/VllmLbPolicy.js"
import { makePowerOfChoices } from "./PowerOfChoices.js"
import { makeScored } from "./Scored.js"
import { kvPressureGate, requests, tokens, uncachedPromptTokens } from "./Scorers.js"
import { withKvAdmission } from "./WithKvAdmission.js"
import { withStaleness } from "./WithStaleness.js"

/**
 * The composed policies' registry entries (`reference: false`). `clientCount` / `clientIndex` are
 * the front ends; `seed` feeds `power-of-two-ledger`'s draws.
 *
 * - `ledger-scored`: `makeScored` with `tokens` (weight 1) and `uncachedPromptTokens` (weight 0.5),
 *   both min-max normalised, ties by `requests`, the KV-pressure gate and KV feasibility: token
 *   balance first, a cached prefix pulls while its holder is within half the token spread.
 * - `power-of-two-ledger`: `makePowerOfChoices` with d = 2, `tokens`, ties by `requests`, the gate.
 * - `vllm-kv-pressure+kv-admission`: vLLM's balancer (upstream) behind `withKvAdmission`.
 * - `vllm-kv-pressure+staleness+kv-admission`: the same with `withStaleness` between them.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("power-of-two-ledger")!.make({ seed: 1 }).name // => "power-of-two-ledger"
 * findPolicy("vllm-kv-pressure+staleness+kv-admission")!.engine // => "vllm"
 * ```
 *
 * @category registry
 * @since 0.4.0
 */
export const composedPolicyEntries: ReadonlyArray<PolicyEntry> = [
  {
    name: "ledger-scored",
    engine: "any",
    reference: false,
    description:
      "Weighted normalised scorers on the in-flight ledger: tokens (1) + uncached prompt tokens (0.5), ties by requests, KV-pressure gate, KV-feasible, rotating ties",
    make: (o) =>
      erase(
        makeScored({
          name: "ledger-scored",
          scorers: [
            { scorer: tokens, weight: 1 },
            { scorer: uncachedPromptTokens, weight: 0.5 },
            { scorer: kvPressureGate(), weight: 0 }
          ],
          tieBreakers: [requests],
          clientCount: o.clientCount,
          clientIndex: o.clientIndex
        })
      )
  },
  {
    name: "power-of-two-ledger",
    engine: "any",
    reference: false,
    description:
      "Power of two choices on the in-flight ledger: the rotating cursor's rank and 2 seeded draws, lowest tokens then requests; O(1) per route (batched charges)",
    make: (o) =>
      erase(
        makePowerOfChoices({
          name: "power-of-two-ledger",
          choices: 2,
          scorers: [
            { scorer: tokens, weight: 1 },
            { scorer: kvPressureGate(), weight: 0 }
          ],
          tieBreakers: [requests],
          seed: o.seed,
          clientCount: o.clientCount,
          clientIndex: o.clientIndex
        })
      )
  },
  {
    name: "vllm-kv-pressure+kv-admission",
    engine: "vllm",
    reference: false,
    description:
      "vLLM's DP balancer (upstream) that never picks a rank whose free KV cannot hold the prompt while another's can",
    make: (o) =>
      erase(
        withKvAdmission(
          makeVllmLb({ clientCount: o.clientCount, clientIndex: o.clientIndex, unknownLosesTies: true }),
          {
            clientCount: o.clientCount
          }
        )
      )
  },
  {
    name: "vllm-kv-pressure+staleness+kv-admission",
    engine: "vllm",
    reference: false,
    description:
      "vLLM's DP balancer given speculative charges x front ends that survive coordinator broadcasts until a snapshot covers them, an in-flight floor, and KV admission",
    make: (o) =>
      erase(
        withKvAdmission(
          withStaleness(
            makeVllmLb({ clientCount: o.clientCount, clientIndex: o.clientIndex, unknownLosesTies: true }),
            {
              clientCount: o.clientCount
            }
          ),
          { clientCount: o.clientCount }
        )
      )
  }
]
