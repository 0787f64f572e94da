/**
 * The report's per-rank charts: load over time as a heat map (rank x time) per run, requests and
 * tokens per rank, sync-wait and idle-rank shares, token imbalance buckets.
 *
 * @since 0.2.0
 */
import { type ChartSpec, downsampleMax, nonEmptyRange, type ReportRun, runLabel, sig } from "./model.js"
import { rankKindsOf } from "./rankKinds.js"

const MAX_COLUMNS = 400
/** Time labels with as many decimals as the span needs (0 past 100 s). */
const timeLabel = (span: number) => (t: number) => t.toFixed(span >= 100 ? 0 : span >= 10 ? 1 : 2)
const zoomX = [
  { type: "inside", xAxisIndex: 0 },
  { type: "slider", xAxisIndex: 0, bottom: 8, height: 18 }
]

/**
 * One heat map per run: ranks (rows) by time (columns, at most 400 after keeping each bin's
 * maximum), colour = requests running + waiting on the rank. All maps share one colour scale, so
 * the same colour means the same load in every policy. With the run's step log (`simulate
 * --report` keeps it) each row's label carries the rank's kind from the diagnosis of the run
 * (`rank 2 · hardware`; `hardware`, `load`, `expert` or `ok`: `rankKindsOf`).
 *
 * @example
 * ```ts
 * import { loadHeatmaps } from "./ranks.js"
 * import { runCell } from "../../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * const maps = loadHeatmaps([{ engine: "sglang", result }, { engine: "sglang", result, label: "again" }])
 * maps.map((c) => c.id) // => ["load-0", "load-1"]
 * maps[1]!.title // => "again (sglang): requests on each rank over time"
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const loadHeatmaps = (runs: ReadonlyArray<ReportRun>): Array<ChartSpec> => {
  const shaped = runs.map((run) => {
    const s = run.result.loadSamples
    return { run, ...downsampleMax(s.seconds, s.perRank, MAX_COLUMNS) }
  })
  let max = 1
  for (const s of shaped) for (const ys of s.perRank) for (const y of ys) if (y > max) max = y
  return shaped.map(({ run, seconds, perRank }, k) => {
    const data: Array<[number, number, number]> = []
    perRank.forEach((ys, rank) => {
      ys.forEach((y, i) => {
        data.push([i, rank, y])
      })
    })
    const ranks = perRank.length
    const kinds = rankKindsOf(run.result, ranks)
    return {
      id: `load-${k}`,
      title: `${runLabel(run)} (${run.engine}): requests on each rank over time`,
      how: "One row per DP rank, time runs left to right; the colour is the number of requests running + waiting on that rank (same scale for every policy). A balanced policy gives even colour down each column; a dark cell in a pale column is one rank holding a pile-up the others do not share. Hover for values; drag the slider or scroll to zoom in time. Each row's label says which kind of slow the diagnosis of the run (as `loadledger diagnose` reads the loads the engine would publish) finds the rank: hardware (slower at equal load: GPU, CPU or link), load (it holds more), expert (it holds hot experts) or ok.",
      height: Math.max(200, Math.min(700, 90 + ranks * 22)),
      option: {
        grid: { top: 10, left: 110, right: 90, bottom: 70 },
        tooltip: { position: "top" },
        xAxis: {
          type: "category",
          name: "simulated seconds",
          nameLocation: "middle",
          nameGap: 26,
          data: seconds.map(timeLabel(seconds[seconds.length - 1] ?? 0)),
          splitArea: { show: false }
        },
        yAxis: {
          type: "category",
          inverse: true,
          data: perRank.map((_, r) => (kinds === undefined ? `rank ${r}` : `rank ${r} · ${kinds[r]}`))
        },
        visualMap: {
          min: 0,
          max,
          calculable: true,
          orient: "vertical",
          right: 8,
          top: "middle",
          itemHeight: Math.max(60, Math.min(200, ranks * 18)),
          text: ["reqs", ""],
          inRange: { color: ["#f7fbff", "#6baed6", "#08306b", "#e6550d"] }
        },
        dataZoom: zoomX,
        series: [
          {
            type: "heatmap",
            name: runLabel(run),
            data,
            progressive: 0,
            emphasis: { itemStyle: { borderColor: "#000", borderWidth: 1 } }
          }
        ]
      }
    }
  })
}

const barChart = (
  id: string,
  title: string,
  how: string,
  categories: ReadonlyArray<string>,
  series: ReadonlyArray<{ name: string; data: ReadonlyArray<number | null> }>,
  yName: string,
  percent = false
): ChartSpec => ({
  id,
  title,
  how,
  height: 360,
  option: {
    legend: { top: 0, type: "scroll" },
    grid: { top: 40, left: 70, right: 30, bottom: 70 },
    tooltip: { trigger: "axis", axisPointer: { type: "shadow" } },
    xAxis: { type: "category", data: categories },
    yAxis: { type: "value", name: yName, ...(percent ? { axisLabel: { formatter: "{value}%" } } : {}) },
    dataZoom: categories.length > 12 ? zoomX : [{ type: "inside", xAxisIndex: 0 }],
    series: series.map((s) => ({ type: "bar", name: s.name, data: s.data, emphasis: { focus: "series" } }))
  }
})

/**
 * Requests and tokens (prefill computed + decode) each rank received, one bar series per run, and
 * each run's sync-wait and idle-rank shares.
 *
 * @example
 * ```ts
 * import { rankCharts } from "./ranks.js"
 * import { runCell } from "../../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * rankCharts([{ engine: "sglang", result }]).map((c) => c.id) // => ["shares", "requests-per-rank", "tokens-per-rank"]
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const rankCharts = (runs: ReadonlyArray<ReportRun>): Array<ChartSpec> => {
  const ranks = Math.max(0, ...runs.map((r) => r.result.requestsPerRank.length))
  const rankNames = Array.from({ length: ranks }, (_, i) => `rank ${i}`)
  const labels = runs.map(runLabel)
  const out: Array<ChartSpec> = [
    barChart(
      "shares",
      "Sync wait and idle ranks per policy",
      "Sync wait: the share of rank time spent waiting at the lockstep barrier for the slowest rank. Idle ranks: the share of rank-steps that ran an idle (dummy) batch while another rank worked. Both are capacity lost to imbalance: lower is better.",
      labels,
      [
        { name: "sync wait", data: runs.map((r) => sig(100 * r.result.syncWaitShare)) },
        { name: "idle rank-steps", data: runs.map((r) => sig(100 * r.result.idleRankStepShare)) }
      ],
      "% of rank time / steps",
      true
    ),
    barChart(
      "requests-per-rank",
      "Requests routed to each rank",
      "One bar group per rank, one bar per policy: how many requests each rank was given. Even bars within a colour mean an even split of requests (which still says nothing about their sizes: see tokens below).",
      rankNames,
      runs.map((r, k) => ({ name: labels[k]!, data: r.result.requestsPerRank.map((x) => x) })),
      "requests"
    )
  ]
  if (runs.some((r) => r.result.tokensPerRank !== undefined))
    out.push(
      barChart(
        "tokens-per-rank",
        "Tokens computed on each rank (prefill + decode)",
        "The work each rank did: prompt tokens it prefilled (not served from cache) plus tokens it decoded. A policy that balances requests but not tokens shows even request bars and uneven token bars.",
        rankNames,
        runs.map((r, k) => {
          const t = r.result.tokensPerRank
          return {
            name: labels[k]!,
            data: t ? t.prefillComputed.map((p, i) => p + (t.decode[i] ?? 0)) : rankNames.map(() => null)
          }
        }),
        "tokens"
      )
    )
  return out
}

/**
 * The token imbalance ratio per step (max over mean of the ranks' tokens, SGLang's buckets) as the
 * share of steps per bucket, trimmed to the buckets that hold any step.
 *
 * @example
 * ```ts
 * import { imbalanceChart } from "./ranks.js"
 * import { runCell } from "../../sweep/runCell.js"
 * const { result } = runCell({
 *   id: "demo", trace: "examples/traces/mooncake/conversation_trace.jsonl", traceName: "conversation", rate: 1,
 *   limit: 8, dp: 2, engine: "sglang", frontEnds: 1, policy: "total-tokens", model: "glm-5.3", gpu: "h200", seed: 0
 * })
 * imbalanceChart([{ engine: "sglang", result }])?.id // => "imbalance"
 * const idle = { ...result, imbalanceHistogram: { ...result.imbalanceHistogram, counts: result.imbalanceHistogram.counts.map(() => 0) } }
 * imbalanceChart([{ engine: "sglang", result: idle }]) // => undefined
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const imbalanceChart = (runs: ReadonlyArray<ReportRun>): ChartSpec | undefined => {
  const counts = runs.map((r) => r.result.imbalanceHistogram.counts)
  const range = nonEmptyRange(counts)
  if (range === undefined) return undefined
  const le = runs[0]!.result.imbalanceHistogram.le
  const label = (i: number) =>
    i === 0 ? `≤ ${le[0]}` : i >= le.length ? `> ${le[le.length - 1]}` : `${le[i - 1]} - ${le[i]}`
  const idx = Array.from({ length: range[1] - range[0] + 1 }, (_, k) => range[0] + k)
  const light = runs.filter((r) => isLightLoad(r.result)).map(runLabel)
  const chart = barChart(
    "imbalance",
    "Token imbalance per step (max / mean tokens over ranks)",
    "Each step, the busiest rank's tokens divided by the mean over ranks (1 = perfectly even; 2 = the busiest rank ran twice the mean, so the others waited). Bars are the share of steps in each of SGLang's buckets; only buckets that hold a step are shown. Mass to the left is better.",
    idx.map(label),
    runs.map((r, k) => {
      const cs = counts[k]!
      const total = cs.reduce((a, b) => a + b, 0)
      return { name: runLabel(r), data: idx.map((i) => (total ? sig((100 * (cs[i] ?? 0)) / total) : null)) }
    }),
    "% of steps",
    true
  )
  return light.length === 0 ? chart : { ...chart, note: lightLoadNote(light) }
}

/**
 * Whether a run was at light load: fewer than {@link LIGHT_DECODES_PER_RANK} requests decoding per
 * rank per step on average (decode tokens over steps x ranks, the ranks counted by `requestsPerRank`). There max over mean is inflated: one
 * rank with 2 requests against a mean of 0.5 reads 4x, though no rank is busy.
 *
 * @example
 * ```ts
 * import { isLightLoad } from "./ranks.js"
 * const r = { tokens: { decode: 300 }, steps: 100, requestsPerRank: [1, 1, 1, 1] }
 * isLightLoad(r as never) // => true
 * isLightLoad({ ...r, tokens: { decode: 4000 } } as never) // => false
 * ```
 *
 * @category report
 * @since 0.6.0
 */
export const isLightLoad = (r: ReportRun["result"]): boolean => {
  const ranks = r.requestsPerRank.length
  return r.steps > 0 && ranks > 0 && r.tokens.decode / (r.steps * ranks) < LIGHT_DECODES_PER_RANK
}

/**
 * Below this many requests decoding per rank per step (on average), a run counts as light load.
 *
 * @example
 * ```ts
 * import { LIGHT_DECODES_PER_RANK } from "./ranks.js"
 * LIGHT_DECODES_PER_RANK // => 4
 * ```
 *
 * @category report
 * @since 0.6.0
 */
export const LIGHT_DECODES_PER_RANK = 4

const lightLoadNote = (runs: ReadonlyArray<string>): string =>
  `light load inflates max / mean: with fewer than ${LIGHT_DECODES_PER_RANK} requests decoding per rank per step on average (${runs.join(", ")}), one extra request on a rank moves the ratio by a whole step (2 requests against a mean of 0.5 reads 4x) though no rank is busy. Read the sync-wait and idle-rank shares, or run at a higher --rate-scale, before calling a policy unbalanced.`
