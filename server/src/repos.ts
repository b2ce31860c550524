import fs from 'node:fs';
import path from 'node:path';
import { CatFile, git, gitText } from './git.ts';
import { notFound, invalid } from './errors.ts';
import { checkRef } from './paths.ts';

// Repositories are bare git repositories under <data>/repos/<name>.git. The directory is
// the registry: `ag-server repo add` works whether or not a server is running.
export class Repo {
  readonly cat: CatFile;
  private mergeCache = new Map<string, { mergeability: Mergeability; conflicts: string[] }>();
  constructor(
    readonly name: string,
    readonly gitDir: string,
  ) {
    this.cat = new CatFile(gitDir);
  }

  async defaultBranch(): Promise<string> {
    const head = fs.readFileSync(path.join(this.gitDir, 'HEAD'), 'utf8').trim();
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    return m?.[1] ?? 'main';
  }

  /** Resolve a client ref (branch, tag, full ref or commit id) to a commit id. */
  async resolve(ref: string, field = 'ref'): Promise<string> {
    checkRef(ref, field);
    const o = await this.cat.get(`${ref}^{commit}`);
    if (!o) throw notFound(`${field} '${ref}' does not name a commit`, { field, ref });
    return o.oid;
  }

  async branchHead(branch: string): Promise<string | null> {
    const o = await this.cat.get(`refs/heads/${branch}^{commit}`);
    return o ? o.oid : null;
  }

  async branches(): Promise<{ name: string; commit: string }[]> {
    const out = await gitText(this.gitDir, ['for-each-ref', '--format=%(objectname) %(refname:strip=2)', 'refs/heads/']);
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ commit: l.slice(0, 40), name: l.slice(41) }));
  }

  /** Compare-and-swap a ref: fails (false) if it no longer has `expected` (null: must not exist). */
  async casRef(ref: string, next: string, expected: string | null, env: Record<string, string> = {}): Promise<boolean> {
    const r = await git(this.gitDir, ['update-ref', ref, next, expected ?? '0'.repeat(40)], { okCodes: [1, 128], env });
    return r.code === 0;
  }

  cachedMerge(key: string): { mergeability: Mergeability; conflicts: string[] } | undefined {
    return this.mergeCache.get(key);
  }
  rememberMerge(key: string, v: { mergeability: Mergeability; conflicts: string[] }): void {
    if (this.mergeCache.size > 1000) this.mergeCache.clear();
    this.mergeCache.set(key, v);
  }

  close(): void {
    this.cat.close();
  }
}

export type Mergeability = 'fast_forward' | 'clean' | 'conflicts' | 'up_to_date' | 'target_missing' | 'not_open';

export class RepoRegistry {
  private open = new Map<string, Repo>();
  constructor(readonly reposDir: string) {}

  dirOf(name: string): string {
    return path.join(this.reposDir, `${name}.git`);
  }

  names(): string[] {
    let entries: string[] = [];
    try {
      entries = fs.readdirSync(this.reposDir);
    } catch {
      return [];
    }
    return entries
      .filter((e) => e.endsWith('.git'))
      .map((e) => e.slice(0, -4))
      .sort();
  }

  get(name: string): Repo {
    const cached = this.open.get(name);
    if (cached) return cached;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) throw invalid('invalid repository name', { field: 'repo' });
    const dir = this.dirOf(name);
    if (!fs.existsSync(path.join(dir, 'HEAD'))) throw notFound(`repository '${name}' not found`, { repo: name });
    const repo = new Repo(name, dir);
    this.open.set(name, repo);
    return repo;
  }

  exists(name: string): boolean {
    return fs.existsSync(path.join(this.dirOf(name), 'HEAD'));
  }

  closeAll(): void {
    for (const r of this.open.values()) r.close();
    this.open.clear();
  }
}
