/**
 * `traceTokenIds` from its tally: of `total` requests, `fromTrace` carry token ids and `blockHashes`
 * block hashes without them (an array's, or a streamed trace's counted as it is read).
 */
import type { TraceTokenIds } from "../TokenIdsTypes.js"

export const tokenIdsTally = (
  fromTrace: number,
  blockHashes: number,
  total: number,
  maxSynthesisedTokens: number
): TraceTokenIds => {
  const synthetic = total - fromTrace - blockHashes
  const origin =
    fromTrace === total
      ? "trace"
      : blockHashes === total
        ? "block-hashes"
        : synthetic === total
          ? "synthetic"
          : "mixed"
  return { origin, requests: { trace: fromTrace, blockHashes, synthetic }, maxSynthesisedTokens }
}
