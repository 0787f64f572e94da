/**
 * Hand-written fast-check arbitraries for every `@loadledger/schema` type (effect 4 has no
 * Schema -> fast-check bridge), one module per schema module under `arbitraries/`. Each one is
 * checked against `Schema.is` by `assertSchemaLaws` in this package's tests. fast-check is an
 * optional peer dependency.
 *
 * @since 0.1.0
 */
export * from "./arbitraries/GetLoad.js"
export * from "./arbitraries/LoadEntry.js"
export * from "./arbitraries/LoadSnapshot.js"
export * from "./arbitraries/LoadSnapshotSections.js"
export * from "./arbitraries/LoadStat.js"
export * from "./arbitraries/Metrics.js"
export * from "./arbitraries/MlpSync.js"
export * from "./arbitraries/V1Loads.js"
export * from "./arbitraries/Vllm.js"
export * from "./arbitraries/VllmLogger.js"
