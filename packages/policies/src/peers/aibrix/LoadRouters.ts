/**
 * AIBrix's load-provider routers (`leastLoadRouter` push / pull, `packLoadRouter`): the backends
 * of the SLO routers, exact on explicit utilisations and consumptions.
 *
 * @since 0.8.0
 */

/**
 * One pod as a load router sees it: `ready` false for a pod with no IP (skipped); `utilization`
 * and `consumption` the provider's answers (`GetUtilization`, `GetConsumption`), or the error text
 * it returned instead (`utilizationError`, `consumptionError`, which win over a value).
 *
 * @category aibrix
 * @since 0.8.0
 */
export interface AibrixLoadPod {
  readonly ready?: boolean | undefined
  readonly utilization?: number | undefined
  readonly utilizationError?: string | undefined
  readonly consumption?: number | undefined
  readonly consumptionError?: string | undefined
}

/**
 * A load router's answer: the chosen pod's index and the load compared per pod (`undefined` for
 * a skipped pod), or upstream's error text: `no pod available` (`ErrorNoAvailablePod`), `load
 * capacity reached` (`cache.ErrorLoadCapacityReached`, temporary: the SLO queue holds the request),
 * `slo failure request`, or a provider's own error.
 *
 * @category aibrix
 * @since 0.8.0
 */
export type AibrixLoadRouted =
  | {
      readonly _tag: "AibrixLoadPicked"
      readonly index: number
      readonly loads: ReadonlyArray<number | undefined>
    }
  | {
      readonly _tag: "AibrixLoadFailed"
      readonly error: string
      readonly loads: ReadonlyArray<number | undefined>
    }

/**
 * Upstream's `ErrorNoAvailablePod` text (`least_load.go`): no pod to pick.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.AIBRIX_NO_POD // => "no pod available"
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const AIBRIX_NO_POD = "no pod available"

/**
 * Upstream's `cache.ErrorLoadCapacityReached` text (`load_provider.go`): temporary, the SLO queue holds the request.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.AIBRIX_CAPACITY // => "load capacity reached"
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const AIBRIX_CAPACITY = "load capacity reached"

/**
 * Upstream's `cache.ErrorSLOFailureRequest` text (`load_provider.go`): the profile predicts no throughput.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * Aibrix.AIBRIX_SLO_FAILURE // => "slo failure request"
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const AIBRIX_SLO_FAILURE = "slo failure request"

/** `updateError`: a capacity error sticks; otherwise the newest error replaces the last. */
const nextError = (last: string, err: string): string => (last === AIBRIX_CAPACITY ? last : err)

/**
 * Which load router: `least-load` (push: least utilisation, `<=` scan from `MaxFloat64` so the last
 * minimum wins, consumption never read, no cap), `least-load-pulling` (utilisation + consumption,
 * `<=` scan from the cap: the last minimum at or under the cap), `pack-load` (utilisation +
 * consumption, strict `>` scan from 0: the first maximum at or under the cap; a pod whose total
 * is 0 is never chosen).
 *
 * @category aibrix
 * @since 0.8.0
 */
export type AibrixLoadRouter = "least-load" | "least-load-pulling" | "pack-load"

/**
 * `leastLoadRouter.Route` / `packLoadRouter.Route` over explicit provider answers, pods in list
 * order. No pod: `no pod available`. A pod with no IP is skipped; a provider error skips the pod
 * and becomes the last error unless a capacity error was met (`updateError`); in pull and pack
 * modes a total over `cap` is a capacity error. No pick returns the last error (initially `no pod
 * available`), with no fallback. The pending-load provider of the SLO routers has `cap` 1.
 *
 * Upstream: vllm-project/aibrix `pkg/plugins/gateway/algorithms/{least_load,pack_load}.go` at
 * e3e10f9e4aebe9aac5e7d992fb87d2648e01628b.
 *
 * @example
 * ```ts
 * import { Aibrix } from "@loadledger/policies"
 * const pods = [{ utilization: 0.3, consumption: 0.2 }, { utilization: 0.3, consumption: 0.1 }]
 * const pull = Aibrix.aibrixLoadRoute("least-load-pulling", pods, 1)
 * pull._tag === "AibrixLoadPicked" && pull.index // => 1
 * const pack = Aibrix.aibrixLoadRoute("pack-load", pods, 1)
 * pack._tag === "AibrixLoadPicked" && pack.index // => 0
 * const full = Aibrix.aibrixLoadRoute("least-load-pulling", [{ utilization: 0.9, consumption: 0.2 }], 1)
 * full._tag === "AibrixLoadFailed" && full.error // => "load capacity reached"
 * ```
 *
 * @category aibrix
 * @since 0.8.0
 */
export const aibrixLoadRoute = (
  router: AibrixLoadRouter,
  pods: ReadonlyArray<AibrixLoadPod>,
  cap: number
): AibrixLoadRouted => {
  const loads: Array<number | undefined> = pods.map(() => undefined)
  if (pods.length === 0) return { _tag: "AibrixLoadFailed", error: AIBRIX_NO_POD, loads }
  const push = router === "least-load"
  const pack = router === "pack-load"
  let best = -1
  let bound = pack ? 0.0 : push ? Number.MAX_VALUE : cap
  let last = AIBRIX_NO_POD
  pods.forEach((p, i) => {
    if (p.ready === false) return
    if (p.utilizationError !== undefined) {
      last = nextError(last, p.utilizationError)
      return
    }
    let load = p.utilization ?? 0
    if (!push) {
      if (p.consumptionError !== undefined) {
        last = nextError(last, p.consumptionError)
        return
      }
      load += p.consumption ?? 0
    }
    loads[i] = load
    if (!push && load > cap) last = nextError(last, AIBRIX_CAPACITY)
    else if (pack ? load > bound : load <= bound) {
      bound = load
      best = i
    }
  })
  return best < 0
    ? { _tag: "AibrixLoadFailed", error: last, loads }
    : { _tag: "AibrixLoadPicked", index: best, loads }
}
