/**
 * The one check of what the live router is built with: its policy, its workers (or sources) and
 * its options. A value at fault is a `RouterError` `InvalidInput` whose `field` is the path to it
 * from the function's arguments (`workers[1].dpSize`, `options.clientCount`, `sources[0].kind`,
 * `port`) and whose message starts with that path; `undefined` when everything holds. Used by
 * `makeLastHeard`, `makeRouter`, `rankStatus`, `startLiveRouter` and `startProxy` before they build
 * anything, so code past them trusts the types.
 *
 * @internal
 */
import { checkClientOptions } from "@loadledger/policies"
import type { LoadField, RouterError, SourceKind } from "../Types.js"
import { workerKey } from "./workerKey.js"

/** The most DP ranks one worker may have (the example router's `--dp` bound). @internal */
export const maxDpSize = 1024

/** node's timers hold at most 2^31 - 1 ms (a longer delay fires after 1 ms). @internal */
export const maxTimerMs = 2 ** 31 - 1

// keyed by the unions, so the compiler keeps them complete
const sourceKinds: Record<SourceKind, true> = {
  "sglang-v1-loads": true,
  "sglang-get-load": true,
  "sglang-metrics": true,
  "vllm-metrics": true,
  "trtllm-iteration-stats": true,
  "trtllm-metrics": true
}
const loadFields: Record<LoadField, true> = {
  numRunningReqs: true,
  numWaitingReqs: true,
  numTotalTokens: true,
  kvCacheUsage: true
}
const oneOf = <K extends string>(table: Record<K, true>, x: unknown): x is K =>
  typeof x === "string" && Object.hasOwn(table, x)
const names = (table: Record<string, true>): string => Object.keys(table).join(", ")

/** A number as it is, a string quoted, anything else by its kind (`array`, `null`, `object`, ...). */
const shown = (x: unknown): string =>
  typeof x === "number"
    ? String(x)
    : typeof x === "string"
      ? JSON.stringify(x)
      : Array.isArray(x)
        ? "array"
        : x === null
          ? "null"
          : typeof x

const invalid = (field: string, expected: string, got: unknown): RouterError => ({
  _tag: "RouterError",
  reason: "InvalidInput",
  message: `${field} must be ${expected}, got ${shown(got)}`,
  field
})

type Check = RouterError | undefined
type Fields = Readonly<Record<string, unknown>>

const isObject = (x: unknown): x is Fields => typeof x === "object" && x !== null && !Array.isArray(x)
const intIn = (x: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  Number.isSafeInteger(x) && (x as number) >= min && (x as number) <= max
const msIn = (x: unknown, max = maxTimerMs): boolean => typeof x === "number" && x >= 1 && x <= max

/** `o[key]` absent, or `ok`. */
const optional = (o: Fields, prefix: string, key: string, ok: (x: unknown) => boolean, expected: string) =>
  o[key] === undefined || ok(o[key]) ? undefined : invalid(`${prefix}${key}`, expected, o[key])

const policyMembers = ["init", "observe", "route", "finish"] as const

/** A policy: an object whose `init`, `observe`, `route` and `finish` are functions. @internal */
export const checkPolicy = (policy: unknown, field: string): Check => {
  if (!isObject(policy)) return invalid(field, "a policy (init, observe, route, finish)", policy)
  for (const m of policyMembers)
    if (typeof policy[m] !== "function") return invalid(`${field}.${m}`, "a function", policy[m])
  return undefined
}

const httpBase = (x: unknown): boolean => {
  if (typeof x !== "string" || !URL.canParse(x)) return false
  const u = new URL(x)
  return (u.protocol === "http:" || u.protocol === "https:") && u.search === "" && u.hash === ""
}

const workerFields = (w: Fields, at: string): Check =>
  (typeof w.url === "string" && w.url.length > 0
    ? undefined
    : invalid(`${at}url`, "a non-empty string", w.url)) ??
  (intIn(w.dpSize, 1, maxDpSize)
    ? undefined
    : invalid(`${at}dpSize`, `an integer from 1 to ${maxDpSize}`, w.dpSize)) ??
  optional(w, at, "kind", (x) => oneOf(sourceKinds, x), `one of ${names(sourceKinds)}`)

const sourceFields = (s: Fields, at: string): Check =>
  (httpBase(s.url)
    ? undefined
    : invalid(
        `${at}url`,
        "an http(s) base URL without query or fragment, like http://127.0.0.1:30000",
        s.url
      )) ??
  workerFields(s, at) ??
  (oneOf(sourceKinds, s.kind) ? undefined : invalid(`${at}kind`, `one of ${names(sourceKinds)}`, s.kind)) ??
  (msIn(s.intervalMs)
    ? undefined
    : invalid(`${at}intervalMs`, `milliseconds from 1 to ${maxTimerMs}`, s.intervalMs)) ??
  (msIn(s.timeoutMs)
    ? undefined
    : invalid(`${at}timeoutMs`, `milliseconds from 1 to ${maxTimerMs}`, s.timeoutMs)) ??
  optional(s, at, "path", (x) => typeof x === "string" && x.startsWith("/"), 'a path starting with "/"')

/**
 * `workers` (the argument `name`): an array of workers `{ url, dpSize, kind? }` (`url` a non-empty
 * string, `dpSize` an integer from 1 to `maxDpSize`, `kind` absent or a `SourceKind`), or with
 * `name` `"sources"` of `SourceSpec`s (`url` an http(s) base URL, `kind` required, `intervalMs`
 * and `timeoutMs` from 1 to `maxTimerMs`, `path` absent or starting with `/`). No two may have the
 * same `url` once trailing slashes are dropped (one engine polled twice would count twice). @internal
 */
export const checkWorkers = (workers: unknown, name: "workers" | "sources"): Check => {
  if (!Array.isArray(workers)) return invalid(name, "an array", workers)
  const seen = new Map<string, number>()
  for (let i = 0; i < workers.length; i++) {
    const w: unknown = workers[i]
    const at = `${name}[${i}]`
    if (!isObject(w))
      return invalid(
        at,
        name === "sources"
          ? "a source { url, dpSize, kind, intervalMs, timeoutMs }"
          : "a worker { url, dpSize }",
        w
      )
    const bad = name === "sources" ? sourceFields(w, `${at}.`) : workerFields(w, `${at}.`)
    if (bad !== undefined) return bad
    const url = workerKey(w.url as string)
    const first = seen.get(url)
    if (first !== undefined)
      return invalid(`${at}.url`, `a URL no other entry has (${name}[${first}] has it)`, w.url)
    seen.set(url, i)
  }
  return undefined
}

/**
 * How ranks are judged (`RouterOptions`, `StatusOptions`), read from `o` with field names prefixed
 * by `prefix`: `staleAfterSeconds` a finite number > 0, `requiredFields` absent or an array of
 * `LoadField`s, `ageClock` absent or `"publisher-change"` / `"receipt"`, then for a router
 * (`clients`) `overloadBound` absent or an integer >= 1, `clientCount` / `clientIndex` by the policies' one rule (`checkClientOptions`). @internal
 */
const judgingFields = (o: Fields, prefix: string, clients: boolean): Check => {
  const stale = o.staleAfterSeconds
  if (!(typeof stale === "number" && Number.isFinite(stale) && stale > 0))
    return invalid(`${prefix}staleAfterSeconds`, "a finite number of seconds > 0", stale)
  const required = o.requiredFields
  if (required !== undefined) {
    if (!Array.isArray(required))
      return invalid(`${prefix}requiredFields`, `an array of ${names(loadFields)}`, required)
    for (let i = 0; i < required.length; i++)
      if (!oneOf(loadFields, required[i]))
        return invalid(`${prefix}requiredFields[${i}]`, `one of ${names(loadFields)}`, required[i])
  }
  const clock = optional(
    o,
    prefix,
    "ageClock",
    (x) => x === "publisher-change" || x === "receipt",
    '"publisher-change" or "receipt"'
  )
  if (clock !== undefined || !clients) return clock
  const bound = optional(
    o,
    prefix,
    "overloadBound",
    (x) => Number.isSafeInteger(x) && (x as number) >= 1,
    "an integer >= 1"
  )
  if (bound !== undefined) return bound
  const bad = checkClientOptions(o.clientCount as number | undefined, o.clientIndex as number | undefined)
  return bad === undefined
    ? undefined
    : {
        _tag: "RouterError",
        reason: "InvalidInput",
        message: `${prefix}${bad.message}`,
        field: `${prefix}${bad.field}`
      }
}

/** `makeRouter`'s arguments, in their order: `policy`, `workers`, `options`. @internal */
export const checkRouterOptions = (policy: unknown, workers: unknown, options: unknown): Check =>
  checkPolicy(policy, "policy") ??
  checkWorkers(workers, "workers") ??
  (isObject(options)
    ? judgingFields(options, "options.", true)
    : invalid("options", "router options { staleAfterSeconds, ... }", options))

/**
 * `rankStatus`'s `options`: the judging fields, then `publishedFieldsByWorker` absent or a `Map`
 * from worker URL to an array of `LoadField`s. @internal
 */
export const checkStatusOptions = (options: unknown): Check => {
  if (!isObject(options)) return invalid("options", "status options { staleAfterSeconds, ageClock }", options)
  const bad = judgingFields(options, "options.", false)
  if (bad !== undefined) return bad
  const published = options.publishedFieldsByWorker
  if (published === undefined) return undefined
  if (!(published instanceof Map))
    return invalid("options.publishedFieldsByWorker", "a Map from worker URL to load fields", published)
  for (const [url, fields] of published)
    if (!(typeof url === "string" && Array.isArray(fields) && fields.every((f) => oneOf(loadFields, f))))
      return invalid(
        "options.publishedFieldsByWorker",
        `a Map from worker URL to arrays of ${names(loadFields)}`,
        typeof url === "string" ? fields : url
      )
  return undefined
}

/**
 * `startLiveRouter`'s config: `policy`, `sources`, the router options, `clock` absent or a
 * function, `decodeBudgetMs` from 1 to a quarter of `maxTimerMs` (the decode worker's timers run to
 * 4 budgets), `inThreadDecodeMaxBytes` an integer >= 0, `maxPollBytes` an integer >= 1,
 * `processMetrics` a boolean, `diagnosisWindowSeconds` a finite number > 0 (each absent, or so). @internal
 */
export const checkLiveRouterConfig = (config: unknown): Check => {
  if (!isObject(config))
    return invalid("config", "a live router config { sources, policy, staleAfterSeconds }", config)
  const budgetMax = Math.floor(maxTimerMs / 4)
  return (
    checkPolicy(config.policy, "policy") ??
    checkWorkers(config.sources, "sources") ??
    judgingFields(config, "", true) ??
    optional(config, "", "clock", (x) => typeof x === "function", "a function returning seconds") ??
    optional(
      config,
      "",
      "decodeBudgetMs",
      (x) => msIn(x, budgetMax),
      `milliseconds from 1 to ${budgetMax}`
    ) ??
    optional(config, "", "inThreadDecodeMaxBytes", (x) => intIn(x, 0), "an integer number of bytes >= 0") ??
    optional(config, "", "maxPollBytes", (x) => intIn(x, 1), "an integer number of bytes >= 1") ??
    optional(config, "", "processMetrics", (x) => typeof x === "boolean", "a boolean") ??
    optional(
      config,
      "",
      "diagnosisWindowSeconds",
      (x) => typeof x === "number" && x > 0 && Number.isFinite(x),
      "a finite number of seconds > 0"
    )
  )
}

const routerMembers = [
  "route",
  "finish",
  "abort",
  "markUnreachable",
  "eject",
  "retried",
  "ranks",
  "inflight",
  "decisions",
  "metrics"
] as const

/**
 * `startProxy`'s options: `router` a `LiveRouter` (its functions present; one `startLiveRouter`
 * refused gives its own `error`), `port` an integer from 0 to 65535, `host` a non-empty string,
 * the three upstream timeouts from 1 to `maxTimerMs` ms, `ejectAfterFailures` an integer >= 1,
 * `ejectForMs` a number >= 0 (`Infinity`: for good), `maxBodyBytes` an integer >= 1. @internal
 */
export const checkProxyOptions = (options: unknown): Check => {
  if (!isObject(options)) return invalid("options", "proxy options { router, ... }", options)
  const router = options.router
  if (!isObject(router)) return invalid("router", "a LiveRouter (see startLiveRouter)", router)
  for (const m of routerMembers)
    if (typeof router[m] !== "function") return invalid(`router.${m}`, "a function", router[m])
  const refused = router.error
  if (refused !== undefined)
    return isObject(refused) && refused._tag === "RouterError"
      ? (refused as unknown as RouterError)
      : invalid("router.error", "absent (a router startLiveRouter accepted)", refused)
  const ms = `milliseconds from 1 to ${maxTimerMs}`
  return (
    optional(options, "", "port", (x) => intIn(x, 0, 65535), "an integer from 0 to 65535") ??
    optional(options, "", "host", (x) => typeof x === "string" && x.length > 0, "a non-empty string") ??
    optional(options, "", "connectTimeoutMs", (x) => msIn(x), ms) ??
    optional(options, "", "firstByteTimeoutMs", (x) => msIn(x), ms) ??
    optional(options, "", "idleStreamTimeoutMs", (x) => msIn(x), ms) ??
    optional(options, "", "ejectAfterFailures", (x) => intIn(x, 1), "an integer >= 1") ??
    optional(options, "", "ejectForMs", (x) => typeof x === "number" && x >= 0, "milliseconds >= 0") ??
    optional(options, "", "maxBodyBytes", (x) => intIn(x, 1), "an integer number of bytes >= 1")
  )
}
