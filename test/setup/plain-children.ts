// Loaded into every test process (package.json, "tap" "node-arg"), after tap's own hooks.
//
// tap records which files each test process loads (@tapjs/processinfo, for coverage and
// `tap --changed`) and, by patching child_process and NODE_OPTIONS, does the same in every
// Node process a test starts. Each ag-mcp or ag-server a test spawns then starts that loader
// and its worker thread too: `ag-mcp --version` took 0.33 s of CPU against 0.10 s without it,
// and the suite starts some 400 of them. Coverage is off and nothing reads the children's
// records, so the children start as a user starts them: without the hooks (which also change
// how they behave, e.g. a signal the binary ignores).
//
// If tap ever stops registering this way, the state is missing and this does nothing.
const SPAWN_HOOKS = Symbol.for('process-on-spawn@*:singletonId')

const hooks = (globalThis as Record<symbol, { listeners?: unknown[] } | undefined>)[SPAWN_HOOKS]
if (Array.isArray(hooks?.listeners)) hooks.listeners.length = 0

// tap quotes the path it puts there ("--import=file:///…/@tapjs/processinfo/…").
const kept = (process.env['NODE_OPTIONS'] ?? '')
  .replace(/"--(?:import|loader)=[^"]*@tapjs\/processinfo[^"]*"|--(?:import|loader)=\S*@tapjs\/processinfo\S*/g, '')
  .trim()
if (kept === '') delete process.env['NODE_OPTIONS']
else process.env['NODE_OPTIONS'] = kept
