/**
 * The one-line help of every `loadledger serve` flag, and the options block of `serveUsage` built
 * from it with each default read from `valueFlags` (one table of defaults). Read by `ServeArgs.ts`;
 * `test/serveHelp.test.ts` fails on a flag without a line.
 *
 * @internal
 */
import { booleanFlags, valueFlags } from "./serveFlags.js"

/**
 * Per flag: the value's placeholder (absent: a flag without value), one line of help, and what
 * holds when a flag without a default in `valueFlags` is not given. @internal
 */
export const FLAG_HELP: Readonly<
  Record<string, { readonly value?: string; readonly text: string; readonly unset?: string }>
> = {
  worker: {
    value: "URL",
    text: "one worker (an engine's http(s) base URL, no path), repeatable; each serves --dp ranks"
  },
  gateway: {
    value: "KIND=URL",
    text: "a gateway's fleet report as the source, repeatable; KIND smg (/get_loads), smg-metrics, dynamo or llm-d; SMG's workers are routed to, the others observed"
  },
  "workers-file": { value: "FILE", text: "a watched file of worker URLs (one a line), on top of --worker" },
  "workers-dns": {
    value: "NAME:PORT",
    text: "workers at every address NAME resolves to, re-resolved as it changes"
  },
  "workers-from": {
    value: "SOURCE",
    text: "k8s:NAMESPACE/SERVICE[:PORT] (a Service's EndpointSlices), dns:NAME:PORT or file:PATH"
  },
  dp: { value: "N", text: "DP ranks per worker, 1 to 1024 (routed to as URL@0 ... URL@N-1)" },
  source: {
    value: "KIND",
    text: "the load report polled per worker: sglang-v1-loads, sglang-get-load, sglang-metrics, vllm-metrics, trtllm-iteration-stats or trtllm-metrics"
  },
  policy: { value: "NAME", text: "a registered policy (loadledger list policies)" },
  "policy-config": {
    value: "FILE",
    text: "an own policy as JSON (loadledger tune --out's file); wins over --policy"
  },
  port: { value: "N", text: "the port the proxy listens on, 0 for any free one" },
  host: { value: "ADDR", text: "the address the proxy listens on" },
  "interval-ms": { value: "MS", text: "poll period per worker, in milliseconds" },
  "timeout-ms": { value: "MS", text: "bound on one poll, in milliseconds" },
  "stale-ms": {
    value: "MS",
    text: "a rank whose publisher timestamp is frozen this many milliseconds is unknown"
  },
  require: {
    value: "FIELDS",
    text: "fields a row must carry to be known, comma-separated: numRunningReqs, numWaitingReqs, numTotalTokens, kvCacheUsage",
    unset: "a row with any load count is known"
  },
  replicas: {
    value: "N",
    text: "router replicas in front of these engines (scales in-process counts), 1 to 1024"
  },
  "replica-index": { value: "I", text: "which replica this is, below --replicas" },
  bookings: {
    value: "URL",
    text: "a redis:// or valkey:// store the replicas share placements through",
    unset: "this replica alone"
  },
  "bookings-group": { value: "NAME", text: "the key prefix the replicas of one fleet share in --bookings" },
  "connect-timeout-ms": {
    value: "MS",
    text: "upstream TCP connect bound, in milliseconds; a request never connected is placed once more"
  },
  "first-byte-timeout-ms": { value: "MS", text: "bound on the upstream response headers, in milliseconds" },
  "idle-timeout-ms": {
    value: "MS",
    text: "longest pause between two chunks of an upstream body, in milliseconds"
  },
  "decode-budget-ms": {
    value: "MS",
    text: "a load report that takes longer to decode is a decode failure, in milliseconds"
  },
  "eject-after": {
    value: "N",
    text: "failed requests in a row (>= 500, timeout, lost connection) that eject a worker"
  },
  "eject-ms": { value: "MS", text: "how long an ejected worker stays out, in milliseconds" },
  model: {
    value: "NAME",
    text: "the served model's step-time preset, with --gpu: the policy prices prefill and decode by it (step-time-aware)",
    unset: "GLM-5.3 on H200's cost"
  },
  gpu: { value: "NAME", text: "the GPU's step-time preset, with --model" },
  "max-running-requests": {
    value: "N",
    text: "the engines' per-rank running cap (SGLang --max-running-requests, vLLM --max-num-seqs)",
    unset: "each rank's row, if it reports one"
  },
  "overload-bound": {
    value: "N",
    text: "requests in flight per rank past which it is skipped; 503 Overloaded when every rank is past it",
    unset: "no bound"
  },
  "drain-ms": {
    value: "MS",
    text: "on SIGTERM / SIGINT, how long requests in flight may finish, in milliseconds"
  },
  "access-log": { text: "one JSON log line per request (status, rank, milliseconds)" },
  config: {
    value: "FILE",
    text: 'JSON or YAML with the flags as keys (kebab-case or camelCase, "workers" a list); flags given win'
  },
  check: {
    text: "check every flag, the config file and the policy, print them as one JSON line, exit 0 without listening"
  },
  help: { text: "print this help" }
}

/** `text` in lines of at most `columns` characters, every line after the first indented by `indent`. */
const wrap = (text: string, indent: number, columns: number): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line !== "" && indent + line.length + 1 + word.length > columns) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.join(`\n${" ".repeat(indent)}`)
}

/**
 * The options block: per flag its placeholder and help with the default (`valueFlags`'s, else
 * what holds when it is not given), in `FLAG_HELP`'s order, aligned and wrapped at `columns`. @internal
 */
export const optionLines = (columns = 100): string => {
  const names = Object.keys(FLAG_HELP)
  const left = names.map(
    (n) => `  --${n}${FLAG_HELP[n]!.value === undefined ? "" : ` ${FLAG_HELP[n]!.value}`}`
  )
  const width = Math.max(...left.map((l) => l.length)) + 2
  return names
    .map((n, i) => {
      const h = FLAG_HELP[n]!
      const d = valueFlags[n] ?? h.unset
      // the default stays whole on one line: its spaces are joined for the wrap
      const tail = d === undefined ? "" : ` (default:\u0000${d.replaceAll(" ", "\u0000")})`
      return `${left[i]!.padEnd(width)}${wrap(`${h.text}${tail}`, width, columns).replaceAll("\u0000", " ")}`
    })
    .join("\n")
}

/** Every flag `serve` takes (what `FLAG_HELP` must describe). @internal */
export const serveFlagNames = (): ReadonlyArray<string> => [...Object.keys(valueFlags), ...booleanFlags]
