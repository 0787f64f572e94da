import { packageBuild } from "../../tsup.base"

// `./diagnose` is its own entry (the CLI's `diagnose` loads it without the router)
// the decode worker is its own file: `startLiveRouter` starts it with `new Worker(new URL(...))`
export default packageBuild([
  "src/index.ts",
  "src/Diagnose.ts",
  "src/testing/index.ts",
  "src/internal/decodeWorker.ts"
])
