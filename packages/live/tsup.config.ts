import { packageBuild } from "../../tsup.base"

// the decode worker is its own file: `startLiveRouter` starts it with `new Worker(new URL(...))`
export default packageBuild(["src/index.ts", "src/testing/index.ts", "src/internal/decodeWorker.ts"])
