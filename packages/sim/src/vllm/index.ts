/**
 * vLLM's engine-side models: the DP coordinator and the wave model.
 *
 * @since 0.2.0
 */
export * from "./VllmCoordinator.js"
export * from "./VllmCoordTypes.js"
export * from "./VllmCoordWave.js"
export * from "./VllmWave.js"
export * from "./VllmWaveTypes.js"
