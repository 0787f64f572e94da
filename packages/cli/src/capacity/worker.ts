/**
 * The worker-thread entry of `loadledger capacity`: tinypool calls the default export with one probe.
 *
 * @since 0.5.0
 */
import type { CapacityProbe } from "@loadledger/sim"
import { type CapacityProbeJob, runCapacityProbe } from "./probe.js"

export default (job: CapacityProbeJob): CapacityProbe => runCapacityProbe(job)
