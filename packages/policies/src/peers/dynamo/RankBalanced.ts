/**
 * Dynamo's `RankBalancedCohortAdmissionPolicy` as a pure admission state machine: queued requests
 * are deferred until one worker can take one of them on every DP rank `[0, cohortSize)`, then
 * released together as a cohort. Upstream: ai-dynamo/dynamo
 * `lib/kv-router/src/scheduling/queue_admission/rank_balanced.rs` @
 * 35720b270cabe4f5b06e5cf70085dab89aacff83 (`WorkerEligibilitySnapshot` from `mod.rs`).
 * Implemented from the behaviour, not copied. Not a registry `Policy`: fixtures/reference/peers/README-dynamo.md §6.
 *
 * @since 0.8.0
 */
import { byCodePoint } from "../internal/codePointOrder.js"
import { findCohort } from "./internal/cohortMatch.js"
import type {
  DynamoAdmissionAction,
  DynamoAdmissionDecision,
  DynamoAdmissionError,
  DynamoAdmissionRequest,
  DynamoRankBalancedState,
  DynamoPendingAdmission as Pending,
  DynamoPendingPopulation as Population
} from "./RankBalancedTypes.js"

const MAX_ACTIVE = 4096
const RETAIN = 4096
const err = (message: string, field?: string): DynamoAdmissionError => ({
  _tag: "DynamoAdmissionError",
  message,
  field
})
const hex16 = (n: number) => BigInt(n).toString(16).padStart(16, "0")

/**
 * Create the policy (`new_with_population_mode`). `cohortSize` must be an integer > 1 (upstream
 * "rank-balanced cohort size must be greater than one"); `namespace` a non-negative safe integer
 * (it names the cohorts). `explicitPopulationOnly` (default false): requests without a population
 * bypass.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const s = Dynamo.dynamoRankBalancedInit(4, 7)
 * "cohortSize" in s && s.cohortSize // => 4
 * const bad = Dynamo.dynamoRankBalancedInit(1, 7)
 * "_tag" in bad && bad.field // => "cohortSize"
 * ```
 *
 * @category dynamo
 * @since 0.8.0
 */
export const dynamoRankBalancedInit = (
  cohortSize: number,
  namespace: number,
  explicitPopulationOnly = false
): DynamoRankBalancedState | DynamoAdmissionError => {
  if (!Number.isSafeInteger(cohortSize) || cohortSize <= 1)
    return err("rank-balanced cohort size must be greater than one", "cohortSize")
  if (!Number.isSafeInteger(namespace) || namespace < 0)
    return err("namespace must be a non-negative integer", "namespace")
  return {
    cohortSize,
    namespace,
    explicitPopulationOnly,
    nextCohort: 0,
    unscoped: [],
    populations: new Map(),
    completed: new Map(),
    completedOrder: []
  }
}

/**
 * `admit`: without a population, a request bypasses when `explicitPopulationOnly` or `pinned`,
 * else joins the unscoped queue (`Defer`). With one: `Reject` when the population is completed,
 * when 4096 populations are open and this one is new, when its index is at or past a known final
 * count, or when the index was seen; else it joins the population's queue (`Defer`). Admission
 * never releases anything; the next event does ({@link dynamoRankBalancedEvent}).
 *
 * Errors: a non-integer id or index, or an empty population id, is a `DynamoAdmissionError`.
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * const s = Dynamo.dynamoRankBalancedInit(2, 7) as Dynamo.DynamoRankBalancedState
 * const all = [{ workerId: 11, dpRank: 0 }, { workerId: 11, dpRank: 1 }]
 * const a = Dynamo.dynamoRankBalancedAdmit(s, { id: 0, eligible: all })
 * "decision" in a && a.decision // => "Defer"
 * const b = Dynamo.dynamoRankBalancedAdmit(s, { id: 1, eligible: all, pinned: all[0] })
 * "decision" in b && b.decision // => "Bypass"
 * ```
 *
 * @category dynamo
 * @since 0.8.0
 */
export const dynamoRankBalancedAdmit = (
  s: DynamoRankBalancedState,
  req: DynamoAdmissionRequest
): DynamoAdmissionDecision | DynamoAdmissionError => {
  if (!Number.isSafeInteger(req.id) || req.id < 0) return err("id must be a non-negative integer", "id")
  const entry: Pending = { id: req.id, eligible: req.eligible, pinned: req.pinned }
  const p = req.population
  if (p === undefined) {
    if (s.explicitPopulationOnly || req.pinned !== undefined) return { decision: "Bypass", state: s }
    return { decision: "Defer", state: { ...s, unscoped: [...s.unscoped, { ...entry, pinned: undefined }] } }
  }
  if (p.id === "") return err("admission population id must not be empty", "population.id")
  if (!Number.isSafeInteger(p.index) || p.index < 0)
    return err("population index must be a non-negative integer", "population.index")
  const reject = (message: string): DynamoAdmissionDecision => ({ decision: "Reject", message, state: s })
  if (s.completed.has(p.id)) return reject(`admission population "${p.id}" is already complete`)
  const open = s.populations.get(p.id)
  if (open === undefined && s.populations.size >= MAX_ACTIVE)
    return reject(`rank-balanced admission reached its limit of ${MAX_ACTIVE} active populations`)
  const pop: Population = open ?? { finalCount: undefined, seen: new Set(), pending: [] }
  if (pop.finalCount !== undefined && p.index >= pop.finalCount)
    return reject(`admission population "${p.id}" index ${p.index} is outside its closed range`)
  if (pop.seen.has(p.index))
    return reject(`admission population "${p.id}" contains duplicate index ${p.index}`)
  const populations = new Map(s.populations)
  populations.set(p.id, { ...pop, seen: new Set([...pop.seen, p.index]), pending: [...pop.pending, entry] })
  return { decision: "Defer", state: { ...s, populations } }
}

/** `make_ready_cohorts`: cohorts formed from `queue` until none fits; returns the rest. */
const formCohorts = (s: DynamoRankBalancedState, queue: ReadonlyArray<Pending>, next: number) => {
  const actions: Array<DynamoAdmissionAction> = []
  let q = queue
  let n = next
  for (;;) {
    const found = findCohort(
      q.map((x) => x.eligible),
      s.cohortSize
    )
    if (found === undefined) break
    const id = `dynamo-router-rank-wave:${hex16(s.namespace)}:${hex16(n)}`
    n += 1
    found.requestOfRank.forEach((req, rank) => {
      actions.push({
        id: q[req]!.id,
        placement: { workerId: found.workerId, dpRank: rank },
        cohort: { id, size: s.cohortSize, index: rank }
      })
    })
    const taken = new Set(found.requestOfRank.map((i) => q[i]!.id))
    q = q.filter((x) => !taken.has(x.id))
  }
  return { actions, queue: q, next: n }
}

const isComplete = (p: Population): boolean => {
  if (p.finalCount === undefined || p.seen.size !== p.finalCount) return false
  for (let i = 0; i < p.finalCount; i++) if (!p.seen.has(i)) return false
  return true
}

/** `make_ready`: the unscoped queue, then each population in id order; complete ones release their tail. */
const makeReady = (s: DynamoRankBalancedState) => {
  const u = formCohorts(s, s.unscoped, s.nextCohort)
  const actions = [...u.actions]
  let next = u.next
  const populations = new Map(s.populations)
  const completed = new Map(s.completed)
  const completedOrder = [...s.completedOrder]
  for (const pid of [...s.populations.keys()].sort(byCodePoint)) {
    const pop = s.populations.get(pid)!
    const f = formCohorts(s, pop.pending, next)
    next = f.next
    actions.push(...f.actions)
    if (isComplete(pop)) {
      for (const x of f.queue) actions.push({ id: x.id, placement: x.pinned ?? "any" })
      populations.delete(pid)
      completed.set(pid, pop.finalCount!)
      completedOrder.push(pid)
      while (completedOrder.length > RETAIN) completed.delete(completedOrder.shift()!)
    } else populations.set(pid, { ...pop, pending: f.queue })
  }
  const state = { ...s, unscoped: u.queue, nextCohort: next, populations, completed, completedOrder }
  return { actions: actions as ReadonlyArray<DynamoAdmissionAction>, state }
}

/**
 * `on_event`: an `Aborted` event takes the request out of every queue (a population keeps its
 * index as seen); every event (`Reconcile`, `Aborted`) then forms what cohorts it can and releases
 * the tail of each complete population (its pinned placement or `"any"`, no cohort).
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * let s = Dynamo.dynamoRankBalancedInit(2, 7) as Dynamo.DynamoRankBalancedState
 * const all = [{ workerId: 11, dpRank: 0 }, { workerId: 11, dpRank: 1 }]
 * for (const id of [0, 1]) s = (Dynamo.dynamoRankBalancedAdmit(s, { id, eligible: all }) as { state: typeof s }).state
 * const out = Dynamo.dynamoRankBalancedEvent(s, { kind: "Reconcile" })
 * out.actions.map((a) => [a.id, a.cohort?.index]) // => [[1, 0], [0, 1]]
 * out.actions[0]!.cohort!.id // => "dynamo-router-rank-wave:0000000000000007:0000000000000000"
 * ```
 *
 * @category dynamo
 * @since 0.8.0
 */
export const dynamoRankBalancedEvent = (
  s: DynamoRankBalancedState,
  event: { readonly kind: "Reconcile" } | { readonly kind: "Aborted"; readonly id: number }
): { readonly actions: ReadonlyArray<DynamoAdmissionAction>; readonly state: DynamoRankBalancedState } => {
  if (event.kind !== "Aborted") return makeReady(s)
  const populations = new Map(
    [...s.populations].map(([k, p]) => [k, { ...p, pending: p.pending.filter((x) => x.id !== event.id) }])
  )
  return makeReady({ ...s, unscoped: s.unscoped.filter((x) => x.id !== event.id), populations })
}

/**
 * `close_population`: declare that population `id` has no member at or past `finalCount`.
 * Closing a completed population again at the same count releases nothing; at another count, or a
 * second close of an open one at another count, or a close below an index already seen, is an
 * upstream `Err` (a `DynamoAdmissionError` without `field`). A close may come before its members:
 * the tail is released only once every index below `finalCount` was admitted (or aborted).
 *
 * @example
 * ```ts
 * import { Dynamo } from "@loadledger/policies"
 * let s = Dynamo.dynamoRankBalancedInit(4, 7, true) as Dynamo.DynamoRankBalancedState
 * const all = [0, 1, 2, 3].map((dpRank) => ({ workerId: 11, dpRank }))
 * s = (Dynamo.dynamoRankBalancedAdmit(s, { id: 0, eligible: all, population: { id: "t", index: 0 } }) as { state: typeof s }).state
 * const out = Dynamo.dynamoRankBalancedClose(s, "t", 1)
 * "actions" in out && out.actions // => [{ id: 0, placement: "any" }]
 * ```
 *
 * @category dynamo
 * @since 0.8.0
 */
export const dynamoRankBalancedClose = (
  s: DynamoRankBalancedState,
  id: string,
  finalCount: number
):
  | { readonly actions: ReadonlyArray<DynamoAdmissionAction>; readonly state: DynamoRankBalancedState }
  | DynamoAdmissionError => {
  if (id === "") return err("admission population id must not be empty", "id")
  if (!Number.isSafeInteger(finalCount) || finalCount < 0)
    return err("finalCount must be a non-negative integer", "finalCount")
  const closedAt = (n: number) =>
    err(`admission population "${id}" was already closed at ${n}, not ${finalCount}`)
  const done = s.completed.get(id)
  if (done !== undefined) return done === finalCount ? { actions: [], state: s } : closedAt(done)
  const open = s.populations.get(id)
  if (open === undefined && s.populations.size >= MAX_ACTIVE)
    return err(`rank-balanced admission reached its limit of ${MAX_ACTIVE} active populations`)
  const pop: Population = open ?? { finalCount: undefined, seen: new Set(), pending: [] }
  if (pop.finalCount !== undefined)
    return pop.finalCount === finalCount ? makeReady(s) : closedAt(pop.finalCount)
  const beyond = [...pop.seen].sort((a, b) => a - b).find((i) => i >= finalCount)
  if (beyond !== undefined)
    return err(
      `admission population "${id}" already observed index ${beyond} outside close count ${finalCount}`
    )
  const populations = new Map(s.populations)
  populations.set(id, { ...pop, finalCount })
  return makeReady({ ...s, populations })
}
