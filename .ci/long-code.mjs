#!/usr/bin/env node
// Files over 400 lines and functions over 80 lines (docs/contributing.md: files with one job),
// in the tracked code of a checkout (git ls-files: node_modules, dist and generated/ are not
// tracked; tap-snapshots/ is written by tap), tests listed apart from the code they test.
// A report for a reviewer, not a CI gate: a long function is sometimes the clearest.
// Usage: node .ci/long-code.mjs [DIR] [--files N] [--functions N]
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  if (i < 0) return fallback
  const n = Number(args[i + 1])
  if (!Number.isInteger(n) || n < 1) {
    console.error(`long-code: ${name} takes a positive whole number of lines, not '${args[i + 1] ?? ''}'`)
    process.exit(2)
  }
  args.splice(i, 2)
  return n
}
const maxFile = option('--files', 400)
const maxFunction = option('--functions', 80)
const root = path.resolve(args[0] ?? '.')

const CODE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/
const files = execFileSync('git', ['-C', root, 'ls-files', '-z'], { encoding: 'utf8' })
  .split('\0')
  .filter(
    (f) => CODE.test(f) && !f.endsWith('.d.ts') && !f.startsWith('tap-snapshots/') && fs.existsSync(path.join(root, f)),
  )

/** What a reader would call the function: its own name, or the variable or property it is assigned to. */
function nameOf(node) {
  if (node.name) return node.name.getText()
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const p = node.parent
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    return p.name.getText()
  if (p && ts.isCallExpression(p)) return `(callback of ${p.expression.getText().slice(0, 40)})`
  return '(anonymous)'
}

const longFiles = []
const longFunctions = []
for (const file of files) {
  const text = fs.readFileSync(path.join(root, file), 'utf8')
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
  if (lines > maxFile) longFiles.push({ file, lines })
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      if (end - start + 1 > maxFunction)
        longFunctions.push({ file, line: start + 1, name: nameOf(node), lines: end - start + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}

longFiles.sort((a, b) => b.lines - a.lines)
longFunctions.sort((a, b) => b.lines - a.lines)
const isTest = (f) => f.file.startsWith('test/')
for (const [what, list, limit] of [
  ['files', longFiles, maxFile],
  ['functions', longFunctions, maxFunction],
]) {
  for (const [where, part] of [
    ['code', list.filter((f) => !isTest(f))],
    ['test/', list.filter(isTest)],
  ]) {
    console.log(`${what} over ${limit} lines, ${where}: ${part.length}`)
    for (const f of part)
      console.log(`  ${String(f.lines).padStart(5)}  ${f.file}${f.name === undefined ? '' : `:${f.line}  ${f.name}`}`)
  }
}
