/**
 * The registry of every policy by name (`findPolicy`, `policyEntries`): the SGLang, vLLM, own and peer entries in one list, each with its engine, whether it reproduces upstream, a description and a `make(options)`.
 *
 * @since 0.1.0
 */
import { checkedEntries } from "./internal/checkedEntries.js"
import { ownPolicyEntries } from "./own/Entries.js"
import type { PolicyEntry } from "./PolicyEntry.js"
import { aibrixPolicyEntries } from "./peers/aibrix/Entries.js"
import { dynamoPolicyEntries } from "./peers/dynamo/Entries.js"
import { llmdPolicyEntries } from "./peers/llm-d/Entries.js"
import { productionStackPolicyEntries } from "./peers/production-stack/Entries.js"
import { smgPolicyEntries } from "./peers/smg/Entries.js"
import { vllmRouterPolicyEntries } from "./peers/vllm-router/Entries.js"
import { sglangPolicyEntries } from "./sglang/Entries.js"
import { trtllmPolicyEntries } from "./trtllm/Entries.js"
import { vllmPolicyEntries } from "./vllm/Entries.js"

// Each policy module adds its entries here (one line each); every `make` checks its options first.
const entries: ReadonlyArray<PolicyEntry> = checkedEntries([
  ...sglangPolicyEntries,
  ...vllmPolicyEntries,
  ...ownPolicyEntries,
  ...smgPolicyEntries,
  ...productionStackPolicyEntries,
  ...llmdPolicyEntries,
  ...dynamoPolicyEntries,
  ...aibrixPolicyEntries,
  ...vllmRouterPolicyEntries,
  ...trtllmPolicyEntries
])

/**
 * Every registered policy, reference policies first.
 *
 * @example
 * ```ts
 * import { policyEntries } from "@loadledger/policies"
 * const names = policyEntries().map((e) => e.name)
 * names.includes("total-tokens") && names.includes("vllm-kv-pressure") // => true
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const policyEntries = (): ReadonlyArray<PolicyEntry> =>
  [...entries].sort((a, b) => Number(b.reference) - Number(a.reference))

/**
 * Look a policy up by name; `undefined` when no policy has that name (the caller reports it,
 * listing `policyEntries()`).
 *
 * **When to use**: to pick a policy from a name given on a command line or in a config.
 *
 * @example
 * ```ts
 * import { findPolicy } from "@loadledger/policies"
 * findPolicy("total-requests")?.engine // => "sglang"
 * findPolicy("no-such-policy") // => undefined
 * ```
 *
 * @category registry
 * @since 0.1.0
 */
export const findPolicy = (name: string): PolicyEntry | undefined => entries.find((e) => e.name === name)
