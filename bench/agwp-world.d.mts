// The types of agwp-world.mjs, for the TypeScript that imports it (examples/demo.ts).
import type { ChildProcess } from 'node:child_process'

export interface WorldOptions {
  /** The ag-server to drive (dist/ag-server.mjs, or a baseline's). */
  agServer: string
  /** The data directory `ag-server init` creates. */
  data: string
  /** Repository name -> the git repository it is added from; the first is members' default. */
  repos: Record<string, string>
  /** Extra `init` flags (e.g. --store postgres://…). */
  initFlags?: string[]
  /** Extra `repo add` flags (e.g. --shared). */
  repoFlags?: string[]
  /** Where token files go (default: the data directory's parent). */
  tokenDir?: string
  /** Runs a command to completion and returns its stdout (default: bench/proc.mjs run). */
  run?: (cmd: string, args: string[]) => string
}

export interface Member {
  principal: string
  /** Comma-separated, as `token mint --scopes` takes them. */
  scopes: string
  /** The repository role to set; none when absent. */
  role?: string
  /** Default: the first repository. */
  repo?: string
  ttl?: string
}

export interface World {
  data: string
  /** Runs an ag-server admin command against the data directory (--data is appended). */
  admin(...args: string[]): string
  /** Mints a token for the principal (into a 0600 file) and sets its role. */
  member(m: Member): { tokenFile: string; token: string }
}

export function agwpWorld(o: WorldOptions): World
export function listening(child: ChildProcess): Promise<string>
