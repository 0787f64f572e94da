export * from "./VllmLbClient.js"
export * from "./VllmLbPolicy.js"
