/**
 * Conformance format `sglang-dp-lb-golden` (`fixtures/reference/sglang/dp_lb_cases.json`): replays
 * every op of every case against `DpBudget` / `DpController` from `@loadledger/policies` and compares
 * each op's result keys and the full state after it.
 *
 * @since 0.1.0
 */
import {
  DpBudget,
  DpController,
  type PolicyError,
  type RankLoad,
  type RouteRequest
} from "@loadledger/policies"
import type { CaseResult, VectorFormat } from "./types.js"

type Json = Record<string, unknown>
const isObj = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x)
const methods: ReadonlyArray<string> = [
  "ROUND_ROBIN",
  "FOLLOW_BOOTSTRAP_ROOM",
  "TOTAL_REQUESTS",
  "TOTAL_TOKENS"
]

/** Upstream Python exception class for each `PolicyError` reason the controller returns. */
const pythonType = (e: PolicyError): string =>
  e.reason === "InvalidRoutedRank"
    ? "ValueError"
    : e.reason === "AllRanksUnavailable"
      ? "RuntimeError"
      : e.reason === "MissingBootstrapRoom"
        ? "AssertionError"
        : e.reason

const num = (x: unknown, field: string): number => {
  if (typeof x !== "number") throw new Error(`${field} is not a number`)
  return x
}
const optNum = (x: unknown, field: string): number | undefined =>
  x === undefined || x === null ? undefined : num(x, field)

const snapshot = (x: unknown, i: number): RankLoad => {
  if (!isObj(x)) throw new Error(`snapshot ${i} is not an object`)
  return {
    dpRank: num(x["dp_rank"], "dp_rank"),
    timestamp: num(x["timestamp"], "timestamp"),
    numRunningReqs: num(x["num_running_reqs"], "num_running_reqs"),
    numWaitingReqs: num(x["num_waiting_reqs"], "num_waiting_reqs"),
    numTotalTokens: num(x["num_total_tokens"], "num_total_tokens")
  }
}
const snapshots = (x: unknown): ReadonlyArray<RankLoad> => {
  if (!Array.isArray(x)) throw new Error("snapshot list is not an array")
  return x.map(snapshot)
}

const request = (x: Json, i: number): RouteRequest => {
  const room = x["bootstrap_room"]
  if (room !== undefined && room !== null && typeof room !== "string")
    throw new Error("bootstrap_room is not a string")
  return {
    requestId: String(i),
    inputLength: num(x["input_len"], "input_len"),
    routedDpRank: optNum(x["routed_dp_rank"], "routed_dp_rank"),
    bootstrapRoom: room ?? undefined
  }
}

const same = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]))
  return Object.is(a, b) || (a === 0 && b === 0)
}
const show = (x: unknown): string => JSON.stringify(x) ?? "absent"

/** The first differing field of `actual` against `expected` (only the keys `expected` has). */
const diff = (expected: Json, actual: Json): string | undefined => {
  for (const [k, v] of Object.entries(expected)) {
    if (k === "state" && isObj(v) && isObj(actual["state"])) {
      const d = diff(v, actual["state"])
      if (d !== undefined) return `state.${d}`
      continue
    }
    if (k === "error") {
      const want = isObj(v) ? v["type"] : undefined
      if (want !== actual["error"]) return `error.type expected ${show(want)}, got ${show(actual["error"])}`
      continue
    }
    if (!same(v, actual[k])) return `${k} expected ${show(v)}, got ${show(actual[k])}`
  }
  if (actual["error"] !== undefined && expected["error"] === undefined)
    return `error expected none, got ${show(actual["error"])}`
  return undefined
}

const stateJson = (s: DpController.DpControllerState): Json => ({
  total_requests: s.budget.totalRequests,
  total_tokens: s.budget.totalTokens,
  last_timestamp: s.budget.lastTimestamp,
  round_robin_counter: s.roundRobinCounter,
  last_refresh_time: s.lastRefreshTimeSeconds,
  status: s.status
})

interface Step {
  readonly state: DpController.DpControllerState
  readonly result: Json
}

const step = (s: DpController.DpControllerState, op: Json): Step => {
  switch (op["op"]) {
    case "update":
      return { state: { ...s, budget: DpBudget.update(s.budget, snapshots(op["loads"])) }, result: {} }
    case "dispatch": {
      const method = op["method"]
      if (typeof method !== "string" || !methods.includes(method)) throw new Error("unknown method")
      const d = DpBudget.dispatch(
        s.budget,
        method as DpBudget.LoadBalanceMethod,
        num(op["estimated_tokens"], "estimated_tokens")
      )
      return { state: { ...s, budget: d.budget }, result: { rank: d.rank ?? null } }
    }
    case "publish":
      return { state: DpController.publish(s, snapshots(op["snapshots"])), result: {} }
    case "refresh": {
      const r = DpController.refresh(s, num(op["now"], "now"))
      return { state: r.state, result: { refreshed: r.refreshed } }
    }
    case "set_status": {
      const st = op["status"]
      if (!Array.isArray(st) || !st.every((b) => typeof b === "boolean"))
        throw new Error("status is not bool[]")
      const r = DpController.setStatus(s, st)
      return { state: r.state, result: { applied: r.applied } }
    }
    case "request": {
      const r = DpController.dispatchRequest(s, request(op, 0), num(op["now"], "now"))
      return {
        state: r.state,
        result: {
          refreshed: r.refreshed ?? null,
          rank: r.rank ?? null,
          error: r.error === undefined ? undefined : pythonType(r.error)
        }
      }
    }
    case "batch": {
      const reqs = op["requests"]
      if (!Array.isArray(reqs) || !reqs.every(isObj)) throw new Error("requests is not an object[]")
      const r = DpController.dispatchBatch(s, reqs.map(request), num(op["now"], "now"))
      return {
        state: r.state,
        result: {
          refreshed: r.refreshed ?? null,
          ranks: r.ranks,
          error: r.error === undefined ? undefined : pythonType(r.error)
        }
      }
    }
    default:
      throw new Error(`unknown op ${show(op["op"])}`)
  }
}

const runCase = (c: unknown, index: number): CaseResult => {
  const id = isObj(c) && typeof c["id"] === "string" ? c["id"] : `case ${index}`
  if (!isObj(c)) return { id, ok: false, firstDiff: "malformed case: not an object" }
  const method = c["method"]
  const dpSize = c["dp_size"]
  const ops = c["ops"]
  if (typeof method !== "string" || !methods.includes(method))
    return { id, ok: false, firstDiff: `malformed case: method ${show(method)}` }
  if (typeof dpSize !== "number" || !Number.isInteger(dpSize) || dpSize < 1)
    return { id, ok: false, firstDiff: `malformed case: dp_size ${show(dpSize)}` }
  if (!Array.isArray(ops)) return { id, ok: false, firstDiff: "malformed case: ops is not an array" }
  let s = DpController.init(
    method as DpBudget.LoadBalanceMethod,
    dpSize,
    c["initial_shm"] === "writer_init" ? "writer_init" : "empty"
  )
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]
    const name = isObj(op) ? String(op["op"]) : "?"
    try {
      if (!isObj(op) || !isObj(op["expect"])) throw new Error("op or its expect is not an object")
      const out = step(s, op)
      s = out.state
      const d = diff(op["expect"], { ...out.result, state: stateJson(s) })
      if (d !== undefined) return { id, ok: false, firstDiff: `op ${i} (${name}): ${d}` }
    } catch (e) {
      return { id, ok: false, firstDiff: `op ${i} (${name}): ${e instanceof Error ? e.message : String(e)}` }
    }
  }
  return { id, ok: true }
}

/**
 * The `sglang-dp-lb-golden` vector format (SGLang DPBudget + DataParallelController decisions).
 *
 * @example
 * ```ts
 * import { sglangDpLb } from "./sglangDpLb.js"
 * sglangDpLb.detect({ format: "sglang-dp-lb-golden", cases: [] }) // => true
 * ```
 *
 * @since 0.1.0
 */
export const sglangDpLb: VectorFormat = {
  name: "sglang-dp-lb-golden",
  detect: (doc) => isObj(doc) && doc["format"] === "sglang-dp-lb-golden" && Array.isArray(doc["cases"]),
  run: (doc) => (isObj(doc) && Array.isArray(doc["cases"]) ? doc["cases"].map(runCase) : [])
}
