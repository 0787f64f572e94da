export * from "./PrefixAware.js"
export * from "./Qps.js"
export * from "./RoundRobin.js"
export * from "./Session.js"
