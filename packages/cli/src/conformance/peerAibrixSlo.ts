/**
 * Replays the AIBrix SLO cases (fixtures/reference/peers/aibrix-slo.json, policies `aibrix/slo*`)
 * against the `Aibrix` SLO cores.
 *
 * @since 0.8.0
 */
import { Aibrix } from "@loadledger/policies"
import { firstDiff } from "./diff.js"
import type { PeerCase } from "./peerVectors.js"

type Obj = Record<string, unknown>

const num = (x: unknown): number | undefined => (typeof x === "number" ? x : undefined)
const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined)

/** A case with `config.load_provider: "explicit"`: one load-router call over given answers. */
const runExplicit = (c: PeerCase, router: Aibrix.AibrixLoadRouter): string | undefined => {
  const pods = c.workers.map((w): Aibrix.AibrixLoadPod => {
    const l = (w["load"] ?? {}) as Obj
    return {
      ready: l["no_ip"] === true ? false : undefined,
      utilization: num(l["utilization"]),
      utilizationError: str(l["utilization_error"]),
      consumption: num(l["consumption"]),
      consumptionError: str(l["consumption_error"])
    }
  })
  const cap = num(c.config["cap"]) ?? 1
  for (let k = 0; k < c.steps.length; k++) {
    const r = Aibrix.aibrixLoadRoute(router, pods, cap)
    const actual =
      r._tag === "AibrixLoadPicked" ? { worker: c.workers[r.index]!.id } : { worker: null, error: r.error }
    const d = firstDiff(c.steps[k]!["expect"], actual, `step ${k}`)
    if (d !== undefined) return d
  }
  return undefined
}

/**
 * One `aibrix/slo*` case: `explicit` load-router cases, `signature` steps over the first profile,
 * or a gateway replay (`route` / `finish`) with the running count and pending load tracked as
 * `addPodStats` / `donePodStats` do.
 *
 * @example
 * ```ts
 * import { runAibrixSloCase } from "./peerAibrixSlo.js"
 * const c = {
 *   id: "x", policy: "aibrix/slo-least-load", config: { load_provider: "explicit", cap: 1 },
 *   workers: [{ id: "a", load: { utilization: 0.2 } }, { id: "b", load: { utilization: 0.1 } }],
 *   steps: [{ op: "route", expect: { worker: "b" } }]
 * }
 * runAibrixSloCase(c) // => undefined
 * ```
 *
 * @since 0.8.0
 */
export const runAibrixSloCase = (c: PeerCase): string | undefined => {
  const strategy = c.policy.slice("aibrix/".length)
  const backend = Aibrix.aibrixSloBackend(strategy)
  if (backend === undefined) return `unknown SLO strategy ${strategy}`
  if (c.config["load_provider"] === "explicit") return runExplicit(c, backend)
  const profiles = (c.config["profiles"] ?? []) as ReadonlyArray<Aibrix.AibrixGpuProfile>
  const tracking = c.config["gateway_request_tracking"] !== false
  const pods = c.workers.map((w) => {
    const l = (w["load"] ?? {}) as Obj
    return {
      id: w.id,
      healthy: w["healthy"] !== false,
      deployment: str(w["deployment"]) ?? "",
      running: num(l["realtime_num_requests_running"]) ?? 0,
      pendings: num(l["realtime_normalized_pendings"]) ?? 0
    }
  })
  const charged: Array<number | undefined> = []
  for (let k = 0; k < c.steps.length; k++) {
    const st = c.steps[k]!
    let actual: Obj
    if (st.op === "signature") {
      const p = profiles[0]!
      const sig = Aibrix.aibrixProfileSignature(p, st["features"] as ReadonlyArray<number>)
      actual = Array.isArray(sig) ? { signature: sig } : { error: true }
      if ((st["expect"] as Obj)["log2_indexes"] !== undefined)
        actual["log2_indexes"] = p.indexes.map((r) => r.map((v) => Math.log2(v)))
    } else if (st.op === "finish") {
      const p = pods.find((x) => x.id === st["worker"])!
      const pending = charged[st["request_index"] as number]
      if (tracking) {
        p.running -= 1
        if (pending !== undefined && pending !== 0) p.pendings = p.pendings - pending
      }
      continue
    } else if (st.op === "route") {
      const req = (st["request"] ?? {}) as Obj
      const algo = str(req["algorithm"])
      const b = algo === undefined ? backend : Aibrix.aibrixSloBackend(algo.slice("aibrix/".length))!
      const ready = pods.filter((p) => p.healthy)
      const r = Aibrix.routeAibrixSlo(
        b,
        ready,
        profiles,
        {
          promptTokens: num(req["prompt_tokens"]) ?? 0,
          outputTokens: num(req["output_tokens"]) ?? 1,
          elapsedSeconds: num(req["elapsed_seconds"])
        },
        (st["random"] ?? []) as ReadonlyArray<number>
      )
      if (r._tag === "AibrixSloRouted") {
        const pod = ready[r.index]!
        charged.push(r.consumption)
        if (tracking) {
          pod.running += 1
          if (r.consumption !== undefined) pod.pendings = pod.pendings + r.consumption
        }
        actual = { worker: pod.id, path: r.path }
        if (r.consumption !== undefined) actual["consumption"] = r.consumption
        if (r.path === "slo") actual["ranks"] = r.ranks
        actual["pendings"] = Object.fromEntries(pods.map((p) => [p.id, p.pendings]))
      } else {
        charged.push(undefined)
        actual = r._tag === "AibrixSloHeld" ? { worker: null, held: true } : { worker: null, error: r.error }
      }
    } else return `step ${k}: unknown op ${st.op}`
    const d = firstDiff(st["expect"], actual, `step ${k}`)
    if (d !== undefined) return d
  }
  return undefined
}
