// Wires the continuity plugin's CLI to the process: output sanitised (pack text was written
// by agents and must not drive the terminal), token shapes scrubbed with the core's scrubber.
import { runCli } from '../plugins/continuity/cli.ts'
import { sanitizeText } from '../core/src/safety/sanitize.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'

declare const AG_MCP_VERSION: string

export async function runContinuityCli(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const scrubber = createScrubber(() => [])
  const write = (stream: NodeJS.WriteStream, text: string) =>
    new Promise<void>((done) => stream.write(`${sanitizeText(scrubber.scrub(text)).text}\n`, () => done()))
  const pending: Promise<void>[] = []
  const code = await runCli(argv, {
    out: (t) => void pending.push(write(process.stdout, t)),
    err: (t) => void pending.push(write(process.stderr, t)),
    cwd: process.cwd(),
    env,
    version: typeof AG_MCP_VERSION === 'string' ? AG_MCP_VERSION : '0.0.0-dev',
    shapes: scrubber.scrub,
  })
  await Promise.all(pending)
  return code
}
