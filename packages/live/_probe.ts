import { decodeLedger } from "@loadledger/schema"
import { Result } from "effect"
const show = (label: string, text: string, kind: any) => {
  const r = decodeLedger(text, kind)
  console.log(label.padEnd(30), JSON.stringify(text.slice(-20)), Result.isFailure(r) ? `FAIL ${r.failure._tag}: ${r.failure.message.slice(0, 120)}` : JSON.stringify(r.success))
}
const base = 'vllm:num_requests_running{engine="0",model_name="m"} 27.0\nvllm:num_requests_running{engine="1",model_name="m"} 5.0\n'
const last = 'vllm:num_requests_waiting{engine="0",model_name="m"} 12.0\n'
for (let c = 40; c <= last.length; c++) show(`cut ${c}`, base + last.slice(0, c), "vllm-metrics")
