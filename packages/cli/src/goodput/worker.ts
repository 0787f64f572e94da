/**
 * The worker-thread entry of `loadledger goodput`: tinypool calls the default export with one job.
 *
 * @since 0.5.0
 */
import { type GoodputJob, type GoodputJobResult, runGoodputJob } from "./jobs.js"

export default (job: GoodputJob): GoodputJobResult => runGoodputJob(job)
