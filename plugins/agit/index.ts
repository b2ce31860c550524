// The agit plugin: AGIT-compatible thought logging under a local root (default: the git top level).
// Each tool returns AGIT's text; where AGIT answers `isError`, the handler throws a local failure
// carrying the same text, so the core renders it as a refusal (quoted, fenced) like any other.
import { definePlugin, localFailure } from '../../core/src/plugin-api.ts'
import type { Handlers } from '../../core/src/plugin-api.ts'
import type { PluginTools } from '../../generated/types/tools.ts'
import { stagedReasoning, stagedThoughts } from './attach.ts'
import { AGIT_COMMANDS, AGIT_FLAGS } from './cli-words.ts'
import { logStep } from './log-step.ts'
import type { LogStepArgs } from './log-step.ts'
import {
  getContext,
  getFileHistory,
  getRecentSummaries,
  getRelevantContext,
  getStatus,
  readRoadmap,
} from './queries.ts'
import { AgitRepo } from './repo.ts'
import { ThoughtSearch } from './search.ts'
import type { ToolText } from './tool-text.ts'

interface AgitState {
  repo: AgitRepo
  /** Made on the first search: nothing is loaded or built before. */
  search: ThoughtSearch
}

/** AGIT's text as a result, or its error text as a local failure. */
function answer(r: ToolText): { text: string } {
  if (r.isError) throw localFailure(r.code ?? 'invalid', r.text)
  return { text: r.text }
}

const handlers: Handlers<PluginTools['agit'], AgitState> = {
  agit_log_step: async (args, ctx) => {
    // The first thought starts the log (V2 layout, kept out of git status): the group is on by
    // default, and a log that waits for a human to run `init` would drop the agent's first steps.
    if (!ctx.state.repo.initialized) {
      await ctx.state.repo.init()
      await ctx.state.repo.excludeFromGit()
    }
    // A location may name a file of the agent's open workspace: the workspace group says which.
    const inWorkspace = async (paths: string[]) => {
      const r = (await ctx.attachment('workspace_files', { paths })) as { present: string[] } | undefined
      return new Set(r?.present ?? [])
    }
    return answer(await logStep(ctx.state.repo, args as LogStepArgs, undefined, inWorkspace))
  },
  agit_get_status: async (_args, ctx) => answer(await getStatus(ctx.state.repo)),
  agit_get_file_history: async (args, ctx) =>
    answer(await getFileHistory(ctx.state.repo, args.filepath, args.limit ?? 3)),
  agit_get_relevant_context: async (args, ctx) =>
    answer(await getRelevantContext(ctx.state.search, ctx.state.repo, args.query, args.limit ?? 5)),
  agit_read_roadmap: async (_args, ctx) => answer(await readRoadmap(ctx.state.repo)),
  agit_get_recent_summaries: async (args, ctx) => answer(await getRecentSummaries(ctx.state.repo, args.count ?? 5)),
  agit_get_context: async (args, ctx) => answer(await getContext(ctx.state.repo, args.git_hash)),
}

export default definePlugin({
  name: 'agit',
  api: 1,
  options: {
    root: {
      type: 'string',
      role: 'root',
      value: 'DIR',
      description: 'Repository whose .agit/ thought log the agit tools use (default: the git top level).',
    },
  },
  init: ({ root }): AgitState => {
    if (root === undefined) throw localFailure('not_configured', 'the agit plugin has no repository root')
    const repo = new AgitRepo(root)
    return { repo, search: new ThoughtSearch(repo) }
  },
  handlers,
  attachments: { staged_reasoning: stagedReasoning, staged_thoughts: stagedThoughts },
  commands: {
    // `ag-mcp agit …`: the thought log's command line, and what its git hooks run.
    agit: {
      summary: "the thought log's command line: init, hooks, sync, record, status, log, show, search",
      raw: true,
      flags: AGIT_FLAGS,
      subcommands: AGIT_COMMANDS,
      help: async () => (await import('./cli.ts')).USAGE,
      load: async () => {
        const { main } = await import('./cli.ts')
        return ({ argv }, ctx) => main(argv, ctx)
      },
    },
  },
})
