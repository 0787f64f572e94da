/**
 * The poll loop of one gateway source (`Gateway.ts`): poll, decode the whole fleet report (off the
 * routing thread when large), fold it into the router value. The I/O half of gateway sources,
 * driven by `LiveRouter.ts`.
 *
 * @internal
 */
import type { LedgerKind, LedgerReport } from "@loadledger/schema"
import * as Result from "effect/Result"
import {
  foldGatewayReport,
  type GatewaySpec,
  type GatewayStatus,
  gatewayKinds,
  gatewayStatus,
  gatewayUrl
} from "../Gateway.js"
import type { PollFailure } from "../LastHeard.js"
import type { RouterState } from "../Router.js"
import type { RouterError } from "../Types.js"
import { checkWorkers } from "./checks.js"
import { failure, pollOnce } from "./poll.js"

/** `gateways`: absent or an array of `GatewaySpec`s, checked as sources are. @internal */
export const checkGateways = (gateways: unknown): RouterError | undefined => {
  if (gateways === undefined) return undefined
  const refuse = (field: string, message: string): RouterError => ({
    _tag: "RouterError",
    reason: "InvalidInput",
    field,
    message
  })
  if (!Array.isArray(gateways)) return refuse("gateways", "gateways must be an array of gateway specs")
  for (let i = 0; i < gateways.length; i++) {
    const g: unknown = gateways[i]
    const at = `gateways[${i}]`
    const kind = typeof g === "object" && g !== null ? (g as { kind?: unknown }).kind : undefined
    if (!(gatewayKinds as ReadonlyArray<unknown>).includes(kind))
      return refuse(
        `${at}.kind`,
        `${at}.kind must be one of ${gatewayKinds.join(", ")}, got ${JSON.stringify(kind)}`
      )
    const bad = checkWorkers([{ ...(g as object), dpSize: 1, kind: "sglang-v1-loads" }], "sources")
    if (bad !== undefined)
      return {
        ...bad,
        field: bad.field?.replace("sources[0]", at),
        message: bad.message.replace("sources[0]", at)
      }
  }
  return undefined
}

/** What a gateway loop reads and writes of its router. @internal */
export interface GatewayDeps<S> {
  readonly stopped: () => boolean
  readonly get: () => RouterState<S>
  readonly set: (state: RouterState<S>) => void
  readonly clock: () => number
  /** workerKeys of the workers the router polls directly */
  readonly direct: () => ReadonlySet<string>
  readonly decode: (
    body: Uint8Array,
    kind: LedgerKind
  ) => Promise<Result.Result<LedgerReport, { readonly _tag: string; readonly message: string }>>
  readonly maxBytes: number
  readonly sleep: (ms: number) => Promise<void>
  readonly firstPoll: () => unknown
  readonly changed: (
    status: GatewayStatus,
    added: ReadonlyArray<string>,
    removed: ReadonlyArray<string>
  ) => void
}

/** Poll `g` until `deps.stopped()`; `status` is the gateway's cell, updated after each poll. @internal */
export const runGateway = async <S>(
  g: GatewaySpec,
  status: { current: GatewayStatus },
  deps: GatewayDeps<S>
): Promise<void> => {
  let first = true
  while (!deps.stopped()) {
    const body = await pollOnce(gatewayUrl(g), g, deps.maxBytes)
    if (deps.stopped()) break
    let polled: Result.Result<LedgerReport, PollFailure>
    if (Result.isFailure(body)) polled = Result.fail(body.failure)
    else {
      const r = await deps.decode(body.success, g.kind)
      polled = Result.isSuccess(r)
        ? Result.succeed(r.success)
        : Result.fail(failure("decode", `${r.failure._tag}: ${r.failure.message}`))
    }
    if (deps.stopped()) break
    const before = new Set(status.current.workers)
    const r = foldGatewayReport(deps.get(), status.current, polled, deps.direct(), deps.clock())
    deps.set(r.state)
    status.current = r.status
    const after = new Set(r.status.workers)
    // a failed poll keeps the fleet as it was: nothing added or removed
    if (Result.isSuccess(polled))
      deps.changed(
        r.status,
        r.status.workers.filter((w) => !before.has(w)),
        [...before].filter((w) => !after.has(w))
      )
    else deps.changed(r.status, [], [])
    if (first) {
      first = false
      deps.firstPoll()
    }
    await deps.sleep(g.intervalMs)
  }
}

/** Start one loop per gateway (each handed to `track`); their status cells, in order. @internal */
export const startGateways = <S>(
  gateways: ReadonlyArray<GatewaySpec>,
  deps: GatewayDeps<S> & { readonly track: (loop: Promise<void>) => void }
): ReadonlyArray<{ current: GatewayStatus }> =>
  gateways.map((g) => {
    const cell = { current: gatewayStatus(g) }
    deps.track(runGateway(g, cell, deps))
    return cell
  })
