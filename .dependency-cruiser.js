// Dependency rules that fail the build: no cycles, and the layering in docs/architecture.md ("Dependency rules").
//
// Layers, lowest first: machines/ (pure state machines); shared mechanism; the domain layer
// (family/: the family records); feature slices; the runtime (gateway, worker, cron); the role wiring (service.ts, cli.ts, slices.ts, and what a
// worker thread starts: threadSlices.ts, workerThread.ts).
// A layer imports only from layers below it. Tests are exempt from layering, not from cycles.
// Folder-level cycles among the top folders of src/ are checked by scripts/folder-cycles.ts.

const TESTS = '(\\.test\\.ts$|^test/)';
const SHARED = '^src/((config|log|version|roles|tenants)\\.ts$|(http|bus|store|limits|rpc|auth|slice|metrics)/)';
const DOMAIN = '^src/family/';
const SLICES =
  '^src/(directory|site|newsletter|community|session|identity|workspace|keys|app|oauth|sandbox|inbox|ingest|partner|care|plans|portal|push|alerts)/';
const RUNTIME = '^src/(gateway|worker|cron)/';
const WIRING = '^src/(service|cli|slices|threadSlices|workerThread)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-file-cycles',
      comment: 'A file may not reach itself through its imports (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'machines-stay-pure',
      comment: 'machines/ holds xstate machines without I/O: they import only xstate and each other.',
      severity: 'error',
      from: { path: '^machines/', pathNot: TESTS },
      to: { pathNot: '^(machines/|node_modules/xstate/)' },
    },
    {
      name: 'shared-mechanism-not-upward',
      comment:
        'Shared mechanism (config, log, version, roles, http, bus, store, limits, rpc, auth, slice, metrics) may not import the domain layer, slices, the runtime or the role wiring.',
      severity: 'error',
      from: { path: SHARED, pathNot: TESTS },
      to: { path: `${DOMAIN}|${SLICES}|${RUNTIME}|${WIRING}` },
    },
    {
      name: 'domain-on-shared-only',
      comment: 'The domain layer (family/) stands on shared mechanism and machines/ only: slices use it, it uses no slice, no runtime and no wiring.',
      severity: 'error',
      from: { path: DOMAIN, pathNot: TESTS },
      to: { path: '^(src|bridge|scripts|test)/', pathNot: `${DOMAIN}|${SHARED}` },
    },
    {
      name: 'slices-not-upward',
      comment:
        'Feature slices may not import the runtime (gateway, worker, cron) or the role wiring: they declare manifests (src/slice/contract.ts) that the wiring hands to the runtime.',
      severity: 'error',
      from: { path: SLICES, pathNot: TESTS },
      to: { path: `${RUNTIME}|${WIRING}` },
    },
    {
      name: 'runtime-not-upward',
      comment: 'The gateway, worker and cron receive slice manifests from the role wiring: they import no slice, no domain record and no wiring.',
      severity: 'error',
      from: { path: RUNTIME, pathNot: TESTS },
      to: { path: `${DOMAIN}|${SLICES}|${WIRING}` },
    },
    {
      name: 'worker-and-cron-not-gateway',
      comment: 'Workers and cron run without a gateway.',
      severity: 'error',
      from: { path: '^src/(worker|cron)/', pathNot: TESTS },
      to: { path: '^src/gateway/' },
    },
    {
      name: 'gateway-only-from-wiring',
      comment: 'Only the role wiring (service.ts, cli.ts, slices.ts) and tests import src/gateway/.',
      severity: 'error',
      from: { pathNot: `^src/gateway/|${WIRING}|${TESTS}` },
      to: { path: '^src/gateway/' },
    },
    {
      name: 'bridge-stands-alone',
      comment:
        'The MCP bridge ships on its own: of src/ it may import only the leaf modules src/version.ts, src/rpc/codes.ts (the pinned JSON-RPC codes) and src/workspace/scopes.ts (the scope each tool needs).',
      severity: 'error',
      from: { path: '^bridge/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/(version|rpc/codes|workspace/scopes)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|scripts/ferretdb|src/app/assets)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
