// ag-server's CLI from outside, for the tests that run dist/ag-server.mjs as a process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import type { Test } from 'tap'
import { fileURLToPath } from 'node:url'

export const SERVER = fileURLToPath(new URL('../../dist/ag-server.mjs', import.meta.url))

/** Run `ag-server ...args` to its end, with only PATH in its environment. */
export function run(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SERVER, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '' },
    timeout: 60_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Resolves once `ag-server serve` has printed its listening line; rejects if it exits first. */
export function listening(serve: ChildProcess): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let seen = ''
    serve.stdout?.on('data', (b: Buffer) => {
      seen += b.toString()
      if (/listening on/.test(seen)) resolve()
    })
    serve.once('exit', (code) => reject(new Error(`ag-server serve exited (${String(code)}): ${seen}`)))
  })
}

/** `ag-server serve --data DIR` on a free loopback port, until the test ends; resolves once it listens. */
export async function serveFor(t: Test, data: string): Promise<ChildProcess> {
  const serve = spawn(process.execPath, [SERVER, 'serve', '--data', data, '--listen', '127.0.0.1:0'], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((r) => serve.once('exit', r))
  t.teardown(async () => {
    serve.kill()
    await exited
  })
  await listening(serve)
  return serve
}
