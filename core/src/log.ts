// The process logger: stderr only (stdout carries JSON-RPC and nothing else), one line per
// event, `<ISO time> <level> <msg> key=value …`. Every line is sanitized and scrubbed, and the
// string fields are scrubbed before JSON encoding too, so a secret hard-wrapped inside a value
// (which JSON turns into `\n` text) is still caught.

import { LineWriter } from './jsonrpc/writer.ts'
import type { Logger } from './plugin-api.ts'
import { sanitizeText } from './safety/sanitize.ts'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface LoggerOptions {
  level: LogLevel
  scrub: (s: string) => string
  /** Receives each complete line, newline included; defaults to stderr (see STDERR_BACKLOG). */
  write?: (line: string) => void
  /** Also appended to this file (opened once, append mode, created 0600). */
  file?: string
}

export interface ClosableLogger extends Logger {
  /** Closes the log file, if any. Later lines still reach the writer. */
  close(): void
  /** Resolves once every line so far has reached stderr (or been dropped). */
  idle(): Promise<void>
}

/**
 * Bytes stderr may hold unread before log lines are dropped (and counted in a later line).
 * A host that never reads stderr must not make ag-mcp block, nor keep every line in memory.
 */
const STDERR_BACKLOG = 256 * 1024

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }
const PLAIN_KEY = /^[A-Za-z0-9_.-]{1,64}$/

export function createLogger(o: LoggerOptions): ClosableLogger {
  const threshold = RANK[o.level]
  const sink = o.write ? undefined : new StderrSink()
  const write = o.write ? (line: string) => o.write?.(`${line}\n`) : (line: string) => sink?.write(line)
  // node:fs is fetched only with a log file: a static import costs start-up time even when unused.
  const fs = o.file !== undefined ? process.getBuiltinModule('node:fs') : undefined
  let fd = fs && o.file !== undefined ? fs.openSync(o.file, 'a', 0o600) : undefined

  const clean = (s: string): string => o.scrub(sanitizeText(s).text)

  const encode = (v: unknown): string => {
    const value = v instanceof Error ? { name: v.name, message: v.message, ...codeOf(v) } : v
    try {
      const json = JSON.stringify(value, (_k, x: unknown) =>
        typeof x === 'string' ? clean(x) : typeof x === 'bigint' ? x.toString() : x,
      )
      return json ?? 'null'
    } catch {
      return '"[unserializable]"' // cycles; a log line must never throw
    }
  }

  const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[level] < threshold) return
    let line = `${new Date().toISOString()} ${level} ${clean(msg)}`
    for (const [k, v] of Object.entries(fields ?? {})) {
      if (v === undefined) continue
      const key = PLAIN_KEY.test(k) ? k : JSON.stringify(clean(k))
      line += ` ${key}=${encode(v)}`
    }
    // once more over the whole line: a secret may straddle the parts joined above
    line = clean(line).replace(/[\n\t]/g, ' ')
    try {
      write(line)
    } catch {
      // a broken stderr must not break the call being logged
    }
    if (fd !== undefined) {
      try {
        fs?.writeSync(fd, `${line}\n`)
      } catch {
        // same for a full disk
      }
    }
  }

  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    close() {
      if (fd !== undefined) fs?.closeSync(fd)
      fd = undefined
    },
    idle: async () => sink?.idle(),
  }
}

/**
 * Log lines on their way to stderr: gathered off-heap and written once per tick, like JSON-RPC
 * answers, dropped (and counted in a later line) beyond STDERR_BACKLOG.
 */
class StderrSink {
  /** Made on the first line written: process.stderr is a stream Node builds on first access. */
  private stderr: LineWriter | undefined
  private dropped = 0
  /**
   * Until then, lines wait here: building process.stderr (a stream, and the modules behind it)
   * costs a process about a millisecond, so the start-up line must not delay the first answer.
   * The stream is made on the next turn of the event loop (after an answer already read is
   * written), by idle(), or at exit, whichever comes first; the order of lines is kept.
   */
  private early: string[] | undefined
  private readonly flushEarly = (): void => {
    const lines = this.early
    if (lines === undefined) return
    this.early = undefined
    process.removeListener('exit', this.flushEarly)
    for (const line of lines) {
      try {
        this.toStderr(line)
      } catch {
        // a broken stderr must not break the process
      }
    }
  }

  write(line: string): void {
    if (this.stderr) return this.toStderr(line)
    if (this.early === undefined) {
      this.early = []
      setImmediate(this.flushEarly)
      process.once('exit', this.flushEarly)
    }
    this.early.push(line)
  }

  /** Resolves once every line so far has reached stderr (or been dropped). */
  async idle(): Promise<void> {
    this.flushEarly()
    const stderr = this.stderr
    if (!stderr) return
    // A count still pending is said too, once stderr has room (never, if nobody reads it: the
    // caller bounds this wait). One retry: after idle() the backlog is empty, so only a closed
    // stderr refuses it, and looping on that would never yield.
    if (!this.sayDropped(stderr)) {
      await stderr.idle()
      this.sayDropped(stderr)
    }
    await stderr.idle()
  }

  private toStderr(line: string): void {
    this.stderr ??= new LineWriter(process.stderr, { dropBeyondBytes: STDERR_BACKLOG })
    if (!this.sayDropped(this.stderr) || !this.stderr.write(line)) this.dropped++
  }

  /** Says how many lines were dropped, in their place; false if stderr still does not take it. */
  private sayDropped(out: LineWriter): boolean {
    if (this.dropped === 0) return true
    if (!out.write(`${new Date().toISOString()} warn ${this.dropped} log line(s) dropped: stderr was not being read`))
      return false
    this.dropped = 0
    return true
  }
}

function codeOf(e: Error): { code?: string } {
  const code = (e as { code?: unknown }).code
  return typeof code === 'string' ? { code } : {}
}
