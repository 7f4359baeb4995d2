// carecircle-mcp: the stdio bridge's entry point. Reads options, then serves stdin until it
// closes (or a signal), or runs --check, --login or --logout. Everything it says goes to stderr,
// except --check, --help and --version, which are for people and print on stdout.
import { Console } from 'node:console';
import { VERSION } from '../src/version.js';
import { Bridge } from './bridge.js';
import { runCheck } from './check.js';
import { resolveCredential, type Credential } from './credentials.js';
import { LineSplitter } from './framing.js';
import { helpText } from './help.js';
import { createLog, type Log } from './log.js';
import { runLogin, runLogout } from './login.js';
import type { HttpSettings } from './oauth.js';
import { BridgeConfigError, parseOptions, type BridgeOptions } from './options.js';
import { Upstream } from './upstream.js';
import { COMMAND } from './command.js';

const USER_AGENT = `carecircle-mcp/${VERSION} node/${process.versions.node}`;
/** Token requests are bounded apart from --timeout-ms: a refresh holds the token file's lock meanwhile. */
const TOKEN_TIMEOUT_MS = 15_000;

const httpFor = (options: BridgeOptions): HttpSettings => ({
  userAgent: USER_AGENT,
  timeoutMs: Math.min(options.timeoutMs, TOKEN_TIMEOUT_MS),
  allowHttp: options.allowHttp,
});

function upstreamFor(options: BridgeOptions, credential: Credential, log: Log): Upstream {
  return new Upstream({ ...options, credential, userAgent: USER_AGENT, log });
}

function configFailure(argv: string[], err: BridgeConfigError): never {
  if (argv.includes('--check')) {
    process.stdout.write(
      `${COMMAND} --check\n\n  FAIL  configuration: ${err.message}\n\nVerdict: NOT READY. Fix the configuration, then run ${COMMAND} --check again.\n`,
    );
    process.exit(1);
  }
  process.stderr.write(`carecircle-mcp: ${err.message}\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  let options: BridgeOptions;
  try {
    options = parseOptions(argv, process.env);
  } catch (err) {
    if (!(err instanceof BridgeConfigError)) throw err;
    configFailure(argv, err);
  }
  if (options.mode === 'help') return void process.stdout.write(helpText(COMMAND));
  if (options.mode === 'version') return void process.stdout.write(`carecircle-mcp ${VERSION}\n`);

  if (options.mode === 'login' || options.mode === 'logout') {
    // For a person at a terminal, on stderr: stdout stays protocol-only in every mode.
    const log = createLog(options.logLevel);
    const context = { options, http: httpFor(options), version: VERSION, say: (line: string) => log.info(line) };
    process.exit(options.mode === 'login' ? await runLogin(context) : await runLogout(context));
  }

  const log = createLog(options.mode === 'check' && options.logLevel === 'info' ? 'warn' : options.logLevel);
  let credential: Credential;
  try {
    credential = await resolveCredential(options, log, httpFor(options));
  } catch (err) {
    if (!(err instanceof BridgeConfigError)) throw err;
    configFailure(argv, err);
  }
  if (options.mode === 'check') {
    const ready = await runCheck(options, credential, upstreamFor(options, credential, log), (line) => process.stdout.write(`${line}\n`), USER_AGENT);
    process.exit(ready ? 0 : 1);
  }
  await serve(options, credential, log);
}

async function serve(options: BridgeOptions, credential: Credential, log: Log): Promise<void> {
  // Anything printed with console.* lands on stderr: a stray log line on stdout would corrupt the protocol.
  globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });
  const bridge = new Bridge(upstreamFor(options, credential, log), (line) => process.stdout.write(`${line}\n`), log);
  log.info(`${VERSION} → ${options.endpoint} (${credential.describe()}; timeout ${options.timeoutMs} ms)`);

  // The client has gone: nobody is left to answer.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    log.info(`stdout closed (${err.code ?? err.message}); exiting`);
    process.exit(0);
  });

  const splitter = new LineSplitter();
  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdin.off('data', onData);
    if (why !== 'stdin closed') process.stdin.destroy();
    if (bridge.busy > 0) log.info(`${why}; answering ${bridge.busy} pending message(s) first`);
    await bridge.drain();
    // Exit only after stdout has taken every reply.
    process.stdout.write('', () => process.exit(0));
  };
  const onData = (chunk: Buffer) => {
    for (const frame of splitter.push(chunk)) bridge.handle(frame);
  };
  process.stdin.on('data', onData);
  process.stdin.on('end', () => {
    for (const frame of splitter.end()) bridge.handle(frame);
    void stop('stdin closed');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) {
        log.warn(`${signal} again; exiting without waiting`);
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
      void stop(signal);
    });
  }
}

await main(process.argv.slice(2));
