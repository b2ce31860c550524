// core/src/log.ts lives here because every line it writes is a leak surface.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLogger } from '../../../core/src/log.ts'
import { createScrubber } from '../../../core/src/safety/scrub.ts'

const TOKEN = 'agwp_9xQ2LmX7pR4tVw8zK3nB6cJ1dF5gS0yA'
const scrubber = createScrubber(() => [TOKEN])

function capture(level: 'debug' | 'info' | 'warn' | 'error' | 'silent' = 'debug') {
  const lines: string[] = []
  const log = createLogger({ level, scrub: (s) => scrubber.scrub(s), write: (l) => void lines.push(l) })
  return { log, lines }
}

t.test('line format', async (t) => {
  const { log, lines } = capture()
  log.info('tool call', { tool: 'file_read', group: 'read', ms: 12, ok: true, detail: { a: [1, 'x'] } })
  t.equal(lines.length, 1)
  t.match(
    lines[0]!,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info tool call tool="file_read" group="read" ms=12 ok=true detail=\{"a":\[1,"x"\]\}\n$/,
  )
  log.warn('odd keys', { 'has space': 1, 'k=v': 2, skip: undefined })
  t.match(lines[1]!, / warn odd keys "has space"=1 "k=v"=2\n$/)
})

t.test('levels', async (t) => {
  const { log, lines } = capture('warn')
  log.debug('d')
  log.info('i')
  log.warn('w')
  log.error('e')
  t.same(
    lines.map((l) => l.split(' ')[1]),
    ['warn', 'error'],
  )
  const silent = capture('silent')
  silent.log.error('nothing')
  t.same(silent.lines, [])
})

t.test('one line, no controls, no token, whatever is logged', async (t) => {
  const { log, lines } = capture()
  const wrapped = `${TOKEN.slice(0, 10)}\n${TOKEN.slice(10)}`
  log.error(`upstream said:\n${TOKEN}\x1b]0;pwned\x07\r\u202eevil`, {
    header: `Bearer ${TOKEN}`,
    url: `https://x/?t=${encodeURIComponent(TOKEN)}`,
    wrapped,
    nested: { deep: [Buffer.from(TOKEN).toString('base64')] },
    err: Object.assign(new Error(`failed with ${TOKEN}`), { code: 'E_X' }),
    big: 10n,
  })
  const cyclic: Record<string, unknown> = {}
  cyclic['self'] = cyclic
  log.info('cyclic', { cyclic })
  t.equal(lines.length, 2)
  for (const line of lines) {
    t.equal(line.indexOf('\n'), line.length - 1, 'exactly one newline, at the end')
    t.notOk(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(line), 'no controls or bidi')
    t.notOk(line.includes(TOKEN), 'no token')
    t.notOk(line.includes(TOKEN.slice(10)), 'no wrapped half')
  }
  t.match(lines[0]!, /err=\{"name":"Error","message":"failed with \[REDACTED\]","code":"E_X"\}/)
  t.match(lines[0]!, /big="10"/, 'bigint as a string')
  t.match(lines[1]!, /cyclic="\[unserializable\]"/)
})

t.test('a throwing writer never breaks the caller', async (t) => {
  const log = createLogger({
    level: 'info',
    scrub: (s) => s,
    write: () => {
      throw new Error('EPIPE')
    },
  })
  t.doesNotThrow(() => log.info('x'))
})

t.test('file appends, opened once', async (t) => {
  const dir = t.testdir({ 'old.log': 'previous line\n' })
  const file = join(dir, 'old.log')
  const lines: string[] = []
  const log = createLogger({ level: 'info', scrub: (s) => scrubber.scrub(s), write: (l) => void lines.push(l), file })
  log.info('first', { token: TOKEN })
  log.info('second')
  log.close()
  log.info('after close goes to the writer only')
  const text = readFileSync(file, 'utf8').split('\n')
  t.equal(text[0], 'previous line')
  t.match(text[1]!, / info first token="\[REDACTED\]"$/)
  t.match(text[2]!, / info second$/)
  t.equal(text.length, 4)
  t.equal(lines.length, 3)
})

t.test('default writer is stderr, never stdout; idle() waits for the lines to leave', async (t) => {
  const err: string[] = []
  const out: string[] = []
  const origErr = process.stderr.write.bind(process.stderr)
  const origOut = process.stdout.write.bind(process.stdout)
  const capture = (into: string[]) =>
    ((chunk: unknown, cb?: unknown) => (
      into.push(String(chunk)), typeof cb === 'function' && process.nextTick(cb as () => void), true
    )) as typeof process.stderr.write
  process.stderr.write = capture(err)
  process.stdout.write = capture(out)
  try {
    const log = createLogger({ level: 'info', scrub: (s) => s })
    log.info('to stderr')
    log.warn('and again')
    await log.idle()
  } finally {
    process.stderr.write = origErr
    process.stdout.write = origOut
  }
  t.equal(err.length, 1, 'the lines of one tick leave as one write')
  t.match(err[0]!, / info to stderr\n.* warn and again\n$/)
  t.same(out, [])
})
