/**
 * Vidur's GPU names and the presets they map to: a leaf module below the Vidur readers.
 *
 * @since 0.7.0
 */

/**
 * Vidur's GPU names mapped to the {@link gpus} presets: `a100` (A100 80 GB), `h100`, `a40`;
 * network devices `a100_dgx` (8 x A100 SXM, NVSwitch) to `a100-80gb`.
 *
 * @example
 * ```ts
 * import { vidurGpus } from "@loadledger/step-time"
 * vidurGpus["a100"] // => "a100-80gb"
 * ```
 *
 * @category calibration
 * @since 0.2.0
 */
export const vidurGpus: Record<string, string> = {
  a100: "a100-80gb",
  h100: "h100-80gb",
  a40: "a40",
  a100_dgx: "a100-80gb"
}
