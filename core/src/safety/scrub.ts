// Replaces credentials with `[REDACTED]` in every string of a result or log line. The patterns
// live in lib/scrub.ts (a leaf shared with ag-server's review page); this adds the walk over a
// value's strings.
import { createScrub } from '../../../lib/scrub.ts'
import { mapStringsDeep } from './deep.ts'

export { MIN_SECRET_LENGTH, REDACTED } from '../../../lib/scrub.ts'

export interface Scrubber {
  scrub(s: string): string
  scrubDeep(value: unknown): unknown
}

/** `secrets` is called on every scrub (the token file may have been re-read). */
export function createScrubber(secrets: () => readonly string[]): Scrubber {
  const scrub = createScrub(secrets)
  return { scrub, scrubDeep: (value) => mapStringsDeep(value, scrub).value }
}
