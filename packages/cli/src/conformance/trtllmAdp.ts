/**
 * Replays `packages/policies/test/fixtures/trtllm/adp_router_cases.json` (TensorRT-LLM's ADP
 * router unit tests, ported) against `Trtllm.assignDefault` / `Trtllm.assignKvCacheAware`.
 *
 * @since 0.7.0
 */
import { Trtllm } from "@loadledger/policies"
import type { CaseResult, VectorFormat } from "./types.js"

type Obj = Record<string, unknown>
const isObj = (x: unknown): x is Obj => x !== null && typeof x === "object"

interface AdpCase {
  readonly id: string
  readonly router: string
  readonly states: ReadonlyArray<readonly [number, number]>
  readonly max_num_active_requests: number
  readonly requests: ReadonlyArray<Obj>
  readonly prefix_matches?: ReadonlyArray<Record<string, number>>
  readonly options?: Obj
  readonly expect: Obj
}

const assign = (c: AdpCase): Trtllm.AdpAssignment => {
  const states = c.states.map(([a, t], rank) => ({ rank, numActiveRequests: a, numActiveTokens: t }))
  const reqs: Array<Trtllm.AdpRequest> = c.requests.map((r) => {
    const n = r["num_tokens"] as number
    return {
      id: r["id"] as number,
      inputLength: n,
      attentionDpRank: r["target_dp_rank"] as number | undefined,
      attentionDpRelax: r["attention_dp_relax"] as boolean | undefined,
      tokenIds: Array.from({ length: n }, (_, i) => i)
    }
  })
  if (c.router === "default") return Trtllm.assignDefault(states, reqs, c.max_num_active_requests, false)
  if (c.router !== "kv-cache-aware") throw new Error(`unknown router ${c.router}`)
  const o = c.options ?? {}
  const matches = (c.prefix_matches ?? []).map(
    (m) => new Map(Object.entries(m).map(([k, v]) => [Number(k), v]))
  )
  return Trtllm.assignKvCacheAware(states, reqs, c.max_num_active_requests, matches, {
    loadBalanceWeight: (o["load_balance_weight"] as number | undefined) ?? 1,
    matchRateThreshold: (o["match_rate_threshold"] as number | undefined) ?? 0.1,
    fairShareMultiplier: (o["fair_share_multiplier"] as number | undefined) ?? 2
  }).assignment
}

/** The first upstream assertion the assignment fails, or undefined when all hold. */
const check = (c: AdpCase, a: Trtllm.AdpAssignment): string | undefined => {
  const e = c.expect
  const counts = a.assigned.map((x) => x.length)
  for (const [rank, ids] of Object.entries((e["assigned"] ?? {}) as Record<string, ReadonlyArray<number>>)) {
    const got = a.assigned[Number(rank)] ?? []
    if (JSON.stringify(got) !== JSON.stringify(ids))
      return `assigned[${rank}]: expected ${JSON.stringify(ids)}, got ${JSON.stringify(got)}`
  }
  for (const [rank, n] of Object.entries((e["counts"] ?? {}) as Record<string, number>))
    if (counts[Number(rank)] !== n)
      return `len(assigned[${rank}]): expected ${n}, got ${counts[Number(rank)]}`
  for (const [rank, ids] of Object.entries((e["contains"] ?? {}) as Record<string, ReadonlyArray<number>>))
    for (const id of ids)
      if (!(a.assigned[Number(rank)] ?? []).includes(id))
        return `assigned[${rank}]: expected to contain ${id}`
  const total = counts.reduce((s, x) => s + x, 0)
  if (e["total"] !== undefined && total !== e["total"]) return `total: expected ${e["total"]}, got ${total}`
  if (
    e["max_count_diff"] !== undefined &&
    Math.max(...counts) - Math.min(...counts) > (e["max_count_diff"] as number)
  )
    return `counts ${JSON.stringify(counts)} differ by more than ${e["max_count_diff"]}`
  for (const [x, y] of (e["at_least"] ?? []) as ReadonlyArray<readonly [number, number]>)
    if (counts[x]! < counts[y]!) return `len(assigned[${x}]) ${counts[x]} < len(assigned[${y}]) ${counts[y]}`
  if (
    e["expected_num_active_requests"] !== undefined &&
    a.expectedNumActiveRequests !== e["expected_num_active_requests"]
  )
    return `expected_num_active_requests: expected ${e["expected_num_active_requests"]}, got ${a.expectedNumActiveRequests}`
  return undefined
}

/**
 * The `loadledger-trtllm-adp-golden` format: one case per upstream test, its rank states, batch,
 * prefix matches and knobs, and what the test asserts (exact lists, counts, members, totals, the cap).
 *
 * @example
 * ```ts
 * import { trtllmAdp } from "./trtllmAdp.js"
 * const doc = { format: "loadledger-trtllm-adp-golden", cases: [
 *   { id: "one", router: "default", states: [[0, 0], [0, 0]], max_num_active_requests: 10,
 *     requests: [{ id: 1, num_tokens: 10 }], expect: { assigned: { "0": [1] } } }] }
 * trtllmAdp.detect(doc) // => true
 * trtllmAdp.run(doc) // => [{ id: "one", ok: true }]
 * ```
 *
 * @category conformance
 * @since 0.7.0
 */
export const trtllmAdp: VectorFormat = {
  name: "trtllm-adp",
  detect: (doc) =>
    isObj(doc) && doc["format"] === "loadledger-trtllm-adp-golden" && Array.isArray(doc["cases"]),
  run: (doc) =>
    ((doc as Obj)["cases"] as ReadonlyArray<AdpCase>).map((c): CaseResult => {
      try {
        const d = check(c, assign(c))
        return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
      } catch (e) {
        return { id: c.id, ok: false, firstDiff: `exception: ${e instanceof Error ? e.message : String(e)}` }
      }
    })
}
