import { extractDocExamples, readmeUsage } from "./docExamples.js"

for (const p of process.argv.slice(2)) {
  const dir = new URL(`../packages/${p}/`, import.meta.url)
  for (const e of [...extractDocExamples(dir), readmeUsage(dir)])
    if (e) console.log(`### ${e.location} ${e.name}\n${e.code}`)
}
