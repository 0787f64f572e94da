/**
 * A sweep's expansion into cells (one stable id each), how tables name a front end, and shards.
 *
 * @since 0.6.0
 */
import { type Cell, GOODPUT_REFERENCES, SpecError, type SweepSpec } from "./SpecTypes.js"

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "~")

/**
 * How tables name a front-end entry: `"vllm x4"`, and for rows other than the simulator's default
 * `"vllm x4, vllm rows"` / `"vllm x4, vllm-counts rows"` (each its own block).
 *
 * @example
 * ```ts
 * import { frontEndLabel } from "./Cells.js"
 * frontEndLabel({ engine: "sglang", clients: 1 }) // => "sglang x1"
 * frontEndLabel({ engine: "vllm", clients: 4, coordinatorRows: "vllm" }) // => "vllm x4, vllm rows"
 * ```
 *
 * @category sweep
 * @since 0.4.0
 */
export const frontEndLabel = (f: {
  readonly engine: string
  readonly clients?: number | undefined
  readonly frontEnds?: number | undefined
  readonly coordinatorRows?: string | undefined
}): string =>
  `${f.engine} x${f.clients ?? f.frontEnds}${f.coordinatorRows === undefined ? "" : `, ${f.coordinatorRows} rows`}`

/**
 * Every cell of the grid, in a fixed order (trace, rate, DP, front end, policy) with ids that are
 * stable across runs and machines (they name the cell's JSON file).
 *
 * @example
 * ```ts
 * import { expandCells } from "./Cells.js"
 * import { parseSpec } from "./Spec.js"
 * const spec = parseSpec("traces: [{path: /t/a.jsonl}]\nrates: [0.1]\npolicies: [total-tokens, vllm-kv-pressure]\nfrontEnds: [sglang, {engine: vllm, clients: 4}]\n", "/s/x.yaml")
 * expandCells(spec).map((c) => c.id)
 * // => ["a_r0.1_dp8_sglang1_total-tokens", "a_r0.1_dp8_sglang1_vllm-kv-pressure", "a_r0.1_dp8_vllm4_total-tokens", "a_r0.1_dp8_vllm4_vllm-kv-pressure"]
 * const honest = parseSpec("traces: [{path: /t/a.jsonl}]\nrates: [0.1]\npolicies: [total-tokens]\nfrontEnds: [{engine: vllm, clients: 4, coordinatorRows: vllm}]\n", "/s/x.yaml")
 * expandCells(honest)[0]?.id // => "a_r0.1_dp8_vllm4-vllmrows_total-tokens"
 * expandCells(honest)[0]?.coordinatorRows // => "vllm"
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const expandCells = (spec: SweepSpec): ReadonlyArray<Cell> => {
  const cells: Array<Cell> = []
  for (const t of spec.traces)
    for (const rate of t.rates)
      for (const dp of spec.dp)
        for (const fe of spec.frontEnds)
          for (const policy of spec.goodput === undefined
            ? spec.policies
            : [...spec.policies, ...GOODPUT_REFERENCES])
            cells.push({
              id: `${slug(t.name)}_${spec.goodput === undefined ? `r${rate}` : "goodput"}_dp${dp}_${fe.engine}${fe.clients}${fe.coordinatorRows === undefined ? "" : `-${fe.coordinatorRows}rows`}_${slug(policy)}`,
              trace: t.path,
              traceName: t.name,
              rate,
              limit: spec.limit,
              dp,
              engine: fe.engine,
              frontEnds: fe.clients,
              ...(fe.coordinatorRows === undefined ? {} : { coordinatorRows: fe.coordinatorRows }),
              policy,
              model: spec.model,
              gpu: spec.gpu,
              seed: spec.seed,
              ...(spec.goodput === undefined ? {} : { goodput: spec.goodput })
            })
  return cells
}

/**
 * Parse `i/n` (1-based shard `i` of `n`); the shard holds cells `k` (0-based, grid order) with
 * `k % n === i - 1`, so the shards partition the grid whatever its size.
 *
 * @example
 * ```ts
 * import { parseShard, inShard } from "./Cells.js"
 * const s = parseShard("2/3") // => { index: 2, count: 3 }
 * const mine = [0, 1, 2, 3, 4].filter((k) => inShard(s, k)) // => [1, 4]
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const parseShard = (text: string): { readonly index: number; readonly count: number } => {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim())
  const index = Number(m?.[1])
  const count = Number(m?.[2])
  if (m === null || count < 1 || index < 1 || index > count)
    throw new SpecError("--shard", `must be i/n with 1 <= i <= n, got "${text}"`)
  return { index, count }
}

/**
 * Whether grid cell number `k` (0-based) belongs to `shard`.
 *
 * @example
 * ```ts
 * import { inShard } from "./Cells.js"
 * const first = { index: 1, count: 2 }
 * ;[0, 1, 2, 3, 4].filter((k) => inShard(first, k)) // => [0, 2, 4]
 * ```
 *
 * @category sweep
 * @since 0.2.0
 */
export const inShard = (shard: { readonly index: number; readonly count: number }, k: number): boolean =>
  k % shard.count === shard.index - 1
