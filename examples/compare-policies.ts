/**
 * Where loadledger's own policies (ledger-balanced, ledger-balanced-requests, cache-affinity) beat
 * the upstream ones (SGLang's total-tokens and total-requests), and where they do not: every policy
 * on the same arrivals of a real trace, glm-5.3 / h200 / DP 8, at one or more arrival rates,
 * through the `@loadledger/sim` API. Prints one Markdown table per trace and rate (the README's
 * earlier "Our own policies on real traces" tables came from it; the section now shows `pnpm compare`).
 *
 *     pnpm exec tsx --conditions=@loadledger/source examples/compare-policies.ts
 *     pnpm exec tsx --conditions=@loadledger/source examples/compare-policies.ts \
 *       --trace fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv --rates 1,2,3
 *
 * Options: `--trace FILE` (default: the Mooncake conversation trace), `--rates LIST` (rate scales,
 * default 0.1), `--limit N` (first N requests), `--policies LIST`, `--engine sglang|vllm` (default:
 * each policy's own, SGLang for these five) and `--front-ends N` (vLLM API servers, each with its own
 * policy state), e.g. `--engine vllm --front-ends 4 --policies vllm-kv-pressure,ledger-balanced`.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { findPolicy } from "@loadledger/policies"
import {
  isTraceError,
  modelSimConfig,
  type PolicyResult,
  parseTrace,
  scaleTrace,
  simulate,
  type TraceRequest
} from "@loadledger/sim"
import { gpus, models } from "@loadledger/step-time"

/** Upstream baselines first, then ours. @since 0.1.0 */
export const defaultPolicies: ReadonlyArray<string> = [
  "total-tokens",
  "total-requests",
  "ledger-balanced",
  "ledger-balanced-requests",
  "cache-affinity"
]

/** One policy's run at one rate. @since 0.1.0 */
export interface Row {
  readonly rateScale: number
  readonly result: PolicyResult
}

/** Read a trace file (any format `parseTrace` knows); throws with the line at fault. @since 0.1.0 */
export const readTrace = (path: string): ReadonlyArray<TraceRequest> => {
  const parsed = parseTrace(readFileSync(path, "utf8"))
  if (isTraceError(parsed)) throw new Error(`${path} line ${parsed.line}: ${parsed.message}`)
  return parsed
}

/**
 * Run every policy on the same arrivals at each rate scale (glm-5.3 on h200, DP 8, the simulator's
 * defaults otherwise, each policy on its own engine: SGLang for these five).
 *
 * @since 0.1.0
 */
export const compare = (
  trace: ReadonlyArray<TraceRequest>,
  options: {
    readonly rates: ReadonlyArray<number>
    readonly limit?: number | undefined
    readonly policies?: ReadonlyArray<string> | undefined
    readonly engine?: "sglang" | "vllm" | undefined
    readonly frontEnds?: number | undefined
  }
): Array<Row> => {
  const model = models["glm-5.3"]!
  const gpu = gpus["h200"]!
  const config = { dpSize: 8, ...modelSimConfig(model, gpu), frontEnds: options.frontEnds }
  const rows: Array<Row> = []
  for (const rateScale of options.rates) {
    const arrivals = scaleTrace(trace, { rateScale, limit: options.limit })
    for (const name of options.policies ?? defaultPolicies) {
      const policy = findPolicy(name)
      if (policy === undefined) throw new Error(`policy ${name} is not registered`)
      const engine = options.engine ?? (policy.engine === "vllm" ? "vllm" : "sglang")
      rows.push({ rateScale, result: simulate({ ...config, engine }, arrivals, policy) })
    }
  }
  return rows
}

const s = (x: number | undefined, digits: number) => (x === undefined ? "-" : x.toFixed(digits))
const secs = (x: number | undefined) => (x === undefined ? "-" : x < 10 ? x.toFixed(2) : x.toFixed(1))

/**
 * One Markdown table per rate: latency percentiles, cache hit rate, the spread of requests per rank,
 * and TTFT p99 against the first policy (the upstream baseline, `total-tokens` by default).
 *
 * @since 0.1.0
 */
export const markdown = (rows: ReadonlyArray<Row>): Array<string> => {
  const out: Array<string> = []
  const rates = [...new Set(rows.map((r) => r.rateScale))]
  for (const rate of rates) {
    const at = rows.filter((r) => r.rateScale === rate)
    const base = at[0]!.result
    out.push(
      `rate x${rate}, ${base.requests.total} requests`,
      "",
      `| policy | TTFT p50 / p90 / p99 s | ITL p50 / p99 ms | E2E p50 / p99 s | cache hit | req/rank min-max | TTFT p99 vs ${base.policy} |`,
      "|---|---|---|---|---|---|---|"
    )
    for (const { result: r } of at) {
      const p99 = r.ttftSeconds.p99
      const b99 = base.ttftSeconds.p99
      const delta =
        r === base || p99 === undefined || b99 === undefined || b99 === 0
          ? ""
          : `${p99 >= b99 ? "+" : ""}${(((p99 - b99) / b99) * 100).toFixed(1)}%`
      // silent only when every request finished (rejections are named, as in the CLI's status)
      const status =
        r.status._tag === "Completed" && r.requests.finished === r.requests.total
          ? ""
          : ` (${r.status._tag === "Completed" ? "incomplete" : r.status._tag}, ${r.requests.finished} finished, ${r.requests.rejected} rejected)`
      out.push(
        `| ${r.policy}${status} | ${secs(r.ttftSeconds.p50)} / ${secs(r.ttftSeconds.p90)} / ${secs(p99)} | ` +
          `${s((r.itlSeconds.p50 ?? 0) * 1000, 1)} / ${s((r.itlSeconds.p99 ?? 0) * 1000, 0)} | ` +
          `${secs(r.e2eSeconds.p50)} / ${secs(r.e2eSeconds.p99)} | ${(r.prefixCacheHitRate * 100).toFixed(1)}% | ` +
          `${Math.min(...r.requestsPerRank)}-${Math.max(...r.requestsPerRank)} | ${delta} |`
      )
    }
    out.push("")
  }
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      trace: {
        type: "string",
        default: fileURLToPath(new URL("traces/mooncake/conversation_trace.jsonl", import.meta.url))
      },
      rates: { type: "string", default: "0.1" },
      limit: { type: "string" },
      policies: { type: "string" },
      engine: { type: "string" },
      "front-ends": { type: "string" }
    }
  })
  const engine = values.engine
  if (engine !== undefined && engine !== "sglang" && engine !== "vllm")
    throw new Error(`--engine must be sglang or vllm, got ${engine}`)
  const frontEnds = values["front-ends"] === undefined ? undefined : Number(values["front-ends"])
  const rates = values.rates.split(",").map(Number)
  if (rates.some((r) => !(r > 0))) throw new Error(`--rates must be positive numbers, got ${values.rates}`)
  const limit = values.limit === undefined ? undefined : Number(values.limit)
  const policies = values.policies?.split(",").map((p) => p.trim())
  const trace = readTrace(values.trace)
  process.stdout.write(
    `${relative(process.cwd(), values.trace)}: glm-5.3 on h200, DP 8${engine ? `, ${engine} engine` : ""}${frontEnds ? `, ${frontEnds} front ends` : ""}\n\n`
  )
  process.stdout.write(
    `${markdown(compare(trace, { rates, limit, policies, engine, frontEnds })).join("\n")}\n`
  )
}
