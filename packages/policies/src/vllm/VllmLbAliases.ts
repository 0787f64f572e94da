/**
 * The flat names the `VllmLb` functions had before the policies package settled on one calling
 * style (namespaces, see CONTRIBUTING.md "Calling style"): kept so existing imports keep working.
 *
 * @since 0.1.0
 */
import * as VllmLb from "./VllmLb.js"

/**
 * Deprecated alias of `VllmLb.init`.
 *
 * **When to use**: never in new code; write `VllmLb.init`.
 *
 * @example
 * ```ts
 * import { VllmLb, vllmLbInit } from "@loadledger/policies"
 * vllmLbInit === VllmLb.init // => true
 * ```
 *
 * @deprecated Use `VllmLb.init`.
 * @category vllm
 * @since 0.1.0
 */
export const vllmLbInit: typeof VllmLb.init = VllmLb.init

/**
 * Deprecated alias of `VllmLb.score`.
 *
 * **When to use**: never in new code; write `VllmLb.score`.
 *
 * @example
 * ```ts
 * import { VllmLb, vllmLbScore } from "@loadledger/policies"
 * vllmLbScore === VllmLb.score // => true
 * ```
 *
 * @deprecated Use `VllmLb.score`.
 * @category vllm
 * @since 0.1.0
 */
export const vllmLbScore: typeof VllmLb.score = VllmLb.score

/**
 * Deprecated alias of `VllmLb.route`.
 *
 * **When to use**: never in new code; write `VllmLb.route`.
 *
 * @example
 * ```ts
 * import { VllmLb, vllmLbRoute } from "@loadledger/policies"
 * vllmLbRoute === VllmLb.route // => true
 * ```
 *
 * @deprecated Use `VllmLb.route`.
 * @category vllm
 * @since 0.1.0
 */
export const vllmLbRoute: typeof VllmLb.route = VllmLb.route

/**
 * Deprecated alias of `VllmLb.coord`.
 *
 * **When to use**: never in new code; write `VllmLb.coord`.
 *
 * @example
 * ```ts
 * import { VllmLb, vllmLbCoord } from "@loadledger/policies"
 * vllmLbCoord === VllmLb.coord // => true
 * ```
 *
 * @deprecated Use `VllmLb.coord`.
 * @category vllm
 * @since 0.1.0
 */
export const vllmLbCoord: typeof VllmLb.coord = VllmLb.coord

/**
 * Deprecated alias of `VllmLb.finish`.
 *
 * **When to use**: never in new code; write `VllmLb.finish`.
 *
 * @example
 * ```ts
 * import { VllmLb, vllmLbFinish } from "@loadledger/policies"
 * vllmLbFinish === VllmLb.finish // => true
 * ```
 *
 * @deprecated Use `VllmLb.finish`.
 * @category vllm
 * @since 0.1.0
 */
export const vllmLbFinish: typeof VllmLb.finish = VllmLb.finish
