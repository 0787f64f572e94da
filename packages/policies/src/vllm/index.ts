export * from "./VllmCoordinator.js"
export * from "./VllmLbClient.js"
export * from "./VllmLbPolicy.js"
export * from "./VllmWave.js"
