// Reading a loved one's records from their portal and filing them on the care timeline: tokens
// renewed before they expire, later syncs asking only for what changed since the portal's own time
// of the last complete sync, every page read before anything is written (a failed page leaves the
// last complete sync in place), each resource version one record, a new version superseding the old.
import { z } from 'zod';
import { CARE_EVENT_STREAM } from '../family/records.js';
import type { Timelines } from '../store/timeline/port.js';
import type { ConnectionRecord, PortalPatient, PortalStore } from './connections.js';
import { PORTAL_READS, toCareEvent, type FhirResource, type PortalEvent, type PortalRead } from './resources.js';
import { PortalError, refreshTokens, type PortalIssuer, type PortalTokens } from './smart.js';

/** Renew this long before the access token expires. */
const RENEW_BEFORE_MS = 60_000;
const MAX_PAGES = 50;
const MAX_PAGE_BYTES = 5 * 1024 * 1024;
/** Waits a busy portal may ask for (Retry-After) before the sync gives up for now. */
const MAX_WAIT_MS = 30_000;
const MAX_TRIES = 3;
/** How long what the portal's CapabilityStatement says it serves is trusted before it is read again. */
const CAPABILITIES_TTL_MS = 24 * 3_600_000;
/** Records filed per write. */
const BATCH = 500;

export interface PortalContext {
  store: PortalStore;
  timelines: Timelines;
  /** The client carecircle is at this portal (configured, or FHIR_CLIENT_ID). */
  issuerOf(c: Pick<ConnectionRecord, 'name' | 'base' | 'clientId'>): PortalIssuer;
  clock: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const issue = z.looseObject({
  severity: z.string().optional(),
  code: z.string().optional(),
  diagnostics: z.string().optional(),
  details: z.looseObject({ text: z.string().optional() }).optional(),
});
const operationOutcome = z.looseObject({ resourceType: z.literal('OperationOutcome'), issue: z.array(issue).max(100) });
const resource = z.looseObject({
  resourceType: z.string().max(64),
  id: z.string().max(64),
  meta: z.looseObject({ versionId: z.string().max(64).optional(), lastUpdated: z.string().optional() }).optional(),
});
const bundle = z.looseObject({
  resourceType: z.literal('Bundle'),
  meta: z.looseObject({ lastUpdated: z.string().optional() }).optional(),
  link: z
    .array(z.looseObject({ relation: z.string(), url: z.string() }))
    .max(20)
    .optional(),
  entry: z
    .array(z.looseObject({ resource: z.unknown().optional() }))
    .max(5000)
    .optional(),
});
const capabilityStatement = z.looseObject({
  resourceType: z.literal('CapabilityStatement'),
  rest: z
    .array(z.looseObject({ mode: z.string().optional(), resource: z.array(z.looseObject({ type: z.string() })).optional() }))
    .max(20)
    .optional(),
});

/** An OperationOutcome in plain words: its issues' texts, or its codes. */
export function outcomeWords(body: unknown): string | undefined {
  const oo = operationOutcome.safeParse(body);
  if (!oo.success) return undefined;
  const words = oo.data.issue.map((i) => i.details?.text ?? i.diagnostics ?? i.code).filter(Boolean);
  return words.length ? [...new Set(words)].join('; ').slice(0, 300) : undefined;
}

/** An access token good for at least a minute: renewed (and the rotated refresh token kept) when not. */
async function accessToken(ctx: PortalContext, c: ConnectionRecord): Promise<string> {
  const tokens = ctx.store.openTokens(c);
  if (tokens.expiresAt - ctx.clock() > RENEW_BEFORE_MS) return tokens.access;
  if (!tokens.refresh) throw await needsSignIn(ctx, c, new PortalError('SIGN_IN_AGAIN', `${c.name}'s sign-in has expired; sign in again`));
  let renewed: PortalTokens;
  try {
    renewed = await refreshTokens(c.smart, ctx.issuerOf(c), tokens.refresh);
  } catch (err) {
    if (err instanceof PortalError && err.code === 'SIGN_IN_AGAIN') throw await needsSignIn(ctx, c, err);
    throw err;
  }
  c.tokens = ctx.store.sealTokens(c._id, renewed);
  await ctx.store.update(c._id, { tokens: c.tokens });
  return renewed.access;
}

async function needsSignIn(ctx: PortalContext, c: ConnectionRecord, err: PortalError): Promise<PortalError> {
  c.status = 'needs_sign_in';
  await ctx.store.update(c._id, { status: 'needs_sign_in', lastError: err.message });
  return err;
}

const retryAfterMs = (header: string | null, now: number): number => {
  if (!header) return 1000;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? 1000 : Math.max(0, at - now);
};

/** A portal's answer: the parsed body, its status and the portal's clock (the Date header). */
interface FhirAnswer {
  ok: boolean;
  status: number;
  body: unknown;
  date?: Date;
}

/** One GET at the portal, with the busy answers (429, 503) waited out as Retry-After asks; `requests` counts what was sent. */
async function fetchFhir(ctx: PortalContext, c: ConnectionRecord, url: string, what: string, requests: { n: number }): Promise<FhirAnswer> {
  const sleep = ctx.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    const token = await accessToken(ctx, c);
    let res: Response;
    requests.n++;
    try {
      res = await fetch(url, {
        headers: { accept: 'application/fhir+json', authorization: `Bearer ${token}` },
        redirect: 'error',
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new PortalError('UNREACHABLE', `${c.name}'s portal could not be reached; try again later`, { cause: err });
    }
    if (res.status === 429 || res.status === 503) {
      await res.body?.cancel();
      const wait = retryAfterMs(res.headers.get('retry-after'), ctx.clock());
      if (attempt >= MAX_TRIES || wait > MAX_WAIT_MS) throw new PortalError('PORTAL_BUSY', `${c.name}'s portal is busy; try Sync now again in a few minutes`);
      await sleep(wait);
      continue;
    }
    const text = await res.text();
    if (text.length > MAX_PAGE_BYTES) throw new PortalError('BAD_BUNDLE', `${c.name}'s portal sent a page of ${what} too large to read`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new PortalError('BAD_BUNDLE', `${c.name}'s portal answered ${res.status} with something that is not FHIR JSON while reading ${what}`);
    }
    if (res.status === 401)
      throw await needsSignIn(ctx, c, new PortalError('SIGN_IN_AGAIN', `${c.name}'s portal no longer accepts carecircle's sign-in; sign in again`));
    const date = new Date(res.headers.get('date') ?? '');
    return { ok: res.ok, status: res.status, body, ...(Number.isNaN(date.getTime()) ? {} : { date }) };
  }
}

const refused = (c: ConnectionRecord, what: string, answer: FhirAnswer) => {
  const words = outcomeWords(answer.body);
  return new PortalError('PORTAL_REFUSED', `${c.name}'s portal could not give ${what}${words ? `: ${words}` : ` (it answered ${answer.status})`}`);
};

async function getFhir(ctx: PortalContext, c: ConnectionRecord, url: string, what: string, requests = { n: 0 }): Promise<unknown> {
  const answer = await fetchFhir(ctx, c, url, what, requests);
  if (!answer.ok) throw refused(c, what, answer);
  return answer.body;
}

/** A search the portal does not serve: it says so with an OperationOutcome and 404 or 400. */
const notServed = (a: FhirAnswer) => (a.status === 404 || a.status === 400) && operationOutcome.safeParse(a.body).success;

interface SearchResult {
  found: FhirResource[];
  /** The portal's time when the search began (the first page's Bundle meta.lastUpdated, else its Date): the next sync asks for what changed after it. */
  at?: string;
}

/** Every resource of a search, following `next` links on the portal's own origin only (the token
 *  goes nowhere else); 'not served' when the portal answers the first page that it does not serve it. */
async function searchAll(ctx: PortalContext, c: ConnectionRecord, query: string, what: string, requests: { n: number }): Promise<SearchResult | 'not served'> {
  const found: FhirResource[] = [];
  const origin = new URL(c.base).origin;
  let url: string | undefined = `${c.base}/${query}`;
  let at: string | undefined;
  for (let page = 0; url; page++) {
    if (page >= MAX_PAGES) throw new PortalError('BAD_BUNDLE', `${c.name}'s portal sent more than ${MAX_PAGES} pages of ${what}`);
    const answer = await fetchFhir(ctx, c, url, what, requests);
    if (!answer.ok) {
      if (page === 0 && notServed(answer)) return 'not served';
      throw refused(c, what, answer);
    }
    const parsed = bundle.safeParse(answer.body);
    if (!parsed.success) throw new PortalError('BAD_BUNDLE', `${c.name}'s portal sent ${what} in a shape that is not a FHIR Bundle`);
    if (page === 0) {
      const stamped = new Date(parsed.data.meta?.lastUpdated ?? '');
      at = !Number.isNaN(stamped.getTime()) ? stamped.toISOString() : answer.date?.toISOString();
    }
    for (const e of parsed.data.entry ?? []) {
      const r = resource.safeParse(e.resource);
      if (r.success && r.data.resourceType !== 'OperationOutcome') found.push(r.data as FhirResource);
    }
    const next = parsed.data.link?.find((l) => l.relation === 'next')?.url;
    url = next && URL.parse(next)?.origin === origin ? next : undefined;
  }
  return { found, ...(at ? { at } : {}) };
}

/** The portal's patient, as the confirmation shows them. */
export async function readPatient(ctx: PortalContext, c: ConnectionRecord, id: string): Promise<PortalPatient> {
  const r = resource.safeParse(await getFhir(ctx, c, `${c.base}/Patient/${encodeURIComponent(id)}`, 'the patient'));
  if (!r.success || r.data.resourceType !== 'Patient') throw new PortalError('BAD_BUNDLE', `${c.name}'s portal did not send the patient`);
  const p = r.data as { name?: { text?: string; given?: string[]; family?: string }[]; birthDate?: string };
  const n = p.name?.[0];
  const name = (n?.text ?? [...(n?.given ?? []), n?.family ?? ''].join(' ')).trim() || 'a patient with no name given';
  return { id, name: name.slice(0, 200), ...(typeof p.birthDate === 'string' ? { birthDate: p.birthDate.slice(0, 10) } : {}) };
}

/** The resource types the portal's CapabilityStatement lists, read at most once a day; undefined
 *  when it lists none (or cannot be read): then every type is asked and its answer decides. */
async function servedTypes(ctx: PortalContext, c: ConnectionRecord, now: number, requests: { n: number }): Promise<ConnectionRecord['capabilities']> {
  if (c.capabilities && now - c.capabilities.at.getTime() < CAPABILITIES_TTL_MS) return c.capabilities;
  let types: string[] | undefined;
  try {
    requests.n++;
    const res = await fetch(`${c.base}/metadata`, { headers: { accept: 'application/fhir+json' }, redirect: 'error', signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    const parsed = res.ok && text.length <= MAX_PAGE_BYTES ? capabilityStatement.safeParse(JSON.parse(text)) : undefined;
    const listed = parsed?.success ? (parsed.data.rest ?? []).filter((r) => (r.mode ?? 'server') === 'server').flatMap((r) => r.resource ?? []) : [];
    if (listed.length) types = [...new Set(listed.map((r) => r.type))];
  } catch {
    // A portal whose metadata cannot be read is asked for each type instead.
  }
  return { at: new Date(now), ...(types ? { types } : {}) };
}

const listWords = (items: string[]) => new Intl.ListFormat('en', { type: 'conjunction' }).format(items);

/** "Northside Health's portal does not share immunizations and appointments." */
export const notSharedWords = (c: Pick<ConnectionRecord, 'name' | 'notShared'>): string | undefined =>
  c.notShared?.length ? `${c.name}'s portal does not share ${listWords(c.notShared)}.` : undefined;

/** A completed sync in words: "4 new records, 1 updated; 12 already here." */
export function syncWords(s: NonNullable<ConnectionRecord['lastSync']>): string {
  const parts = [
    s.imported ? `${s.imported} new record${s.imported === 1 ? '' : 's'}` : '',
    s.superseded ? `${s.superseded} updated` : '',
    s.unchanged ? `${s.unchanged} already here` : '',
  ].filter(Boolean);
  return parts.length ? `${parts.join(', ')}.` : 'Nothing new.';
}

/** How long a sync that has not finished counts as running (one that died with its process is not waited on after). */
const RUNNING_FOR_MS = 15 * 60_000;

/** A sync started and neither finished nor failed yet. */
export const syncing = (c: Pick<ConnectionRecord, 'lastTriedAt' | 'lastSync' | 'lastError'>, now: number): boolean =>
  !!c.lastTriedAt && !c.lastError && c.lastTriedAt.getTime() > (c.lastSync?.at.getTime() ?? 0) && now - c.lastTriedAt.getTime() < RUNNING_FOR_MS;

export interface SyncResult {
  imported: number;
  superseded: number;
  unchanged: number;
  /** FHIR requests sent (pages, retries and the CapabilityStatement). */
  requests: number;
  /** What the portal does not share, in the family's words. */
  notShared: string[];
}

/** Read everything (only what changed since the last complete sync, where there was one), then file it: a failure before the end writes nothing. */
export async function syncConnection(ctx: PortalContext, c: ConnectionRecord): Promise<SyncResult> {
  const started = ctx.clock();
  // The last failure is forgotten as the next try starts: until it ends, the page says a sync is running.
  await ctx.store.update(c._id, { lastTriedAt: new Date(started) }, ['lastError']);
  try {
    const patient = `patient=${encodeURIComponent(c.patient.id)}`;
    const requests = { n: 0 };
    const capabilities = await servedTypes(ctx, c, started, requests);
    const now = new Date(started);
    const cursors: Record<string, string> = {};
    const notShared: string[] = [];
    const events = new Map<string, PortalEvent>();
    for (const read of PORTAL_READS) {
      if (capabilities?.types && !capabilities.types.includes(read.type)) {
        notShared.push(read.what);
        continue;
      }
      const since = c.cursors?.[read.key];
      const query = (incremental: boolean) =>
        `${read.type}?${[patient, read.params, incremental && since ? `_lastUpdated=gt${since}` : ''].filter(Boolean).join('&')}`;
      let result = await searchAll(ctx, c, query(true), read.what, requests);
      // A portal that cannot search this type by _lastUpdated is asked for all of it.
      if (result === 'not served' && since) result = await searchAll(ctx, c, query(false), read.what, requests);
      if (result === 'not served') {
        notShared.push(read.what);
        continue;
      }
      if (result.at) cursors[read.key] = result.at;
      for (const r of result.found) file(events, c, r, read, now);
    }
    const result = { ...(await fileEvents(ctx, c, [...events.values()])), requests: requests.n, notShared };
    const lastSync = { at: now, imported: result.imported, superseded: result.superseded, unchanged: result.unchanged };
    await ctx.store.update(c._id, { lastSync, cursors, notShared, ...(capabilities ? { capabilities } : {}) }, ['lastError']);
    Object.assign(c, { lastSync, cursors, notShared, capabilities });
    return result;
  } catch (err) {
    const words = err instanceof PortalError ? err.message : 'The sync stopped on a fault in carecircle; try Sync now again later';
    await ctx.store.update(c._id, { lastError: words }).catch(() => undefined);
    throw err;
  }
}

/** One resource's event, keyed by the resource: a resource seen twice in one sync is filed once. */
function file(events: Map<string, PortalEvent>, c: ConnectionRecord, r: FhirResource, read: PortalRead, now: Date) {
  const e = toCareEvent(c, r, read.category, now);
  if (e) events.set(`${c._id}|${r.resourceType}/${r.id}`, e);
}

/** New resources appended in batches, new versions superseding their earlier record, then what is filed remembered. */
async function fileEvents(ctx: PortalContext, c: ConnectionRecord, events: PortalEvent[]): Promise<Omit<SyncResult, 'requests' | 'notShared'>> {
  const timeline = ctx.timelines.of(CARE_EVENT_STREAM);
  const result = { imported: 0, superseded: 0, unchanged: 0 };
  const keyOf = (e: PortalEvent) => `${c._id}|${e.provenance.resourceType}/${e.provenance.id}`;
  for (let i = 0; i < events.length; i += BATCH) {
    const batch = events.slice(i, i + BATCH);
    const known = new Map((await ctx.store.resources.find({ _id: { $in: batch.map(keyOf) } }).toArray()).map((k) => [k._id, k]));
    const fresh: PortalEvent[] = [];
    const filed: PortalEvent[] = [];
    for (const e of batch) {
      const before = known.get(keyOf(e));
      if (before?.versionId === e.provenance.versionId) {
        result.unchanged++;
        continue;
      }
      if (before && (await timeline.get(c.lovedOneId, before.recordId))) {
        await timeline.supersede(c.lovedOneId, before.recordId, e);
        result.superseded++;
      } else fresh.push(e);
      filed.push(e);
    }
    if (fresh.length) await timeline.append(fresh);
    result.imported += fresh.length;
    if (filed.length)
      await ctx.store.resources.bulkWrite(
        filed.map((e) => ({
          replaceOne: { filter: { _id: keyOf(e) }, replacement: { connectionId: c._id, recordId: e._id, versionId: e.provenance.versionId }, upsert: true },
        })),
        { ordered: false },
      );
  }
  return result;
}
