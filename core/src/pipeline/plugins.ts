// Plugins are loaded on their first call (a plugin's code and its upstream client cost
// start-up time nobody should pay for tools/list) and initialised once.
import type { Plugin, PluginEnv } from '../plugin-api.ts'

export type PluginLoaders = Record<string, () => Promise<Plugin>>

export interface LoadedPlugin {
  plugin: Plugin
  upstream: unknown
}

export class PluginSet {
  private readonly loaded = new Map<string, Promise<LoadedPlugin>>()

  constructor(
    private readonly loaders: PluginLoaders,
    private readonly env: PluginEnv,
  ) {}

  get(name: string): Promise<LoadedPlugin> {
    let p = this.loaded.get(name)
    if (!p) {
      const loader = this.loaders[name]
      if (!loader) return Promise.reject(new Error(`plugin ${name} is not bundled`))
      p = loader().then(async (plugin) => ({ plugin, upstream: plugin.init ? await plugin.init(this.env) : undefined }))
      // A failed init (say, no --upstream) is retried on the next call, not cached forever.
      p.catch(() => this.loaded.delete(name))
      this.loaded.set(name, p)
    }
    return p
  }
}
