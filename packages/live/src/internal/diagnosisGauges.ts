/**
 * The router's diagnosis series (see `Metrics.ts`): per rank `loadledger_rank_diagnosis{worker,
 * dp_rank,kind}` 1 and its evidence as gauges, per worker the group's, read at scrape time from
 * `diagnoses()` (`diagnoseWindow` over the polled loads).
 */
import { Gauge, type Registry } from "prom-client"
import type { Diagnosis, RankVerdict } from "../DiagnoseTypes.js"

type Diagnoses = () => ReadonlyArray<{ readonly worker: string; readonly diagnosis: Diagnosis }>

const EVIDENCE: ReadonlyArray<readonly [string, keyof RankVerdict["evidence"], string]> = [
  ["utilization_ratio", "utilizationRatio", "the rank's forward time over the group's mean"],
  ["residual", "residual", "the share of the rank's forward time its load does not explain"],
  ["running_skew", "runningSkew", "running requests over the group's mean, less 1"],
  [
    "request_skew",
    "requestSkew",
    "running + waiting requests over the group's mean, less 1 (absent when waiting is not published)"
  ],
  ["length_skew", "lengthSkew", "KV tokens per running request over the group's mean, less 1"],
  [
    "cache_hit_rate_gap",
    "cacheHitRateGap",
    "the group's mean cache hit rate less the rank's (absent when not published)"
  ]
]

/** Register the diagnosis gauges on `registers`. */
export const diagnosisGauges = (registers: Array<Registry>, diagnoses: Diagnoses): void => {
  new Gauge({
    name: "loadledger_rank_diagnosis",
    help: "1 for each rank's kind of slow over the diagnosis window (hardware: GPU, CPU or link; load; expert; ok).",
    labelNames: ["worker", "dp_rank", "kind"],
    registers,
    collect() {
      this.reset()
      for (const { worker, diagnosis } of diagnoses())
        for (const r of diagnosis.ranks) this.set({ worker, dp_rank: String(r.dpRank), kind: r.kind }, 1)
    }
  })
  for (const [suffix, field, help] of EVIDENCE)
    new Gauge({
      name: `loadledger_rank_diagnosis_${suffix}`,
      help: `Diagnosis evidence (median over the window): ${help}.`,
      labelNames: ["worker", "dp_rank"],
      registers,
      collect() {
        this.reset()
        for (const { worker, diagnosis } of diagnoses())
          for (const r of diagnosis.ranks) {
            const v = r.evidence[field]
            if (v !== undefined) this.set({ worker, dp_rank: String(r.dpRank) }, v)
          }
      }
    })
  const group = (name: string, help: string, of: (d: Diagnosis) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["worker"],
      registers,
      collect() {
        this.reset()
        for (const { worker, diagnosis } of diagnoses()) this.set({ worker }, of(diagnosis))
      }
    })
  group(
    "loadledger_group_diagnosis_reports",
    "Reports with every rank busy in the diagnosis window.",
    (d) => d.group.evidence.reports
  )
  group(
    "loadledger_group_sync_wait_share",
    "Mean share of its busy time a rank waits for the slowest (diagnosis window).",
    (d) => d.group.evidence.syncWaitShare
  )
  group(
    "loadledger_group_expert_hot_spot_likely",
    "1 when an expert hot spot is likely (diagnosis window).",
    (d) => (d.group.expertHotSpotLikely ? 1 : 0)
  )
  group(
    "loadledger_group_structural_likely",
    "1 when structural slowness is likely (diagnosis window).",
    (d) => (d.group.structuralLikely ? 1 : 0)
  )
}
