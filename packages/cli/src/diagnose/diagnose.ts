/**
 * The diagnosis `loadledger diagnose` prints: the pure core lives in @loadledger/live
 * (`@loadledger/live/diagnose`, shared with the live router's diagnosis metrics); this module re-exports it for
 * the CLI and the benchmark (`bench/diagnose.ts`).
 *
 * @since 0.6.0
 */

export type {
  DiagnoseRow,
  DiagnoseThresholds,
  Diagnosis,
  HardwareCause,
  RankVerdict
} from "@loadledger/live/diagnose"
/**
 * The diagnosis and its shapes, from @loadledger/live (`diagnose`, `DEFAULT_THRESHOLDS`,
 * `DiagnoseRow`, `DiagnoseThresholds`, `RankVerdict`, `Diagnosis`, `HardwareCause`).
 *
 * @example
 * ```ts
 * import { DEFAULT_THRESHOLDS, diagnose } from "./diagnose.js"
 * diagnose([]).group.evidence.reports // => 0
 * DEFAULT_THRESHOLDS.loadSkew // => 0.2
 * ```
 *
 * @category diagnose
 * @since 0.6.0
 */
export { DEFAULT_THRESHOLDS, diagnose } from "@loadledger/live/diagnose"
