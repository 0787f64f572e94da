// A throwaway redis-server / valkey-server for the shared-bookings tests: its own free port, no
// persistence; `stop` kills it, `start` brings it back on the same port (a lost store, regained).
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import { createServer, Socket } from "node:net"

/** The server binary on PATH (valkey first), or undefined. */
export const redisBinary = (): string | undefined =>
  ["valkey-server", "redis-server"].find((b) => spawnSync("sh", ["-c", `command -v ${b}`]).status === 0)

const freePort = async (): Promise<number> => {
  const s = createServer()
  s.listen(0, "127.0.0.1")
  await once(s, "listening")
  const port = (s.address() as { port: number }).port
  s.close()
  await once(s, "close")
  return port
}

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const c = new Socket()
    c.once("error", () => resolve(false))
    c.connect(port, "127.0.0.1", () => {
      c.write("PING\r\n")
      c.once("data", (d) => {
        c.destroy()
        resolve(String(d).startsWith("+PONG"))
      })
    })
  })

export interface RedisServer {
  readonly url: string
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
}

export const startRedisServer = async (binary: string): Promise<RedisServer> => {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn(
      binary,
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      {
        stdio: "ignore"
      }
    )
    const end = Date.now() + 10_000
    while (!(await answers(port))) {
      if (Date.now() > end) throw new Error(`${binary} did not answer on ${port}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: async () => {
      const c = child
      if (c === undefined || c.exitCode !== null) return
      const exited = once(c, "exit")
      c.kill("SIGKILL")
      await exited
    }
  }
}
