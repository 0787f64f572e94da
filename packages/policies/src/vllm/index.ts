export * from "./VllmCoordinator.js"
export * from "./VllmLbClient.js"
export * from "./VllmWave.js"
