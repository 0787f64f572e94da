import { packageBuild } from "../../tsup.base"

// `core`: the model without the decoders and the calibration (no effect Schema at start-up)
export default packageBuild(["src/index.ts", "src/core.ts"])
