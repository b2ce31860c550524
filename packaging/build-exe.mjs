#!/usr/bin/env node
// `npm run build:exe`: ag-mcp as one executable that needs no Node install (Node's single
// executable applications: a copy of this node binary with the bundle injected by postject).
//   node packaging/build-exe.mjs [--out PATH]   default: dist/ag-mcp-<platform>-<arch>[.exe]
// Needs `npm run build` first (the generated manifests and validators). The executable is for
// the platform and Node version that build it; build it on each target you ship.
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'
import { inject } from 'postject'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const outFlag = process.argv.indexOf('--out')
const outArg = outFlag === -1 ? undefined : process.argv[outFlag + 1]
if (outFlag !== -1 && outArg === undefined) throw new Error('build-exe: --out needs a path')
const out = resolve(
  outFlag === -1
    ? join(root, 'dist', `ag-mcp-${process.platform}-${process.arch}${process.platform === 'win32' ? '.exe' : ''}`)
    : /** @type {string} */ (outArg),
)

const work = mkdtempSync(join(tmpdir(), 'ag-mcp-sea-'))
try {
  // One CommonJS script: an executable runs nothing else. Dynamic imports are inlined (there is
  // no file to load a chunk from), and import.meta.url, which CommonJS lacks, is the executable.
  const script = join(work, 'ag-mcp.cjs')
  await esbuild.build({
    entryPoints: [join(root, 'bin', 'ag-mcp-exe.ts')],
    outfile: script,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    define: { AG_MCP_VERSION: JSON.stringify(pkg.version), 'import.meta.url': '__agExeUrl' },
    banner: { js: 'const __agExeUrl = require("node:url").pathToFileURL(process.execPath).href;' },
    logLevel: 'warning',
  })
  const blob = join(work, 'sea.blob')
  writeFileSync(
    join(work, 'sea-config.json'),
    JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true }),
  )
  execFileSync(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], { stdio: 'pipe' })
  mkdirSync(dirname(out), { recursive: true })
  rmSync(out, { force: true })
  copyFileSync(process.execPath, out)
  chmodSync(out, 0o755)
  // macOS refuses a binary whose signature no longer matches: drop it before, sign ad hoc after.
  if (process.platform === 'darwin') execFileSync('codesign', ['--remove-signature', out])
  await inject(out, 'NODE_SEA_BLOB', readFileSync(blob), {
    sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ...(process.platform === 'darwin' ? { machoSegmentName: 'NODE_SEA' } : {}),
  })
  if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', out])
  console.log(`${out}: standalone ag-mcp ${pkg.version} (node ${process.version}, ${process.platform}-${process.arch})`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
