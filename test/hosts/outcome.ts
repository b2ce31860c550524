// One line of the test:hosts report: a check's name, its status and what the host said.
import type { Ran } from './sandbox.ts'

export type Status = 'ok' | 'FAIL' | 'n/a'
export interface Outcome {
  check: string
  status: Status
  detail: string
}

export const ok = (check: string, detail: string): Outcome => ({ check, status: 'ok', detail })
export const fail = (check: string, detail: string): Outcome => ({ check, status: 'FAIL', detail })
export const na = (check: string, detail: string): Outcome => ({ check, status: 'n/a', detail })
export const firstLine = (s: string): string => s.trim().split('\n')[0]?.slice(0, 400) ?? ''
export const why = (r: Ran): string => `${r.shown} exited ${r.code}: ${firstLine(r.stderr) || firstLine(r.stdout)}`

/** `s` matched literally inside a RegExp. */
export const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The line a host's `mcp list` prints for `server` (`<server>: …`, after an optional status mark). */
export function serverLine(text: string, server: string): string {
  return new RegExp(`^(?:\\S+ )?${escapeRe(server)}: .*$`, 'm').exec(text)?.[0] ?? ''
}
