import { packageBuild } from "../../tsup.base"

export default packageBuild(["src/index.ts", "src/bin.ts"], {
  entry: {
    index: "src/index.ts",
    bin: "src/bin.ts",
    "sweep-worker": "src/sweep/worker.ts",
    "goodput-worker": "src/goodput/worker.ts",
    "capacity-worker": "src/capacity/worker.ts"
  }
})
