// Worker entry when the CLI runs from its TypeScript sources under tsx (development, tests): a
// worker thread does not inherit tsx's loader, so register it here, then load the real entry.
// The built package uses dist/capacity-worker.js instead.
import { register } from "tsx/esm/api"

register()
export default (await import("./worker.ts")).default
