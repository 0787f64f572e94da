/** Priors in theta units (1/efficiency or seconds), for the fit and the identifiability check. */
import { type Priors, priorCentres } from "../Priors.js"
import { parameterNames, toTheta } from "./theta.js"

export const thetaPrior = (priors: Priors): { centre: Array<number>; sd: Array<number> } => {
  const centre = toTheta(priorCentres(priors))
  const sd = parameterNames.map((n, i) => priors[n].relativeSd * centre[i]!)
  return { centre, sd }
}
