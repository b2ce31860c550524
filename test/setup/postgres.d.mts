// Types of postgres.mjs for the TypeScript test helpers.
export interface TestPostgres {
  url: string
  host: string
  port: number
  dir: string
  stop(): Promise<void>
}
export function findPostgresBinaries(): string | undefined
export function startPostgres(options?: { log?: (line: string) => void }): Promise<TestPostgres>
/** A loopback port nobody listens on now. */
export function freePort(): Promise<number>
