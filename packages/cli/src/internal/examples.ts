/**
 * The examples every command's `--help` ends with: real commands on files of this repository, run
 * from its root. `test/helpExamples.test.ts` runs each one in a shell (with `fast` appended, so
 * the test stays short; `serve`'s `--check` checks every flag and exits without listening; in the
 * order of its command list, so `serve` reads the `tuned.json` that `tune`'s example wrote), so an
 * example that stops working fails the tests.
 *
 * @internal
 */

/** One example: what it shows, the command line as a user types it, and the test's shortening flags. */
export interface HelpExample {
  readonly note: string
  readonly run: string
  /** Flags the test appends to keep it short (e.g. `--limit 200`); the help shows `run` alone. */
  readonly fast?: string | undefined
}

const mooncake = "examples/traces/mooncake/conversation_trace.jsonl"
const azure = "fixtures/traces/azure2023/AzureLLMInferenceTrace_conv.csv"
const quickGoodput = "--limit 400 --windows 2 --precision 0.25 --no-curves --jobs 1"

/** The examples of each command, by command name (`""`: the root help). */
export const EXAMPLES: Readonly<Record<string, ReadonlyArray<HelpExample>>> = {
  "": [
    { note: "what can be simulated: policies, models, GPUs, SLO presets", run: "loadledger list policies" },
    {
      note: "the demo's five reference policies on the Mooncake trace at a tenth of its rate",
      run: `loadledger simulate --trace ${mooncake} --rate-scale 0.1`,
      fast: "--limit 200"
    },
    {
      note: "which of two policies serves a trace best under a latency SLO, with the paired verdict",
      run: `loadledger compare --trace ${azure} --policies round-robin,total-tokens`,
      fast: quickGoodput
    }
  ],
  decode: [
    {
      note: "SGLang's /v1/loads answer as a per-rank ledger",
      run: "loadledger decode fixtures/payloads/sglang_v1_loads_docs_example.json"
    },
    {
      note: "vLLM's logger lines, as JSON",
      run: "loadledger decode fixtures/payloads/vllm_logger_dp8_waiting_stack__vllm_issue36748.log --json"
    },
    {
      note: "from stdin",
      run: "cat fixtures/payloads/sglang_get_load_legacy_single_rank.json | loadledger decode -"
    }
  ],
  conformance: [
    {
      note: "every peer router's golden vectors",
      run: "loadledger conformance fixtures/reference/peers/*.json"
    },
    { note: "one file", run: "loadledger conformance fixtures/reference/peers/smg.json" }
  ],
  "step-time": [
    {
      note: "one step of two ranks, each with one 8192-token request",
      run: "loadledger step-time --model glm-5.3 --gpu h200 --ranks '[[8192],[8192]]'"
    },
    {
      note: "an imbalanced step (one long request on rank 0), as JSON",
      run: "loadledger step-time --model glm-5.3 --gpu h200 --ranks '[[8192,8192,8192,204800],[8192,8192,8192,8192]]' --json"
    }
  ],
  calibrate: [
    {
      note: "fit the step-time model to splitwise's Llama-2-70B profile and report held-out error",
      run: "loadledger calibrate --profile fixtures/calibration/splitwise/perf_model_llama2-70b.csv --model llama2-70b --gpu h100-80gb"
    },
    {
      note: "the same as JSON, with 3 folds",
      run: "loadledger calibrate --profile fixtures/calibration/splitwise/perf_model_llama2-70b.csv --model llama2-70b --gpu h100-80gb --folds 3 --json"
    }
  ],
  simulate: [
    {
      note: "the demo's five reference policies (the default set) at a tenth of the trace's rate",
      run: `loadledger simulate --trace ${mooncake} --rate-scale 0.1`,
      fast: "--limit 200"
    },
    {
      note: "two policies on 4 ranks, with an HTML report",
      run: `loadledger simulate --trace ${mooncake} --policies round-robin,total-tokens --dp 4 --report report.html`,
      fast: "--limit 200"
    },
    {
      note: "a model at tensor parallel 2 that does not fit on one GPU, as JSON",
      run: `loadledger simulate --trace ${mooncake} --policy total-tokens --model llama2-70b --gpu h200 --tp 2 --json`,
      fast: "--limit 100"
    }
  ],
  diagnose: [
    {
      note: "a group of 4 with rank 2 at 70% speed, its /v1/loads reports written to loads.jsonl",
      run: `loadledger simulate --trace ${azure} --limit 600 --policy round-robin --dp 4 --slow-rank 2:0.7 --emit-loads loads.jsonl --quiet`
    },
    { note: "which kind of slow is each rank (rank 2: hardware)", run: "loadledger diagnose loads.jsonl" },
    {
      note: "the same as JSON: { ranks: [{ dpRank, kind, evidence }], group }",
      run: "loadledger diagnose loads.jsonl --json"
    }
  ],
  capacity: [
    {
      note: "the largest rate a DP-8 group keeps up with, and 70% / 90% of it",
      run: `loadledger capacity --trace ${mooncake} --start 0.25`,
      fast: "--limit 300"
    },
    {
      note: "another policy, as JSON",
      run: `loadledger capacity --trace ${mooncake} --policy round-robin --dp 4 --json`,
      fast: "--limit 300"
    }
  ],
  goodput: [
    {
      note: "the five reference policies (the default set) ranked by goodput, with a report",
      run: `loadledger goodput --trace ${azure} --slo mlperf-deepseek-r1 --report goodput.html`,
      fast: quickGoodput
    },
    {
      note: "every registered policy, a hand-written SLO, as JSON",
      run: `loadledger goodput --trace ${azure} --policies all --slo ttft=2s,tpot=100ms --json`,
      fast: `${quickGoodput} --dp 2`
    }
  ],
  tune: [
    {
      note: "tune the shipped default's weights on the Mooncake trace; the configuration to tuned.json",
      run: `loadledger tune --trace ${mooncake} --slo distserve-summarization-opt-66b --out tuned.json`,
      fast: "--limit 240 --windows 2 --budget 2 --precision 0.25 --dp 2"
    },
    {
      note: "behind four vLLM front ends, from another own policy, the JSON on stdout",
      run: `loadledger tune --trace ${azure} --engine vllm --front-ends 4 --from ledger-scored --budget 12`,
      fast: "--limit 240 --windows 2 --budget 2 --precision 0.25 --dp 2"
    }
  ],
  serve: [
    {
      note: "in front of two SGLang engines with DP attention 8 (polls /v1/loads), on port 8000",
      run: "loadledger serve --worker http://10.0.0.1:30000 --worker http://10.0.0.2:30000 --dp 8 --policy total-tokens",
      fast: "--check"
    },
    {
      note: "a vLLM engine at DP 4 (polls /metrics), its own balancer's policy, with the served model's step cost",
      run: "loadledger serve --worker http://127.0.0.1:8001 --dp 4 --source vllm-metrics --policy vllm-kv-pressure --model glm-5.3 --gpu h200 --port 8080",
      fast: "--check"
    },
    {
      note: "the workers an SMG gateway reports, with the configuration tune wrote to tuned.json (tune's first example)",
      run: "loadledger serve --gateway smg=http://127.0.0.1:30080 --dp 8 --policy-config tuned.json",
      fast: "--check"
    }
  ],
  compare: [
    {
      note: "two policies by goodput under an SLO: which is better, by how much, with its interval",
      run: `loadledger compare --trace ${azure} --policies round-robin,total-tokens`,
      fast: quickGoodput
    },
    {
      note: "the five reference policies, every pair, as JSON",
      run: `loadledger compare --trace ${azure} --slo ttft=2s,tpot=100ms --json`,
      fast: `${quickGoodput} --dp 2`
    }
  ],
  sweep: [
    {
      note: "a grid that runs in seconds",
      run: "loadledger sweep examples/sweeps/tiny.yaml --out sweep-results/tiny"
    },
    {
      note: "how many cells the full comparison has and how long it would take, without running it",
      run: "loadledger sweep examples/sweeps/compare.yaml --dry-run"
    },
    {
      note: "combine two shards' folders",
      run: "loadledger sweep merge sweep-results/both sweep-results/tiny sweep-results/tiny"
    }
  ],
  list: [
    { note: "the registered policies: source, engine, what each does", run: "loadledger list policies" },
    { note: "model presets and the GPUs each fits on, as JSON", run: "loadledger list models --json" },
    { note: "the SLO presets goodput and compare take (--slo NAME)", run: "loadledger list slo" }
  ],
  reproduce: [
    {
      note: "the published end-to-end results it replays, with their sources",
      run: "loadledger reproduce --list"
    },
    {
      note: "the same as JSON, with each scenario's open assumptions",
      run: "loadledger reproduce --list --json"
    },
    {
      note: "vLLM's prefill schedule interval (PR #44558): published beside modelled, about 1 s",
      run: "loadledger reproduce vllm-prefill-interval"
    }
  ],
  completion: [
    { note: "bash, for this shell", run: "source <(loadledger completion bash)" },
    {
      note: "zsh, for every new shell",
      run: "loadledger completion zsh > ~/.zfunc/_loadledger",
      fast: ""
    },
    { note: "fish", run: "loadledger completion fish > ~/.config/fish/completions/loadledger.fish" }
  ]
}

/**
 * The `Examples:` block `command`'s `--help` ends with (`""`: the root help).
 */
export const examplesHelp = (command: string): string => {
  const xs = EXAMPLES[command] ?? []
  return `\nExamples:\n${xs.map((x) => `  # ${x.note}\n  $ ${x.run}`).join("\n")}\n`
}
