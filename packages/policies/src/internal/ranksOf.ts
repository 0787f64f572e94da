/**
 * The rank count a policy's state is built for: `dpSize` when it is a safe integer >= 0, else 0
 * (a state with no rank, whose every route is the policy's typed no-rank error, never a
 * `RangeError` from an array of length 2.5 and never rank 0 of 2.5 ranks). The registry refuses
 * such a size before, naming it; this keeps the policies used directly from throwing.
 *
 * @internal
 */
export const ranksOf = (dpSize: number): number => (isRankCount(dpSize) ? dpSize : 0)

/** Whether `dpSize` is a rank count a policy state can be built for: a safe integer >= 0. @internal */
export const isRankCount = (dpSize: number): boolean => Number.isSafeInteger(dpSize) && dpSize >= 0
