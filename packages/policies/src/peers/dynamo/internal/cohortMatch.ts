/**
 * The cohort search of Dynamo's rank-balanced admission (`find_cohort`, `augment_matching` in
 * ai-dynamo/dynamo `lib/kv-router/src/scheduling/queue_admission/rank_balanced.rs` @ 35720b27):
 * for each candidate worker in ascending id, Kuhn's augmenting paths over the pending requests in
 * queue order; the first prefix that fills every rank `[0, size)` wins.
 *
 * @internal
 */

/** A `(worker_id, dp_rank)` pair. */
export interface WorkerRank {
  readonly workerId: number
  readonly dpRank: number
}

/** `rank -> request index` of a perfect matching on `workerId`, or `undefined`. */
export interface CohortFound {
  readonly workerId: number
  readonly requestOfRank: ReadonlyArray<number>
}

const augment = (
  req: number,
  allowed: ReadonlyArray<ReadonlyArray<boolean>>,
  seen: Array<boolean>,
  owner: Array<number | undefined>
): boolean => {
  for (let rank = 0; rank < owner.length; rank++) {
    if (!allowed[req]![rank] || seen[rank]) continue
    seen[rank] = true
    const prev = owner[rank]
    if (prev === undefined || augment(prev, allowed, seen, owner)) {
      owner[rank] = req
      return true
    }
  }
  return false
}

/**
 * `eligible[i]` = the structural eligibility of pending request `i` (queue order). Candidate
 * workers: every worker id with some eligible rank below `size`, ascending (`BTreeSet`). For each,
 * requests are added in order; after a successful augmentation that leaves no rank empty the
 * matching is returned (a failed augmentation leaves the matching unchanged and the scan goes on).
 */
export const findCohort = (
  eligible: ReadonlyArray<ReadonlyArray<WorkerRank>>,
  size: number
): CohortFound | undefined => {
  if (eligible.length < size) return undefined
  const sets = eligible.map((ws) => new Set(ws.map((w) => `${w.workerId}:${w.dpRank}`)))
  const candidates = [
    ...new Set(eligible.flatMap((ws) => ws.filter((w) => w.dpRank < size).map((w) => w.workerId)))
  ].sort((a, b) => a - b)
  for (const workerId of candidates) {
    const allowed = sets.map((s) => Array.from({ length: size }, (_, rank) => s.has(`${workerId}:${rank}`)))
    const owner: Array<number | undefined> = Array.from({ length: size }, () => undefined)
    for (let req = 0; req < allowed.length; req++) {
      const seen = Array.from({ length: size }, () => false)
      if (augment(req, allowed, seen, owner) && owner.every((o) => o !== undefined))
        return { workerId, requestOfRank: owner as ReadonlyArray<number> }
    }
  }
  return undefined
}
