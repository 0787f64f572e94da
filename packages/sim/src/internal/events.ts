/**
 * The two events besides a step's end (see `loop.ts`): a request arrives (checked against the
 * KV pool and request limit, routed by its front end's policy, queued on the chosen rank), and
 * the engine publishes on its own cadence (vLLM's coordinator).
 */
import type { SimStatus } from "../Result.js"
import type { Arrivals } from "./arrivals.js"
import { Req } from "./req.js"
import { engineFault, progress, type Run } from "./run.js"

/** Request `r` arrives at `run.t`: rejected with the reason, or routed and queued. */
export const arrive = (run: Run, r: Req): void => {
  const c = run.c
  const size = r.t.inputLength + r.outputTarget
  if (size > c.maxRequestTokens) {
    r.rejected =
      c.maxRequestTokens === c.kvPoolTokens
        ? `needs ${size} tokens of KV, the pool holds ${c.kvPoolTokens}`
        : `needs ${size} tokens, the request limit (maxRequestTokens) is ${c.maxRequestTokens}`
    progress(run, r)
    return
  }
  if (run.held !== undefined) {
    run.held.push(r)
    return
  }
  place(run, r)
}

/** Route `r` now and queue it on the chosen rank, or reject it with the policy's reason. */
const place = (run: Run, r: Req): void => {
  const n = run.c.dpSize
  const rank = run.router.route(r, run.t)
  if (typeof rank !== "number") {
    r.rejected = `policy error (${rank.reason}): ${rank.message}`
    progress(run, r)
    return
  }
  if (!Number.isInteger(rank) || rank < 0 || rank >= n) {
    r.rejected = `policy chose rank ${rank}, outside 0..${n - 1}`
    progress(run, r)
    return
  }
  const target = run.ranks[rank]!
  target.routed++
  r.queuedSeconds = run.t
  target.enqueue(r)
  run.engine.queued(run.groupOf[rank]!, rank)
}

/** An engine that routes per iteration (`EngineRun.fetch`): route the batch it takes from the held arrivals. */
export const routeHeld = (run: Run): void => {
  const held = run.held
  if (held === undefined || held.length === 0 || run.engine.fetch === undefined) return
  for (const r of run.engine.fetch(held, run.t)) place(run, r)
}

/**
 * Every request that arrives at `run.t`, in trace order; each one's record is made now. Closed loop
 * (`maxConcurrency`): every request due by now, while fewer than the cap are in flight.
 */
export const arriveAll = (run: Run, arrivals: Arrivals): void => {
  const cap = run.c.maxConcurrency
  for (;;) {
    const at = arrivals.peek()?.arrivalSeconds
    if (
      at === undefined ||
      (cap === undefined ? at !== run.t : at > run.t || arrivals.taken - run.done >= cap)
    )
      break
    const i = arrivals.taken
    run.next = i + 1
    const row = arrivals.take()
    // closed loop: a request held back by the concurrency cap is sent now
    const t = row.arrivalSeconds < run.t ? { ...row, arrivalSeconds: run.t } : row
    // every request draws its room, used or not, so request i's room is the i-th
    const room = run.nextRoom()
    const r = new Req(i, t, t.bootstrapRoom ?? room)
    if (run.kept) run.kept[i] = r
    arrive(run, r)
  }
}

/** The engine's publish due at `run.t` (vLLM's coordinator); the status to end with on a fault. */
export const publish = (run: Run): SimStatus | undefined => engineFault(run, run.engine.publish(run.t))
