// The carecircle command: start a role, or print the configuration table.
import { parseArgs } from 'node:util';
import { ConfigError, configMarkdownTable, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { ROLES, type Role } from './roles.js';

const USAGE = `usage:
  carecircle start [--role all|gateway|worker|cron|smtp]   start carecircle (default role: all)
  carecircle config                                   print the configuration table (markdown)
  carecircle partner <command>                        partner onboarding and a signed sender (carecircle partner help)
  carecircle deadletters list|show|replay|drop        accepted partner events the database refused (carecircle deadletters help)
  carecircle alerts <loved one>|dead|retry|outbox     alert mail waiting, failed or kept locally (carecircle alerts help)`;

async function start(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } } });
  const role = values.role as Role;
  if (!(ROLES as readonly string[]).includes(role)) {
    process.stderr.write(`carecircle: unknown role "${values.role}"; roles: ${ROLES.join(', ')}\n`);
    process.exit(2);
  }
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const { startService } = await import('./service.js');
  const service = await startService(role, config, log);
  for (const [surface, url] of Object.entries(service.urls)) process.stderr.write(`carecircle ${surface} listening on ${url}\n`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    force.unref();
    void service.stop().then(() => {
      log.info('stopped');
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(rest);
    case 'partner':
      return process.exit(await (await import('./partner/cli.js')).partnerCommand(rest, loadConfig()));
    case 'deadletters':
      return process.exit(await (await import('./ingest/cli.js')).deadlettersCommand(rest, loadConfig()));
    case 'alerts':
      return process.exit(await (await import('./alerts/cli.js')).alertsCommand(rest, loadConfig()));
    case 'config':
      process.stdout.write(`${configMarkdownTable()}\n`);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      process.stderr.write(`carecircle: unknown command "${command}"\n${USAGE}\n`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) process.stderr.write(`carecircle: ${err.message}\n`);
  else process.stderr.write(`carecircle: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
