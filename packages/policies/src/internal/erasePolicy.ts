/**
 * The one cast of the policy registry: a `Policy<S>` seen as a `Policy<unknown>`, so entries of
 * policies with different state types fit one `PolicyEntry` list.
 *
 * @internal
 */
import type { Policy } from "../Policy.js"

/**
 * `policy` typed as `Policy<unknown>`. Sound as the registry uses it: a caller threads only the
 * states that policy's own `init`, `observe`, `route`, `finish` and `setStatus` returned.
 *
 * @internal
 */
export const erasePolicy = <S>(policy: Policy<S>): Policy<unknown> => policy as unknown as Policy<unknown>
