/**
 * Workers that come and go: add a worker to a router value, take one out, and drop a removed
 * worker's ranks once nothing it served is in flight. Pure, over the `RouterState` of `Router.ts`.
 *
 * A removed worker is ejected for good at once (its ranks leave the view: nothing new is placed on
 * it) while its requests in flight stay counted on their ranks until they end; `compactWorkers`
 * then drops its ranks, and every index after them moves down (placements, counts, view).
 *
 * @since 0.4.0
 */
import * as HashMap from "effect/HashMap"
import { checkWorkers } from "./internal/checks.js"
import { workerKey } from "./internal/workerKey.js"
import { rankId } from "./LastHeard.js"
import { buildView, usableRanks } from "./PolicyView.js"
import { ejectWorker, type RouterState, statuses } from "./Router.js"
import { sourcePublishedFields } from "./Source.js"
import type { RouterError, SourceKind, WorkerSpec } from "./Types.js"

/**
 * Add `worker` (its ranks after every existing one, never reported yet: unknown until its first
 * poll). A worker whose URL the router already has is re-admitted when it was removed (its
 * ejection lifted) and otherwise left as it is.
 *
 * **Errors**: a worker that is not a `WorkerSpec` (see `makeRouter`) is a `RouterError`
 * `InvalidInput` naming `worker.<field>`; the state is not changed.
 *
 * @example
 * ```ts
 * import { addWorker, makeRouter } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r = addWorker(makeRouter(totalRequests, [{ url: "a", dpSize: 1 }], { staleAfterSeconds: 1 }), { url: "b", dpSize: 2 }, 0)
 * "heard" in r && r.heard.ranks.map((x) => x.id) // => ["a@0", "b@0", "b@1"]
 * "heard" in r && r.inflightPerRank // => [0, 0, 0]
 * ```
 *
 * @category combinators
 * @since 0.4.0
 */
export const addWorker = <S>(
  state: RouterState<S>,
  worker: WorkerSpec & { readonly kind?: SourceKind | undefined },
  now: number
): RouterState<S> | RouterError => {
  const bad = checkWorkers([worker], "workers")
  if (bad !== undefined)
    return {
      ...bad,
      field: bad.field?.replace("workers[0]", "worker"),
      message: bad.message.replace("workers[0]", "worker")
    }
  const url = worker.url
  // one worker per workerKey: host case and trailing slashes do not make a second one (RFC 4343)
  const key = workerKey(url)
  const existing = state.heard.workers.find((w) => workerKey(w.url) === key)
  if (existing !== undefined)
    return existing.ejected?.untilSeconds === Number.POSITIVE_INFINITY
      ? ejectWorker(state, existing.url, 0, "re-added", now)
      : state
  const ranks = Array.from({ length: worker.dpSize }, (_, dpRank) => ({
    id: rankId(url, dpRank),
    workerUrl: url,
    dpRank
  }))
  const zeros = ranks.map(() => 0)
  const published = new Map(state.status.publishedFieldsByWorker ?? [])
  if (worker.kind !== undefined) published.set(url, sourcePublishedFields(worker.kind))
  return {
    ...state,
    status: { ...state.status, publishedFieldsByWorker: published.size > 0 ? published : undefined },
    heard: {
      ...state.heard,
      workers: [
        ...state.heard.workers,
        { url, dpSize: worker.dpSize, polls: 0, fetchFailures: 0, decodeFailures: 0 }
      ],
      ranks: [...state.heard.ranks, ...ranks]
    },
    view: { ...state.view, localOf: [...state.view.localOf, ...ranks.map(() => -1)] },
    inflightPerRank: [...state.inflightPerRank, ...zeros],
    decisions: [...state.decisions, ...zeros]
  }
}

/**
 * Take worker `url` out: ejected for good from `now` (nothing new is placed on it), its requests
 * in flight still counted until they end. A URL the router does not have leaves the state as it is.
 *
 * @example
 * ```ts
 * import { makeRouter, removeWorker, statuses } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r = removeWorker(makeRouter(totalRequests, [{ url: "a", dpSize: 1 }], { staleAfterSeconds: 1 }), "a", 0)
 * statuses(r, 0)[0]?.reason // => "ejected"
 * ```
 *
 * @category combinators
 * @since 0.4.0
 */
export const removeWorker = <S>(state: RouterState<S>, url: string, now: number): RouterState<S> => {
  const key = workerKey(url)
  const existing = state.heard.workers.find((w) => workerKey(w.url) === key)
  return existing !== undefined
    ? ejectWorker(state, existing.url, Number.POSITIVE_INFINITY, "removed from the worker set", now)
    : state
}

/**
 * Drop every removed worker (ejected for good) that has nothing in flight: its ranks leave the
 * ledger and the later ranks' indices move down. The view is rebuilt over the remaining ranks
 * when a rank was dropped (as on any change of the usable ranks). `state` itself when nothing was
 * dropped.
 *
 * @example
 * ```ts
 * import { compactWorkers, makeRouter, removeWorker } from "@loadledger/live"
 * import { totalRequests } from "@loadledger/policies"
 * const r = removeWorker(makeRouter(totalRequests, [{ url: "a", dpSize: 1 }, { url: "b", dpSize: 2 }], { staleAfterSeconds: 1 }), "a", 0)
 * compactWorkers(r, 0).heard.ranks.map((x) => x.id) // => ["b@0", "b@1"]
 * ```
 *
 * @category combinators
 * @since 0.4.0
 */
export const compactWorkers = <S>(state: RouterState<S>, now: number): RouterState<S> => {
  const { heard } = state
  const busy = new Set<string>()
  heard.ranks.forEach((r, i) => {
    if (state.inflightPerRank[i]! > 0) busy.add(r.workerUrl)
  })
  const drop = new Set(
    heard.workers
      .filter((w) => w.ejected?.untilSeconds === Number.POSITIVE_INFINITY && !busy.has(w.url))
      .map((w) => w.url)
  )
  if (drop.size === 0) return state
  const newIndex: Array<number> = []
  let k = 0
  for (const r of heard.ranks) newIndex.push(drop.has(r.workerUrl) ? -1 : k++)
  const keep = <T>(xs: ReadonlyArray<T>) => xs.filter((_, i) => newIndex[i]! >= 0)
  const published = new Map(state.status.publishedFieldsByWorker ?? [])
  for (const url of drop) published.delete(url)
  let inflight = state.inflight
  for (const [id, p] of state.inflight)
    inflight = HashMap.set(inflight, id, { ...p, rank: newIndex[p.rank]! })
  const next: RouterState<S> = {
    ...state,
    status: { ...state.status, publishedFieldsByWorker: published.size > 0 ? published : undefined },
    heard: { ...heard, workers: heard.workers.filter((w) => !drop.has(w.url)), ranks: keep(heard.ranks) },
    inflight,
    inflightPerRank: keep(state.inflightPerRank),
    decisions: keep(state.decisions),
    cursor: k > 0 ? state.cursor % k : 0
  }
  const ranks = statuses(next, now)
  return {
    ...next,
    view: buildView(state.policy, ranks, usableRanks(ranks), state.view.generation + 1, now, inflight)
  }
}
