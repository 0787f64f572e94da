/**
 * What the proxy tells an operator as it runs: one value per event, for a structured log.
 *
 * @since 0.4.0
 */

/**
 * One proxy event, handed to `ProxyOptions.log` as it happens:
 *
 * - `upstream-failed`: a request's engine answered >= 500 (`status`) or failed it (`error`: reset,
 *   timeout, connection lost mid-answer);
 * - `retried`: a request whose connection never opened is placed once more (`reason`: the error
 *   code, or `connect-timeout`);
 * - `ejected`: the passive health check took `worker` out after `failures` failed requests in a row;
 * - `request` (only with `accessLog`): a request ended, with its status (0 when the client went
 *   away first), the rank that served it and the time from arrival to end in milliseconds;
 * - `draining` / `drained`: `drain` began with `inflight` requests open, and ended with `left`
 *   requests cut (0 when every one finished within the drain time).
 *
 * @example
 * ```ts
 * import type { ProxyEvent } from "@loadledger/live"
 * const e: ProxyEvent = { event: "ejected", worker: "http://10.0.0.5:8000", failures: 3 }
 * e.event // => "ejected"
 * ```
 *
 * @category models
 * @since 0.4.0
 */
export type ProxyEvent =
  | {
      readonly event: "upstream-failed"
      readonly requestId: string
      readonly rank: string
      readonly status?: number | undefined
      readonly error?: string | undefined
    }
  | { readonly event: "retried"; readonly requestId: string; readonly rank: string; readonly reason: string }
  | { readonly event: "ejected"; readonly worker: string; readonly failures: number }
  | {
      readonly event: "request"
      readonly requestId: string
      readonly path: string
      readonly status: number
      readonly rank?: string | undefined
      readonly ms: number
    }
  | { readonly event: "draining"; readonly inflight: number }
  | { readonly event: "drained"; readonly left: number }
