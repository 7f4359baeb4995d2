// `carecircle partner …`: onboarding records for operators, and a signed sender for trying the ingest.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { openCredentials, passThroughCredentials, type Credentials } from '../auth/credentials.js';
import { openBus } from '../bus/index.js';
import type { Bus } from '../bus/types.js';
import type { Config } from '../config.js';
import { REDACT_PATHS, type Logger } from '../log.js';
import { runningStoreUrl } from '../store/embedded/address.js';
import { openStore, type Store } from '../store/mongo.js';
import { announcing, UNCONFIRMED } from './announce.js';
import { PartnerClient, type PartnerEvent } from './client.js';
import { PartnerError, PartnerStore, type InstitutionRecord, type IssuedSecret } from './records.js';
import { resolveDataKey, SecretBox } from './secretBox.js';

export const PARTNER_USAGE = `usage:
  carecircle partner create --name <name> [--id <institution_id>]   onboard an institution; prints its first secret once
  carecircle partner rotate <institution_id>                        issue a second live secret (printed once)
  carecircle partner retire <institution_id> <secret_id>            stop accepting an old secret
  carecircle partner deactivate <institution_id>                    refuse every request (403)
  carecircle partner activate <institution_id>                      accept requests again
  carecircle partner list                                           institutions and their secrets
  carecircle partner show <institution_id>                          one institution: secrets and when each last verified a request
  carecircle partner send [--file <event.json>|-] [--idempotency-key <key>]
  carecircle partner family-share <subject_ref> on|off
  carecircle partner purge <subject_ref>
Add --json for machine-readable output. send, family-share and purge sign with the secret in
CARECIRCLE_PARTNER_SECRET (never on the command line) as CARECIRCLE_PARTNER_INSTITUTION (or
--institution), to --url or PIPE_URL. The others use MONGO_URL, else the store of the carecircle
running on DATA_DIR (npm start).`;

const stderrLogger = (): Logger => pino({ name: 'carecircle', level: 'warn', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, pino.destination(2));

/**
 * The database the service uses: MONGO_URL, else the store the running embedded service recorded
 * in DATA_DIR (on whatever port it got). Never starts a server of its own: a second one on the
 * service's files, or whatever else listens on 27017, would not be the service's database.
 */
export async function openPartnerStore(config: Config, log: Logger): Promise<{ store: Store; stop(): Promise<void> }> {
  const store = await openStore(config.mongoUrl ?? (await runningStoreUrl(config.dataDir)), log);
  return { store, stop: () => store.close() };
}

function institutionView(inst: InstitutionRecord, lastUse: Map<string, Date>) {
  return {
    institution_id: inst._id,
    name: inst.name,
    status: inst.status,
    created_at: inst.createdAt.toISOString(),
    secrets: inst.secrets.map((s) => ({
      secret_id: s.id,
      state: s.retiredAt ? 'retired' : 'live',
      created_at: s.createdAt.toISOString(),
      ...(s.retiredAt ? { retired_at: s.retiredAt.toISOString() } : {}),
      last_verified_at: lastUse.get(s.id)?.toISOString() ?? null,
    })),
  };
}

function printInstitution(v: ReturnType<typeof institutionView>, out: (s: string) => void): void {
  out(`${v.institution_id}  ${v.status}  ${v.name}`);
  for (const s of v.secrets) out(`  ${s.secret_id}  ${s.state.padEnd(7)}  created ${s.created_at}  last verified ${s.last_verified_at ?? 'never'}`);
}

/** The commands that change an institution: every running process must hear of them. */
const CHANGES = new Set(['create', 'rotate', 'retire', 'deactivate', 'activate']);

/** NATS is configured and cannot be reached: the command changes nothing it could not announce. */
class Unannounced extends Error {}

/** A NATS_URL without any user or password in it, to print. */
const shownUrl = (url: string) => url.replace(/\/\/[^@/]*@/g, '//');

/**
 * Over NATS the running processes keep institutions in memory: join them the way a process of the
 * service does (same bus, same namespace, counted as a member), so each change returns only once
 * every one of them has acknowledged it. Refuses before anything is written when NATS is out of reach.
 */
async function announcer(config: Config, log: Logger): Promise<Bus | undefined> {
  if (!config.natsUrl) return undefined;
  try {
    return await openBus(config.natsUrl, log, 'carecircle-partner', { replicas: config.natsReplicas });
  } catch (err) {
    throw new Unannounced(
      `NATS_URL is set (${shownUrl(config.natsUrl)}) but NATS cannot be reached: ${err instanceof Error ? err.message : String(err)}.\n` +
        'Nothing was changed. The running carecircle processes keep institutions in memory and learn of a change over NATS, so this command changes nothing it cannot announce.\n' +
        'Check that nats-server is running and reachable from here at NATS_URL, and that NATS_URL (and BUS_NAMESPACE) are the ones the service uses; then run the command again.',
    );
  }
}

/** What the operator is told after a change: on NATS, that it holds on every running process. */
function reachOf(credentials: Credentials | undefined): { text: string; json: Record<string, number> } {
  const reach = credentials?.lastReach;
  if (!credentials || !reach) return { text: '', json: {} };
  if (reach.silent)
    process.stderr.write(
      `warning: ${reach.silent} running process(es) did not confirm the change within 3 s (stopped, cut off from NATS, or stalled). The change is saved. ${UNCONFIRMED}\n`,
    );
  const holds = reach.silent
    ? `on the ${reach.acknowledged} running process(es) that confirmed it`
    : reach.acknowledged
      ? `on every running process (${reach.acknowledged} confirmed)`
      : 'on every process (none is running now)';
  return { text: ` ${holds}`, json: { processes_confirmed: reach.acknowledged, processes_silent: reach.silent } };
}

const SHOWN_ONCE = 'The secret is shown this once: hand it to the partner over a secure channel. carecircle keeps it encrypted and cannot show it again.';

async function records(command: string, args: string[], config: Config, json: boolean): Promise<number> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const log = stderrLogger();
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: 'string' }, id: { type: 'string' }, json: { type: 'boolean' } },
  });
  const need = (n: number, what: string) => {
    if (positionals.length < n) throw new PartnerError(`missing ${what}\n${PARTNER_USAGE}`);
  };
  if (command === 'create' && !values.name) throw new PartnerError(`create needs --name\n${PARTNER_USAGE}`);
  const key = resolveDataKey(config, log);
  const bus = CHANGES.has(command) ? await announcer(config, log) : undefined;
  let credentials: Credentials | undefined;
  const opened = await openPartnerStore(config, log).catch(async (err: unknown) => {
    await bus?.close();
    throw err;
  });
  const { store, stop } = opened;
  try {
    // Without NATS the change still reaches the services of this process (a test's), and no other.
    const own = (credentials = bus ? await openCredentials(store.db, bus, config.busNamespace, log) : passThroughCredentials(store.db));
    // A new secret is on screen as soon as it is saved: it cannot be shown again, and the
    // announcement may wait for NATS for as long as NATS is away (docs/partners.md).
    const shown = (id: string, secret: IssuedSecret) =>
      command === 'create'
        ? `institution_id  ${id}\nname            ${values.name!.trim()}\nsecret_id       ${secret.id}\nsecret          ${secret.value}`
        : `secret_id  ${secret.id}\nsecret     ${secret.value}`;
    const announce = announcing({
      credentials: own,
      ...(bus ? { bus, shownUrl: shownUrl(config.natsUrl!) } : {}),
      issued: (id, secret) => void (json || out(`${shown(id, secret)}\n\n${SHOWN_ONCE}\n`)),
      waiting: (id, secret) => {
        if (json && secret)
          process.stderr.write(
            `The change is saved and its secret cannot be shown again; the JSON follows once every running process has heard of it. Meanwhile:\n${shown(id, secret)}\n`,
          );
      },
    });
    const partners = new PartnerStore(store.db, new SecretBox(key), own, Date.now, announce);
    const reach = () => reachOf(credentials);
    switch (command) {
      case 'create': {
        const { institution, secret } = await partners.create({ name: values.name!, ...(values.id ? { id: values.id } : {}) });
        const r = reach();
        out(
          json
            ? JSON.stringify({ institution_id: institution._id, name: institution.name, secret_id: secret.id, secret: secret.value, ...r.json })
            : `Requests signed with it are accepted${r.text}.`,
        );
        return 0;
      }
      case 'rotate': {
        need(1, '<institution_id>');
        const secret = await partners.rotate(positionals[0]!);
        const r = reach();
        out(
          json
            ? JSON.stringify({ institution_id: positionals[0], secret_id: secret.id, secret: secret.value, ...r.json })
            : `Both secrets are accepted${r.text} until you retire the old one (carecircle partner retire ${positionals[0]} <old secret_id>).`,
        );
        return 0;
      }
      case 'retire': {
        need(2, '<institution_id> <secret_id>');
        await partners.retire(positionals[0]!, positionals[1]!);
        const r = reach();
        out(
          json
            ? JSON.stringify({ institution_id: positionals[0], secret_id: positionals[1], state: 'retired', ...r.json })
            : `${positionals[1]} retired: requests signed with it now get 401${r.text}`,
        );
        return 0;
      }
      case 'deactivate':
      case 'activate': {
        need(1, '<institution_id>');
        await (command === 'deactivate' ? partners.deactivate(positionals[0]!) : partners.activate(positionals[0]!));
        const r = reach();
        out(
          json
            ? JSON.stringify({ institution_id: positionals[0], status: command === 'deactivate' ? 'inactive' : 'active', ...r.json })
            : command === 'deactivate'
              ? `${positionals[0]} deactivated: every request now gets 403${r.text}`
              : `${positionals[0]} active again${r.text}`,
        );
        return 0;
      }
      case 'list': {
        const all = await partners.list();
        const views = await Promise.all(all.map(async (i) => institutionView(i, await partners.lastUse(i._id))));
        if (json) out(JSON.stringify(views));
        else if (!views.length) out('no institutions yet: carecircle partner create --name "<name>"');
        else views.forEach((v) => printInstitution(v, out));
        return 0;
      }
      case 'show': {
        need(1, '<institution_id>');
        const inst = await partners.get(positionals[0]!);
        if (!inst) throw new PartnerError(`no institution ${positionals[0]}`);
        const v = institutionView(inst, await partners.lastUse(inst._id));
        if (json) out(JSON.stringify(v));
        else printInstitution(v, out);
        return 0;
      }
      default:
        throw new PartnerError(`unknown partner command "${command}"\n${PARTNER_USAGE}`);
    }
  } finally {
    await credentials?.stop();
    await bus?.close();
    await stop();
  }
}

async function sender(command: string, args: string[], config: Config, json: boolean): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      file: { type: 'string' },
      url: { type: 'string' },
      institution: { type: 'string' },
      'idempotency-key': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const secret = process.env.CARECIRCLE_PARTNER_SECRET;
  const institutionId = values.institution ?? process.env.CARECIRCLE_PARTNER_INSTITUTION;
  if (!secret || !institutionId) throw new PartnerError('set CARECIRCLE_PARTNER_SECRET and CARECIRCLE_PARTNER_INSTITUTION (or --institution)');
  const client = new PartnerClient({
    baseUrl: values.url ?? config.pipeUrl,
    institutionId,
    secret,
    onAttempt: (a) => {
      if (a.nextDelayMs !== undefined) process.stderr.write(`attempt ${a.attempt}: ${a.status ?? a.error}; next attempt in ${a.nextDelayMs / 1000} s\n`);
    },
  });
  let result;
  if (command === 'send') {
    const file = values.file ?? '-';
    const text = readFileSync(file === '-' ? 0 : file, 'utf8');
    let event: PartnerEvent;
    try {
      event = JSON.parse(text) as PartnerEvent;
    } catch {
      throw new PartnerError(`${file === '-' ? 'stdin' : file} is not JSON`);
    }
    result = await client.sendEvent(event, values['idempotency-key'] ? { idempotencyKey: values['idempotency-key'] } : {});
  } else if (command === 'family-share') {
    const [subject, onOff] = positionals;
    if (!subject || (onOff !== 'on' && onOff !== 'off')) throw new PartnerError(`family-share needs <subject_ref> on|off\n${PARTNER_USAGE}`);
    result = await client.setFamilyShare(subject, onOff === 'on');
  } else {
    if (!positionals[0]) throw new PartnerError(`purge needs <subject_ref>\n${PARTNER_USAGE}`);
    result = await client.purgeEvents(positionals[0]);
  }
  process.stdout.write(`${json ? JSON.stringify(result) : JSON.stringify(result.body ?? null, null, 2)}\n`);
  process.stderr.write(`${result.ok ? 'done' : 'stopped'}: ${result.reason}\n`);
  return result.ok ? 0 : 1;
}

/** Run one `partner` subcommand; returns the exit code. */
export async function partnerCommand(args: string[], config: Config): Promise<number> {
  const [command, ...rest] = args;
  const json = rest.includes('--json');
  try {
    if (!command || command === 'help' || command === '--help') {
      process.stdout.write(`${PARTNER_USAGE}\n`);
      return command ? 0 : 2;
    }
    if (['send', 'family-share', 'purge'].includes(command)) return await sender(command, rest, config, json);
    return await records(command, rest, config, json);
  } catch (err) {
    if (err instanceof PartnerError) {
      process.stderr.write(`carecircle partner: ${err.message}\n`);
      return 2;
    }
    if (err instanceof Unannounced) {
      process.stderr.write(`carecircle partner: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
