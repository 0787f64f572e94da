/**
 * The shapes of Dynamo's rank-balanced cohort admission (ai-dynamo/dynamo
 * `lib/kv-router/src/scheduling/queue_admission/rank_balanced.rs` @
 * 35720b270cabe4f5b06e5cf70085dab89aacff83): requests, releases, state, decisions and errors.
 *
 * @since 0.8.0
 */
/**
 * A `(worker_id, dp_rank)` pair (`WorkerWithDpRank`): `workerId` a worker, `dpRank` one of its ranks.
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoWorkerRank {
  readonly workerId: number
  readonly dpRank: number
}

/**
 * One request offered for admission: `id` (`AdmissionId`), `eligible` its structurally eligible
 * `(workerId, dpRank)` pairs, `pinned` an exact placement owned by the caller or the affinity
 * layer, `population` its place in a producer-owned population (`{ id, index }`).
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoAdmissionRequest {
  readonly id: number
  readonly eligible: ReadonlyArray<DynamoWorkerRank>
  readonly pinned?: DynamoWorkerRank | undefined
  readonly population?: { readonly id: string; readonly index: number } | undefined
}

/**
 * A release (`AdmissionAction::MakeReady`): the request `id`, its `placement` (an exact pair, or
 * `"any"`) and its `cohort` (`{ id, size, index }`, `index` = the rank), absent for a closed
 * population's residual tail.
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoAdmissionAction {
  readonly id: number
  readonly placement: DynamoWorkerRank | "any"
  readonly cohort?: { readonly id: string; readonly size: number; readonly index: number } | undefined
}

/**
 * A deferred request in a queue: its id, eligibility and pinned placement (population members only).
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoPendingAdmission {
  readonly id: number
  readonly eligible: ReadonlyArray<DynamoWorkerRank>
  readonly pinned: DynamoWorkerRank | undefined
}

/**
 * An open population: its final count once closed, the indices seen (aborted ones included) and
 * its deferred members in arrival order.
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoPendingPopulation {
  readonly finalCount: number | undefined
  readonly seen: ReadonlySet<number>
  readonly pending: ReadonlyArray<DynamoPendingAdmission>
}

/**
 * State of the policy (immutable): its configuration, the next cohort number, the unscoped queue,
 * the open populations and the completed ones (the last 4096, with their final counts).
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoRankBalancedState {
  readonly cohortSize: number
  readonly namespace: number
  readonly explicitPopulationOnly: boolean
  readonly nextCohort: number
  readonly unscoped: ReadonlyArray<DynamoPendingAdmission>
  readonly populations: ReadonlyMap<string, DynamoPendingPopulation>
  readonly completed: ReadonlyMap<string, number>
  readonly completedOrder: ReadonlyArray<string>
}

/**
 * A refused input (`field` names it) or an upstream `Err(String)` (`field` absent).
 *
 * @category dynamo
 * @since 0.8.0
 */
export interface DynamoAdmissionError {
  readonly _tag: "DynamoAdmissionError"
  readonly message: string
  readonly field?: string | undefined
}

/**
 * What `admit` answered: `Bypass` (the request is not this policy's: route it as usual), `Defer`
 * (queued until a cohort forms or its population closes) or `Reject` with upstream's message.
 *
 * @category dynamo
 * @since 0.8.0
 */
export type DynamoAdmissionDecision =
  | { readonly decision: "Bypass" | "Defer"; readonly state: DynamoRankBalancedState }
  | { readonly decision: "Reject"; readonly message: string; readonly state: DynamoRankBalancedState }
