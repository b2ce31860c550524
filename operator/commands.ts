// ag-mcp's commands, declared as data: the operator's (install, doctor, proposals, …) here, and
// each plugin's as its definePlugin declares them (build.mjs records them in generated/plugins.js),
// all run by lib/cli. A command's code is a dynamic import, a lazy chunk: `ag-mcp doctor` parses
// no install code, and serving MCP loads not even this file (bin/run-ag-mcp.ts imports it only
// when the first word is a command).
import { runCommand, type Command, type CommandArgs, type CommandRun, type Program } from '../lib/cli/commands.ts'
import { stringValue, type FlagTable } from '../lib/cli/flags.ts'
import { flagTable } from '../core/src/config/flags.ts'
import { Registry } from '../core/src/manifest/registry.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import type { CommandContext, PluginCommand } from '../core/src/plugin-api.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { sanitizeText } from '../core/src/safety/sanitize.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'

export interface OperatorContext {
  io: {
    out(s: string): void
    err(s: string): void
    env: NodeJS.ProcessEnv
    cwd: string
  }
  manifests: readonly GroupManifest[]
  plugins: BundledPlugins
  version: string
  /** argv that runs this ag-mcp (node and its script, or the executable). */
  self: readonly string[]
}

type OperatorCommand = Command<OperatorContext>

const SERVE_FLAGS_NOTE =
  'It takes the flags, AG_MCP_* variables and config file ag-mcp serves with (ag-mcp --help lists them), --local [REPO] included, and --json for a script.'

const repoDir: FlagTable = {
  'repo-dir': { type: 'string', value: 'PATH', describe: 'the repository (default: the one you are in)' },
}

export const OPERATOR_COMMANDS: readonly OperatorCommand[] = [
  {
    name: 'install',
    summary: "wire ag-mcp into an MCP host's configuration (a dry run unless --write)",
    args: ['<host>'],
    raw: true,
    help: async () => (await import('./install.ts')).INSTALL_USAGE,
    load: async () => {
      const { install } = await import('./install.ts')
      return ({ argv }, { io, manifests, plugins }) => install(argv, io, { manifests, plugins })
    },
  },
  {
    name: 'uninstall',
    summary: "remove ag-mcp's entry from an MCP host's configuration",
    args: ['<host>'],
    raw: true,
    help: async () => (await import('./install.ts')).INSTALL_USAGE,
    load: async () => {
      const { uninstall } = await import('./install.ts')
      return ({ argv }, { io }) => uninstall(argv, io)
    },
  },
  {
    name: 'doctor',
    summary: 'check a configuration before a host is wired to it: one line per check, with the fix',
    raw: true,
    details: `${SERVE_FLAGS_NOTE} Exit 1 when a check failed.`,
    load: async () => {
      const { doctor } = await import('./doctor.ts')
      return ({ argv }, { io, manifests, plugins }) => doctor(argv, io, manifests, plugins)
    },
  },
  {
    name: 'tools',
    summary: 'list the tools a configuration exposes and why the others are hidden',
    raw: true,
    details: SERVE_FLAGS_NOTE,
    load: async () => {
      const { tools } = await import('./tools.ts')
      return ({ argv }, { io, manifests, plugins }) => tools(argv, io, manifests, plugins)
    },
  },
  {
    name: 'config',
    summary: 'write a starting config file, or print its JSON Schema',
    commands: [
      {
        name: 'init',
        summary: 'write a commented config file (JSONC) and its schema beside it',
        flags: {
          local: {
            type: 'string',
            value: '[REPO]',
            bare: '.',
            describe: 'a file for local mode on REPO (default: the repository ag-mcp starts in)',
          },
          out: { type: 'string', value: 'PATH', default: 'ag-mcp.config.jsonc', describe: 'where to write it' },
          force: { type: 'boolean', describe: 'replace the file (and a schema beside it that is not ours)' },
        },
        load: async () => {
          const { initConfig } = await import('./config-cmd.ts')
          return ({ values }, { io, plugins }) =>
            initConfig(
              {
                out: stringValue(values, 'out') ?? '',
                local: stringValue(values, 'local'),
                force: values['force'] === true,
              },
              io,
              plugins,
            )
        },
      },
      {
        name: 'schema',
        summary: "print the config file's JSON Schema",
        load: async () => {
          const { printSchema } = await import('./config-cmd.ts')
          return (_args, { io, plugins }) => printSchema(io, plugins)
        },
      },
    ],
  },
  {
    name: 'proposals',
    summary: 'review what agents proposed: list, show, diff, review, integrate, reject, open the review page',
    raw: true,
    help: async () => (await import('./proposals.ts')).USAGE,
    load: async () => {
      const { proposals } = await import('./proposals.ts')
      return ({ argv }, { io }) => proposals(argv, io)
    },
  },
  {
    name: 'local',
    summary: 'what local mode keeps in this repository, and taking it away',
    commands: [
      {
        name: 'status',
        summary: 'what local mode keeps here (.ag/, its sessions, proposals, refs, exclude lines)',
        flags: repoDir,
        load: () => localVerb('status'),
      },
      {
        name: 'remove',
        summary: 'take all of it away; refused while sessions run or proposals are open, unless --force',
        flags: { force: { type: 'boolean', describe: 'even so' }, ...repoDir },
        load: () => localVerb('remove'),
      },
    ],
  },
]

async function localVerb(verb: 'status' | 'remove') {
  const { local } = await import('./local-cmd.ts')
  return ({ values }: CommandArgs, { io }: OperatorContext) =>
    local({ verb, force: values['force'] === true, repoDir: stringValue(values, 'repo-dir') }, io)
}

/** ag-mcp's commands: the operator's, then every plugin's. A name used twice is a defect, refused. */
export function agMcpProgram(ctx: OperatorContext): Program<OperatorContext> {
  const commands: OperatorCommand[] = [...OPERATOR_COMMANDS]
  for (const [plugin, entry] of Object.entries(ctx.plugins))
    for (const [name, info] of Object.entries(entry.commands ?? {})) {
      if (commands.some((c) => c.name === name))
        throw new Error(`plugin ${plugin}: command ${name} is already a command`)
      commands.push({
        ...info,
        name,
        // A function does not survive the build's JSON: a raw command's own help is asked of its code.
        ...(info.raw === true ? { help: async () => (await declaredCommand(ctx, plugin, name)).help?.() ?? '' } : {}),
        load: async () => pluginCommand(plugin, name),
      })
    }
  return {
    name: 'ag-mcp',
    summary: 'AgentGit for coding agents',
    commands,
    // `ag-mcp help` is `ag-mcp --help`: the flags, the groups, then the commands.
    help: async () => {
      const { renderHelp } = await import('../core/src/config/help.ts')
      return renderHelp('ag-mcp', new Registry(ctx.manifests), flagTable(ctx.plugins))
    },
  }
}

/** The plugin's declaration of a command: the plugin is loaded, only now. */
async function declaredCommand(ctx: OperatorContext, plugin: string, name: string): Promise<PluginCommand> {
  const declared = (await ctx.plugins[plugin]?.load())?.commands?.[name]
  if (declared === undefined) throw new Error(`plugin ${plugin} declares no command ${name}`)
  return declared
}

/** Runs the plugin's command: its code is loaded with the plugin, only now. */
function pluginCommand(plugin: string, name: string): CommandRun<OperatorContext> {
  return async (args, ctx) => (await (await declaredCommand(ctx, plugin, name)).load())(args, commandContext(ctx))
}

/**
 * What a plugin's command gets: its output sanitized (no terminal control from text an agent
 * wrote) and token shapes scrubbed, as the core does to every tool result.
 */
function commandContext({ io, version, self }: OperatorContext): CommandContext {
  const scrubber = createScrubber(() => [])
  const clean = (text: string) => sanitizeText(scrubber.scrub(text)).text
  return {
    out: (line) => io.out(clean(line)),
    err: (line) => io.err(clean(line)),
    cwd: io.cwd,
    env: io.env,
    version,
    self,
    scrub: (text) => scrubber.scrub(text),
    projectConfigs: async (root, write) => (await import('./host-entry.ts')).projectConfigs(root, write, io),
  }
}

/** Runs the command `argv` names (its first word is a command, or `help`); resolves to the exit code. */
export function runAgMcpCommand(argv: readonly string[], ctx: OperatorContext): Promise<number> {
  return runCommand(agMcpProgram(ctx), argv, ctx, ctx.io)
}
