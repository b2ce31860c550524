#!/usr/bin/env node
// The comparison server for `npm run bench`: the same tools as ag-mcp, served by the official
// MCP TypeScript SDK v2 (@modelcontextprotocol/server, a devDependency used only here).
//
// It registers every tool of the groups ag-mcp lists by default (access "always" or "default")
// from generated/manifests.js — same names, titles, descriptions, annotations, input and output
// JSON Schemas (wrapped with the SDK's fromJsonSchema, which validates with its bundled ajv) —
// and answers server_info with the same data ag-mcp returns. Tools that would need an upstream
// answer with an isError result: the benchmark only calls server_info.
//
// Like ag-mcp it speaks both eras on stdio: the SDK's serveStdio answers `server/discover`
// (2026-07-28) and pins a 2025-era instance on `initialize`. It is run unbundled from
// node_modules, as an SDK-based server normally is.
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import { readFileSync } from 'node:fs'
import { manifests } from '../generated/manifests.js'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const REVISIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']
const groups = manifests.filter((m) => m.access === 'always' || m.access === 'default')
const instructions =
  'ag-mcp gives you a safe remote workflow on AgentGit repositories (benchmark twin built on the MCP TypeScript SDK v2).'

/** Same shape as ag-mcp's server_info result. */
function serverInfo() {
  return {
    name: 'ag-mcp-sdk',
    version: pkg.version,
    groups: groups.map((m) => m.group),
    revisions: REVISIONS,
    limits: { maxOutputBytes: 65536, maxMessageBytes: 4194304, rateLimitPerSec: 0 },
  }
}

/** A result shaped like ag-mcp's: a summary line and the data in a fence, plus structuredContent. */
function dataResult(kind, data) {
  const id = Math.random().toString(36).slice(2, 14)
  const text = `${kind}: ok\n<<<AGENTGIT-DATA ${id} kind=${kind}>>>\n${JSON.stringify(data)}\n<<<END-AGENTGIT-DATA ${id}>>>`
  return { content: [{ type: 'text', text }], structuredContent: data }
}

function createServer() {
  // Typed loosely: the SDK v2 beta's overloads want results in its own branded shapes; this
  // baseline server hands it plain objects, which it accepts at run time.
  const server = /** @type {any} */ (
    new McpServer(
      { name: 'ag-mcp-sdk', title: 'ag-mcp on the MCP SDK v2 (benchmark)', version: pkg.version },
      {
        capabilities: { tools: {}, resources: {}, prompts: {} },
        instructions,
        cacheHints: { 'tools/list': { ttlMs: 3_600_000, cacheScope: 'private' } },
      },
    )
  )
  for (const m of groups) {
    for (const t of m.tools) {
      server.registerTool(
        t.name,
        {
          title: t.title,
          description: t.description,
          inputSchema: fromJsonSchema(t.input),
          outputSchema: fromJsonSchema(t.output),
          annotations: t.annotations,
        },
        async () =>
          t.name === 'server_info'
            ? dataResult(t.dataKind, serverInfo())
            : { content: [{ type: 'text', text: `${t.name}: no upstream in the benchmark server` }], isError: true },
      )
    }
    for (const r of m.resources ?? []) {
      server.registerResource(
        r.name,
        r.uri,
        { title: r.title, description: r.description, mimeType: r.mimeType },
        async (uri) => ({
          contents: [{ uri: uri.href, mimeType: r.mimeType, text: '' }],
        }),
      )
    }
    for (const p of m.prompts ?? []) {
      server.registerPrompt(p.name, { title: p.title, description: p.description }, async () => ({
        messages: p.messages.map((msg) => ({ role: msg.role, content: { type: 'text', text: msg.text } })),
      }))
    }
  }
  return server
}

serveStdio(createServer, { onerror: (e) => process.stderr.write(`sdk-server: ${e.message}\n`) })
