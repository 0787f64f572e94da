/**
 * The conformance vector format of vLLM's front-end balancer (`DPLBAsyncMPClient`), replayed op by op against `VllmLb`.
 *
 * @since 0.1.0
 */
import { type VllmEngineRow, VllmLb, type VllmLbState } from "@loadledger/policies"
import * as HashMap from "effect/HashMap"
import { firstDiff } from "./diff.js"
import type { CaseResult, VectorFormat } from "./types.js"

interface LbOp {
  readonly op: "route" | "coord" | "finish"
  readonly request_id?: string
  readonly data_parallel_rank?: number
  readonly counts?: ReadonlyArray<VllmEngineRow> | null
  readonly wave?: number
  readonly running?: boolean
  readonly request_ids?: ReadonlyArray<string>
}

interface LbCase {
  readonly id: string
  readonly num_engines: number
  readonly client_count: number
  readonly client_index: number
  readonly initial_eng_start_index: number
  readonly ops: ReadonlyArray<LbOp>
  readonly expected: ReadonlyArray<unknown>
  readonly final: unknown
}

const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object"

const waitingOf = (s: VllmLbState): Array<number> => s.lbEngines.map((r) => r[0])

const runCase = (c: LbCase): CaseResult => {
  const init = VllmLb.init(c.num_engines, { clientCount: c.client_count, clientIndex: c.client_index })
  if ("_tag" in init) return { id: c.id, ok: false, firstDiff: `init: ${init.message}` }
  const d0 = firstDiff(c.initial_eng_start_index, init.engStartIndex, "initial_eng_start_index")
  if (d0 !== undefined) return { id: c.id, ok: false, firstDiff: d0 }
  let s: VllmLbState = init
  for (let i = 0; i < c.ops.length; i++) {
    const op = c.ops[i]!
    let actual: unknown
    if (op.op === "route") {
      const r = VllmLb.route(s, op.request_id ?? "", op.data_parallel_rank)
      if ("_tag" in r) return { id: c.id, ok: false, firstDiff: `op ${i} (route): ${r.message}` }
      s = r.state
      actual = {
        chosen: r.chosen,
        start_index_used: r.startIndexUsed,
        scores: r.scores,
        request_wave: r.requestWave,
        first_req: r.firstReq,
        eng_start_index: s.engStartIndex,
        inflight: s.inflight,
        lb_waiting: waitingOf(s)
      }
    } else if (op.op === "coord") {
      const r = VllmLb.coord(s, op.counts ?? null, op.wave ?? 0, op.running ?? false)
      if ("_tag" in r) return { id: c.id, ok: false, firstDiff: `op ${i} (coord): ${r.message}` }
      s = r
      actual = { eng_start_index: s.engStartIndex, inflight: s.inflight, lb_waiting: waitingOf(s) }
    } else {
      const r = VllmLb.finish(s, op.request_ids ?? [])
      s = r.state
      actual = { decremented: r.decremented, inflight: s.inflight }
    }
    const d = firstDiff(c.expected[i], actual, `op ${i} (${op.op})`)
    if (d !== undefined) return { id: c.id, ok: false, firstDiff: d }
  }
  const final = {
    eng_start_index: s.engStartIndex,
    inflight: s.inflight,
    lb_engines: s.lbEngines,
    current_wave: s.currentWave,
    engines_running: s.enginesRunning,
    reqs_in_flight: Object.fromEntries(HashMap.toEntries(s.reqsInFlight))
  }
  const d = firstDiff(c.final, final, "final")
  return d === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, firstDiff: d }
}

/**
 * `lb_cases.json` from `fixtures/reference/vllm/`: vLLM's `DPLBAsyncMPClient` engine choice,
 * replayed op by op against `VllmLb.route` / `VllmLb.coord` / `VllmLb.finish`, comparing every
 * expected field and the final state.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { vllmLb } from "./vllmLb.js"
 * const doc = JSON.parse(readFileSync("fixtures/reference/vllm/lb_cases.json", "utf8"))
 * vllmLb.name // => "vllm-lb"
 * vllmLb.detect(doc) // => true
 * const results = vllmLb.run(doc)
 * results.length // => 170
 * results.filter((r) => !r.ok) // => []
 * ```
 *
 * @since 0.1.0
 */
export const vllmLb: VectorFormat = {
  name: "vllm-lb",
  detect: (doc) =>
    Array.isArray(doc) &&
    doc.length > 0 &&
    isObj(doc[0]) &&
    "num_engines" in doc[0] &&
    "ops" in doc[0] &&
    "initial_eng_start_index" in doc[0],
  run: (doc) => (doc as ReadonlyArray<LbCase>).map(runCase)
}
