/**
 * What the proxy's request paths share: the headers a proxy drops, the JSON answer, the upstream
 * timeout error, and the HTTP status of each router refusal.
 *
 * @internal
 */
import type { ServerResponse } from "node:http"
import { stringifyJsonSafe } from "@loadledger/schema"
import type { RouterError } from "../Types.js"

/** The paths the proxy places with the router. @internal */
export const ROUTED = new Set(["/v1/completions", "/v1/chat/completions"])

/** RFC 9110 section 7.6.1: connection-specific headers are not forwarded by a proxy. @internal */
export const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length"
])

/** Answer `body` as JSON with `status`; a response whose headers went out is cut instead. @internal */
export const json = (res: ServerResponse, status: number, body: unknown, extra?: Record<string, string>) => {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { "content-type": "application/json", ...extra }).end(stringifyJsonSafe(body))
}

/** An upstream phase that took too long (`connect`, `first-byte`, `idle-stream`). @internal */
export class UpstreamTimeout extends Error {
  constructor(
    readonly phase: "connect" | "first-byte" | "idle-stream",
    ms: number
  ) {
    super(`upstream ${phase} timeout after ${ms} ms`)
  }
}

/** The HTTP status of each router refusal: the client's mistakes are 4xx, the fleet's 503. @internal */
export const routerErrorStatus: Record<RouterError["reason"], number> = {
  InvalidInput: 400,
  InvalidRoutedRank: 400,
  DuplicateRequestId: 409,
  NoAvailableRanks: 503,
  PolicyError: 503,
  Overloaded: 503
}
