// What `npm run test:quick` leaves out for the inner loop (vitest.config.ts reads it in mode
// `quick`), and the fault runs `npm test` leaves to `npm run test:faults` (mode `faults`; CI runs
// both). test/quickRun.test.ts holds every file that drives Chromium or starts carecircle as
// several processes to the first list.
export const LEFT_OUT_OF_QUICK = {
  /** Bounded runs of the chaos and fuzz suites and the official MCP conformance suite. */
  long: ['test/chaos.test.ts', 'test/fuzz.test.ts', 'test/conformance.test.ts'],
  /** Files that drive headless Chromium. */
  browser: [
    'test/*.browser.test.ts',
    'test/bridge-oauth.test.ts',
    'test/community.forms.test.ts',
    'test/editing.test.ts',
    'test/oauth.flow.test.ts',
    'test/oauth.sdk.test.ts',
    'test/sandbox.test.ts',
    'test/site.pages.test.ts',
  ],
  /** Files that start carecircle as gateway and worker processes on NATS. */
  cluster: [
    'test/*.cluster.test.ts',
    'test/cluster.test.ts',
    'test/alerts.test.ts',
    'test/audit.test.ts',
    'test/hardening.workers.test.ts',
    'test/ingest-cluster.test.ts',
    'test/ingest-fresh.test.ts',
    'test/ingest-vanish.test.ts',
    'test/nats-micro.test.ts',
    'test/scaled-out.test.ts',
  ],
};

/** The fault runs: processes killed mid-run, NATS cut off or gone, the chaos and fuzz suites.
 *  Each takes long because it waits for a fault to be noticed and healed; `npm run test:faults`
 *  runs them, one file at a time, and `.ci/run` runs it after `npm test`. */
export const FAULTS = [
  'test/chaos.test.ts',
  'test/fuzz.test.ts',
  'test/audit.test.ts',
  'test/cluster.test.ts',
  'test/credentials-reconnect.cluster.test.ts',
  'test/ingest-cluster.test.ts',
  'test/ingest-vanish.test.ts',
  'test/partner-cli.cluster.test.ts',
];

/** The official MCP conformance suite: about 45 runs of its command, each a Node.js process of
 *  its own (33 s alone). `npm run test:conformance` runs it, and `.ci/run` runs it after
 *  `npm test`, which leaves it out to stay near five minutes on two cores. */
export const CONFORMANCE = ['test/conformance.test.ts'];

/** Files run in a process of their own (vitest.config.ts): they read what belongs to the whole
 *  process, such as the metrics registry every service of the process counts into. */
export const OWN_PROCESS = ['test/metrics.test.ts'];
