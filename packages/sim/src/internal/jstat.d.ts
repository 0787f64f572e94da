/** The one part of jstat (https://github.com/jstat/jstat, MIT) the verdict uses: Student's t quantile. */
declare module "jstat" {
  const jstat: {
    readonly jStat: {
      readonly studentt: { readonly inv: (p: number, dof: number) => number }
    }
  }
  export default jstat
}
