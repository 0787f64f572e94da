/**
 * What the docstring checks of `docExamples.ts` still let pass, by name: public value exports with
 * no `@example` and source files with no module docstring. Each list may only shrink (a listed
 * item that is fixed fails the check until it is taken off), so nothing new joins them.
 *
 * Why they are here (issue 15, "an executed `@example` for every public export"): the own and
 * peer policies, the simulator, the step-time model and the testing kit were being changed by
 * other contributors when the checks came in; the CLI's command modules are internal to the `loadledger`
 * command (only `program` / `main` are its API) and still wait for their examples (a `register`
 * example needs `commander`, which the example runner in `test-support/` does not resolve).
 *
 * @since 0.1.0
 */

/** `path name` of value exports without an `@example` (as `exportsWithoutExample` lists them). */
export const pendingExamples: ReadonlyArray<string> = [
  "packages/step-time/src/index.ts version",
  "packages/testing/src/Arbitraries.ts memoryMetrics",
  "packages/testing/src/Arbitraries.ts speculativeMetricsV1",
  "packages/testing/src/Arbitraries.ts speculativeMetricsV3",
  "packages/testing/src/Arbitraries.ts loraMetrics",
  "packages/testing/src/Arbitraries.ts disaggregationMetrics",
  "packages/testing/src/Arbitraries.ts queueMetricsV1",
  "packages/testing/src/Arbitraries.ts queueMetricsV3",
  "packages/testing/src/Arbitraries.ts loadSnapshotV1",
  "packages/testing/src/Arbitraries.ts loadSnapshotV2",
  "packages/testing/src/Arbitraries.ts loadSnapshotV3",
  "packages/testing/src/Arbitraries.ts loadEntryV1",
  "packages/testing/src/Arbitraries.ts loadEntryV2",
  "packages/testing/src/Arbitraries.ts loadEntryV3",
  "packages/testing/src/Arbitraries.ts v1LoadsAggregate",
  "packages/testing/src/Arbitraries.ts v1LoadsResponsePreShm",
  "packages/testing/src/Arbitraries.ts v1LoadsResponseShmV1",
  "packages/testing/src/Arbitraries.ts v1LoadsResponseShmV2",
  "packages/testing/src/Arbitraries.ts v1LoadsResponseShmV3",
  "packages/testing/src/Arbitraries.ts getLoadEntry",
  "packages/testing/src/Arbitraries.ts getLoadResponse",
  "packages/testing/src/Arbitraries.ts loadStat",
  "packages/testing/src/Arbitraries.ts loadStatTagged",
  "packages/testing/src/Arbitraries.ts mlpSyncBatchInfo",
  "packages/testing/src/Arbitraries.ts mlpSyncRows",
  "packages/testing/src/Arbitraries.ts engineCounts",
  "packages/testing/src/Arbitraries.ts coordinatorUpdate",
  "packages/testing/src/Arbitraries.ts schedulerStats",
  "packages/testing/src/Arbitraries.ts vllmEngineMetrics",
  "packages/testing/src/Arbitraries.ts sglangRankMetrics",
  "packages/testing/src/Arbitraries.ts vllmLoggerRecord",
  "packages/testing/src/PolicyLaws.ts lawNames",
  "packages/testing/src/RegistryLaws.ts registryArbitraries",
  "packages/testing/src/index.ts version"
]

/** Repository-relative paths of source files without a module docstring. */
export const pendingModuleDocs: ReadonlyArray<string> = [
  "packages/policies/src/own/CacheAffinity.ts",
  "packages/policies/src/own/Entries.ts",
  "packages/policies/src/own/LedgerBalanced.ts",
  "packages/policies/src/peers/production-stack/Entries.ts",
  "packages/policies/src/peers/production-stack/index.ts",
  "packages/policies/src/peers/smg/Entries.ts",
  "packages/policies/src/peers/smg/index.ts",
  "packages/policies/src/peers/smg/internal/common.ts",
  "packages/testing/src/InflightLaw.ts"
]
