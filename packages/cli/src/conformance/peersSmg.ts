/**
 * The conformance vector format of SGLang model gateway (SMG) policies, replayed against `Smg`.
 *
 * Over 300 lines: one vector format; most of it is the per-policy case adapters of SMG's vectors (one small function each), which read best side by side.
 *
 * @since 0.1.0
 */
import { Smg } from "@loadledger/policies"
import { diffExpect } from "./diff.js"
import { isPeerDoc, type PeerCase, runCases } from "./peerVectors.js"
import type { VectorFormat } from "./types.js"

type J = Record<string, unknown>

const report = (r: J): Smg.SmgLoadReport => ({
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

interface Policy {
  update(poll: Smg.SmgPoll): void
  route(step: J, workers: ReadonlyArray<Smg.SmgWorker>): { out: Smg.SmgResult<unknown>; actual: J }
}

const byIds = (ids: ReadonlyArray<string>, idx: ReadonlyArray<number>, vals: ReadonlyArray<unknown>): J =>
  Object.fromEntries(idx.map((i, k) => [ids[i]!, vals[k]]))

const makePolicy = (c: PeerCase, ids: ReadonlyArray<string>, urls: ReadonlyArray<string>): Policy => {
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
          const out = Smg.smgPrefixHashSelect(ws, req(step).token_ids as ReadonlyArray<number> | undefined, {
            prefixTokenCount: cfg.prefix_token_count as number | undefined,
            loadFactor: cfg.load_factor as number | undefined,
            hashRing: cfg.hash_ring as boolean | undefined
          })
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

const runDpMinToken = (
  c: PeerCase,
  ids: ReadonlyArray<string>,
  urls: ReadonlyArray<string>
): string | undefined => {
  const initial = new Map<string, Smg.SmgLoadReport | null>()
  c.workers.forEach((w, i) => {
    const lr = (w.load as J).load_report
    if (lr !== undefined) initial.set(urls[i]!, lr === null ? null : report(lr as J))
  })
  let s = Smg.smgDpMinTokenUpdate({ dpCachedLoads: new Map() }, initial)
  for (let k = 0; k < c.steps.length; k++) {
    const step = c.steps[k]!
    if (step.op === "update") {
      const lr = (step.load_reports ?? {}) as Record<string, J | null>
      s = Smg.smgDpMinTokenUpdate(
        s,
        new Map(Object.entries(lr).map(([id, r]) => [urls[ids.indexOf(id)]!, r === null ? null : report(r)]))
      )
      continue
    }
    const r = (step.request ?? {}) as J
    const url = urls[ids.indexOf(r.target_worker as string)]!
    const cost = Smg.smgDpEstimatedCost(r.text as string | undefined)
    const out = Smg.smgDpMinTokenSelect(s, url, cost)
    s = out.state
    const m = s.dpCachedLoads.get(url)
    const actual = {
      dp_rank: out.dpRank ?? null,
      estimated_cost: cost,
      dp_cached_loads_after:
        m === undefined ? {} : Object.fromEntries([...m].map(([rk, v]) => [String(rk), v]))
    }
    const d = diffExpect(step.expect as J, actual, `step ${k} (route)`)
    if (d !== undefined) return d
  }
  return undefined
}

const runCase = (c: PeerCase): string | undefined => {
  const ids = c.workers.map((w) => w.id as string)
  const urls = c.workers.map((w) => w.url as string)
  if (c.policy === "smg/dp_min_token") return runDpMinToken(c, ids, urls)
  let workers: Array<Smg.SmgWorker> = c.workers.map((w) => {
    const l = w.load as J
    return {
      url: w.url as string,
      healthy: w.healthy as boolean,
      load: l.load as number,
      processedRequests: l.processed_requests as number,
      circuitBreakerCanExecute: l.circuit_breaker_can_execute as boolean
    }
  })
  const guard = c.config.router_load_guard !== false
  const policy = makePolicy(c, ids, urls)
  const initial = new Map<string, Smg.SmgLoadReport | null>()
  c.workers.forEach((w, i) => {
    const lr = (w.load as J).load_report
    if (lr !== undefined && lr !== null) initial.set(urls[i]!, report(lr as J))
  })
  if (initial.size > 0) policy.update(initial)
  const routed: Array<number | undefined> = []
  for (let k = 0; k < c.steps.length; k++) {
    const step = c.steps[k]!
    if (step.op === "update") {
      for (const u of (step.workers ?? []) as ReadonlyArray<J>) {
        const i = ids.indexOf(u.id as string)
        const l = (u.load ?? {}) as J
        const w = workers[i]!
        workers[i] = {
          ...w,
          healthy: (u.healthy as boolean | undefined) ?? w.healthy,
          load: (l.load as number | undefined) ?? w.load,
          processedRequests: (l.processed_requests as number | undefined) ?? w.processedRequests,
          circuitBreakerCanExecute:
            (l.circuit_breaker_can_execute as boolean | undefined) ?? w.circuitBreakerCanExecute
        }
      }
      const lr = step.load_reports as Record<string, J | null> | undefined
      if (lr !== undefined)
        policy.update(
          new Map(
            Object.entries(lr).map(([id, r]) => [urls[ids.indexOf(id)]!, r === null ? null : report(r)])
          )
        )
      continue
    }
    if (step.op === "finish") {
      const i = ids.indexOf(step.worker as string)
      workers[i] = { ...workers[i]!, load: workers[i]!.load - 1 }
      continue
    }
    const { out, actual } = policy.route(step, workers)
    if (out._tag !== "SmgSelected") return `step ${k} (route): ${out.message}`
    const idx = out.index
    routed.push(idx)
    if (idx !== undefined) {
      const w = workers[idx]!
      workers = workers.slice()
      workers[idx] = {
        ...w,
        load: w.load + (guard ? 1 : 0),
        processedRequests: w.processedRequests + (out.processed ? 1 : 0)
      }
    }
    const d = diffExpect(
      step.expect as J,
      { ...actual, worker: idx === undefined ? null : ids[idx] },
      `step ${k} (route)`
    )
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * The SMG (SGLang model gateway) peer golden vectors (`system: "smg"`): every case replays the
 * `Smg.*` cores of `@loadledger/policies` with the harness of `fixtures/reference/peers/README-smg.md`
 * (router load guard, `finish`, health/load updates, load polls).
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { peersSmg } from "./peersSmg.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/peers/smg.json", "utf8"))
 * peersSmg.name // => "loadledger-peer-policy-golden/smg"
 * peersSmg.detect(doc) // => true
 * const results = peersSmg.run(doc)
 * results.length // => 136
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.2.0
 */
export const peersSmg: VectorFormat = {
  name: "loadledger-peer-policy-golden/smg",
  detect: (doc) => isPeerDoc(doc, "smg"),
  run: (doc) => runCases(doc, runCase)
}
