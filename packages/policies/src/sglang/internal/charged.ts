/**
 * The persistent SGLang budget state in one namespace (`import * as Charged`): the state and its
 * classes (`ChargedState.ts`), into and out of it (`chargedLift.ts`), its routes
 * (`chargedRoutes.ts`).
 *
 * @internal
 */

export * from "./ChargedState.js"
export * from "./chargedLift.js"
export * from "./chargedRoutes.js"
