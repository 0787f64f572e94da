/**
 * The per-policy case adapters of SMG's golden vectors (one small adapter per policy, read best
 * side by side): how each `Smg.*` core is called and which of its outputs a step's `expect` checks.
 * The harness that drives them is `peersSmg.ts`.
 *
 * @since 0.2.0
 */
import { Smg } from "@loadledger/policies"
import type { PeerCase } from "./peerVectors.js"

/**
 * A JSON object of a vector file, read field by field.
 *
 * @category conformance
 * @since 0.2.0
 */
export type J = Record<string, unknown>

/**
 * An SMG `/v1/loads` report of a vector file (snake_case, as upstream serialises it) as `Smg`'s
 * `SmgLoadReport`.
 *
 * @example
 * ```ts
 * import { smgReport } from "./peersSmgAdapters.js"
 * const r = smgReport({ dp_rank_count: 1, loads: [{ dp_rank: 0, num_running_reqs: 2, num_waiting_reqs: 1 }] })
 * r.dpRankCount // => 1
 * r.loads[0]?.numWaitingReqs // => 1
 * ```
 *
 * @category conformance
 * @since 0.2.0
 */
export const smgReport = (r: J): Smg.SmgLoadReport => ({
  dpRankCount: r.dp_rank_count as number,
  loads: (r.loads as ReadonlyArray<J>).map((l) => ({
    dpRank: l.dp_rank as number,
    numRunningReqs: l.num_running_reqs as number,
    numWaitingReqs: l.num_waiting_reqs as number,
    numWaitingUncachedTokens: l.num_waiting_uncached_tokens as number,
    numTotalReqs: l.num_total_reqs as number,
    numUsedTokens: l.num_used_tokens as number,
    maxTotalNumTokens: l.max_total_num_tokens as number,
    tokenUsage: l.token_usage as number,
    genThroughput: l.gen_throughput as number,
    cacheHitRate: l.cache_hit_rate as number,
    utilization: l.utilization as number,
    maxRunningRequests: l.max_running_requests as number
  }))
})

/**
 * One SMG policy as a vector case drives it: `update` with a load poll, `route` one step over the
 * current workers, giving the core's result and the fields the step's `expect` is compared with.
 *
 * @category conformance
 * @since 0.2.0
 */
export interface SmgCaseAdapter {
  update(poll: Smg.SmgPoll): void
  route(step: J, workers: ReadonlyArray<Smg.SmgWorker>): { out: Smg.SmgResult<unknown>; actual: J }
}

const byIds = (ids: ReadonlyArray<string>, idx: ReadonlyArray<number>, vals: ReadonlyArray<unknown>): J =>
  Object.fromEntries(idx.map((i, k) => [ids[i]!, vals[k]]))

/**
 * The adapter of case `c`'s policy (`smg/round_robin`, `smg/random`, ...; worker `ids` and `urls`
 * in case order): each calls the matching `Smg.*` core and keeps its state between steps. An
 * unknown policy name throws (the vector file is at fault, not the policy).
 *
 * @example
 * ```ts
 * import { smgCaseAdapter } from "./peersSmgAdapters.js"
 * const p = smgCaseAdapter({ id: "c", policy: "smg/round_robin", config: {}, workers: [], steps: [] }, [], [])
 * const w = { url: "http://a", healthy: true, load: 0, processedRequests: 0, circuitBreakerCanExecute: true }
 * p.route({}, [w, { ...w, url: "http://b" }]).actual // => { counter_after: 1 }
 * ```
 *
 * @category conformance
 * @since 0.2.0
 */
export const smgCaseAdapter = (
  c: PeerCase,
  ids: ReadonlyArray<string>,
  urls: ReadonlyArray<string>
): SmgCaseAdapter => {
  const cfg = c.config
  const urlId = (u: string) => ids[urls.indexOf(u)]!
  const draws = (step: J) => (step.random as ReadonlyArray<number> | undefined) ?? []
  const req = (step: J) => (step.request ?? {}) as J
  switch (c.policy) {
    case "smg/round_robin": {
      let s: Smg.SmgRoundRobinState = { counter: 0 }
      return {
        update: () => {},
        route: (_step, ws) => {
          const out = Smg.smgRoundRobinSelect(s, ws)
          s = out.state
          return { out, actual: { counter_after: s.counter } }
        }
      }
    }
    case "smg/random":
      return {
        update: () => {},
        route: (step, ws) => ({ out: Smg.smgRandomSelect(ws, draws(step)), actual: {} })
      }
    case "smg/power_of_two": {
      let s: Smg.SmgPowerOfTwoState = { reports: new Map() }
      return {
        update: (p) => {
          s = Smg.smgPowerOfTwoUpdate(s, p)
        },
        route: (step, ws) => {
          const out = Smg.smgPowerOfTwoSelect(s, ws, draws(step))
          if (out._tag !== "SmgSelected" || out.details.candidates === undefined) return { out, actual: {} }
          const cand = out.details.candidates as ReadonlyArray<number>
          return {
            out,
            actual: {
              candidates: cand.map((i) => ids[i]),
              metric: out.details.metric,
              scores: byIds(ids, cand, out.details.scores as ReadonlyArray<number>)
            }
          }
        }
      }
    }
    case "smg/least_load": {
      let s: Smg.SmgLeastLoadState = { cached: new Map(), inflight: new Map() }
      const config = { kvPressureWeight: cfg.kv_pressure_weight as number | undefined }
      return {
        update: (p) => {
          s = Smg.smgLeastLoadUpdate(s, p)
        },
        route: (step, ws) => {
          const r = req(step)
          const out = Smg.smgLeastLoadSelect(s, ws, r.input_tokens as number | undefined, config)
          s = out.state
          const h = (out.details.healthy as ReadonlyArray<number> | undefined) ?? []
          return {
            out,
            actual: {
              scores: byIds(ids, h, (out.details.scores as ReadonlyArray<number> | undefined) ?? []),
              inflight_tokens_after: Object.fromEntries([...s.inflight].map(([u, v]) => [urlId(u), v]))
            }
          }
        }
      }
    }
    case "smg/cache_aware": {
      let s: Smg.SmgCacheAwareState | undefined
      let pending = new Map<string, Smg.SmgLoadReport>()
      const config: Smg.SmgCacheAwareConfig = {
        cacheThreshold: cfg.cache_threshold as number | undefined,
        balanceAbsThreshold: cfg.balance_abs_threshold as number | null | undefined,
        balanceRelThreshold: cfg.balance_rel_threshold as number | undefined,
        balanceTokenUsageThreshold: cfg.balance_token_usage_threshold as number | undefined,
        overloadTokenUsageThreshold: cfg.overload_token_usage_threshold as number | undefined
      }
      return {
        update: (p) => {
          pending = new Map(pending)
          for (const [u, r] of p)
            if (r === null) pending.delete(u)
            else pending.set(u, r)
          s = s === undefined ? Smg.smgCacheAwareInit(urls, pending) : { ...s, reports: pending }
        },
        route: (step, ws) => {
          s ??= Smg.smgCacheAwareInit(urls, pending)
          const out = Smg.smgCacheAwareSelect(s, ws, req(step).text as string | undefined, config)
          s = out.state
          const d = out.details
          return {
            out,
            actual: {
              branch: d.branch,
              matched_char_count: d.matchedCharCount,
              input_char_count: d.inputCharCount,
              imbalance_trigger: d.imbalanceTrigger
            }
          }
        }
      }
    }
    case "smg/prefix_hash":
      return {
        update: () => {},
        route: (step, ws) => {
          // a case without `version` is of smg.json (lightseekorg/smg 73da68ca, as released in v1.9.0)
          const out = Smg.smgPrefixHashSelect(
            ws,
            req(step).token_ids as ReadonlyArray<number> | undefined,
            {
              prefixTokenCount: cfg.prefix_token_count as number | undefined,
              loadFactor: cfg.load_factor as number | undefined,
              hashRing: cfg.hash_ring as boolean | undefined,
              version: (cfg.version as "f8daa883" | undefined) ?? "v1.9.0",
              balanceAbsThreshold: cfg.balance_abs_threshold as number | undefined
            },
            req(step).routing_key as string | undefined
          )
          const ri = out.details.ringInitial as number | undefined
          return {
            out,
            actual: {
              branch: out.details.branch,
              prefix_hash_key: out.details.prefixHashKey,
              ring_initial: ri === undefined ? undefined : ids[ri]
            }
          }
        }
      }
    case "smg/consistent_hashing":
      return {
        update: () => {},
        route: (step, ws) => {
          const out = Smg.smgConsistentHashingSelect(
            ws,
            (req(step).headers as Record<string, string> | undefined) ?? {},
            draws(step)
          )
          return out._tag === "SmgSelected"
            ? { out, actual: { branch: out.details.branch, key: out.details.key } }
            : { out, actual: {} }
        }
      }
    default:
      throw new Error(`unknown policy ${c.policy}`)
  }
}
