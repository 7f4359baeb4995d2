// Reading a loved one's records from their portal and filing them on the care timeline: tokens
// renewed before they expire, every page read before anything is written (a failed page leaves the
// last complete sync in place), each resource version one record, a new version superseding the old.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { CareEventRecord } from '../family/records.js';
import type { PortalProvenance } from '../family/careEvents.js';
import { CARE_EVENT_STREAM } from '../family/records.js';
import type { Timelines } from '../store/timeline/port.js';
import type { ConnectionRecord, PortalPatient, PortalStore } from './connections.js';
import { PortalError, refreshTokens, type PortalIssuer, type PortalTokens } from './smart.js';

/** Renew this long before the access token expires. */
const RENEW_BEFORE_MS = 60_000;
const MAX_PAGES = 50;
const MAX_PAGE_BYTES = 5 * 1024 * 1024;
/** Waits a busy portal may ask for (Retry-After) before the sync gives up for now. */
const MAX_WAIT_MS = 30_000;
const MAX_TRIES = 3;

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
  link: z
    .array(z.looseObject({ relation: z.string(), url: z.string() }))
    .max(20)
    .optional(),
  entry: z
    .array(z.looseObject({ resource: z.unknown().optional() }))
    .max(5000)
    .optional(),
});
type FhirResource = z.infer<typeof resource> & Record<string, unknown>;

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

/** One GET at the portal, with the busy answers (429, 503) waited out as Retry-After asks. */
async function getFhir(ctx: PortalContext, c: ConnectionRecord, url: string, what: string): Promise<unknown> {
  const sleep = ctx.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    const token = await accessToken(ctx, c);
    let res: Response;
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
    if (res.ok) return body;
    if (res.status === 401)
      throw await needsSignIn(ctx, c, new PortalError('SIGN_IN_AGAIN', `${c.name}'s portal no longer accepts carecircle's sign-in; sign in again`));
    const words = outcomeWords(body);
    throw new PortalError('PORTAL_REFUSED', `${c.name}'s portal could not give ${what}${words ? `: ${words}` : ` (it answered ${res.status})`}`);
  }
}

/** Every resource of a search, following `next` links on the portal's own origin only (the token goes nowhere else). */
async function searchAll(ctx: PortalContext, c: ConnectionRecord, query: string, what: string): Promise<FhirResource[]> {
  const found: FhirResource[] = [];
  const origin = new URL(c.base).origin;
  let url: string | undefined = `${c.base}/${query}`;
  for (let page = 0; url; page++) {
    if (page >= MAX_PAGES) throw new PortalError('BAD_BUNDLE', `${c.name}'s portal sent more than ${MAX_PAGES} pages of ${what}`);
    const parsed = bundle.safeParse(await getFhir(ctx, c, url, what));
    if (!parsed.success) throw new PortalError('BAD_BUNDLE', `${c.name}'s portal sent ${what} in a shape that is not a FHIR Bundle`);
    for (const e of parsed.data.entry ?? []) {
      const r = resource.safeParse(e.resource);
      if (r.success && r.data.resourceType !== 'OperationOutcome') found.push(r.data as FhirResource);
    }
    const next = parsed.data.link?.find((l) => l.relation === 'next')?.url;
    url = next && URL.parse(next)?.origin === origin ? next : undefined;
  }
  return found;
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

const text = (cc: unknown): string | undefined => {
  const c = cc as { text?: string; coding?: { display?: string; code?: string }[] } | undefined;
  return c?.text ?? c?.coding?.find((x) => x.display)?.display ?? c?.coding?.[0]?.code;
};
const loinc = (cc: unknown): string | undefined =>
  (cc as { coding?: { system?: string; code?: string }[] } | undefined)?.coding?.find((x) => x.system === 'http://loinc.org')?.code;
const when = (...vs: unknown[]): Date | undefined => {
  for (const v of vs) {
    const d = typeof v === 'string' ? new Date(v) : undefined;
    if (d && !Number.isNaN(d.getTime())) return d;
  }
  return undefined;
};

type PortalEvent = CareEventRecord & { provenance: PortalProvenance };

/** One resource as a care event: its own payload, its provenance, and an id from the (portal, resource, version) triple. */
export function toCareEvent(c: ConnectionRecord, r: FhirResource, category: string | undefined, now: Date): PortalEvent {
  const versionId = r.meta?.versionId ?? r.meta?.lastUpdated ?? '1';
  const provenance = { portal: c.base, resourceType: r.resourceType, id: r.id, versionId };
  const _id = `portal_${createHash('sha256')
    .update(JSON.stringify([c.lovedOneId, c.base, r.resourceType, r.id, versionId]))
    .digest('base64url')
    .slice(0, 32)}`;
  const base = { _id, lovedOneId: c.lovedOneId, workspaceId: c.workspaceId, source: 'portal' as const, receivedAt: now, provenance };
  if (r.resourceType === 'MedicationRequest') {
    const dosage = (r.dosageInstruction as { text?: string }[] | undefined)?.[0]?.text;
    return {
      ...base,
      eventType: 'portal_medication',
      occurredAt: when(r.authoredOn, r.meta?.lastUpdated) ?? now,
      payload: {
        portal_name: c.name,
        medication: text(r.medicationCodeableConcept) ?? 'A medication',
        status: String(r.status ?? 'unknown'),
        ...(dosage ? { dosage } : {}),
      },
    };
  }
  const q = r.valueQuantity as { value?: number; unit?: string; code?: string } | undefined;
  const value =
    q?.value !== undefined
      ? `${q.value}${(q.unit ?? q.code) ? ` ${q.unit ?? q.code}` : ''}`
      : (text(r.valueCodeableConcept) ?? (typeof r.valueString === 'string' ? r.valueString : undefined));
  return {
    ...base,
    eventType: category === 'vital-signs' ? 'portal_vital' : 'portal_result',
    occurredAt: when(r.effectiveDateTime, (r.effectivePeriod as { start?: string } | undefined)?.start, r.issued, r.meta?.lastUpdated) ?? now,
    payload: {
      portal_name: c.name,
      category: category ?? 'observation',
      name: text(r.code) ?? 'A result',
      ...(loinc(r.code) ? { loinc: loinc(r.code) } : {}),
      ...(value ? { value: value.slice(0, 200) } : {}),
      ...(q?.value !== undefined ? { amount: q.value, unit: q.unit ?? q.code ?? '' } : {}),
      status: String(r.status ?? 'unknown'),
    },
  };
}

export interface SyncResult {
  imported: number;
  superseded: number;
  unchanged: number;
}

/** Read everything, then file it: a failure before the end writes nothing. */
export async function syncConnection(ctx: PortalContext, c: ConnectionRecord): Promise<SyncResult> {
  try {
    const patient = encodeURIComponent(c.patient.id);
    const reads: [string, string, string | undefined][] = [
      [`Observation?patient=${patient}&category=vital-signs`, 'vital signs', 'vital-signs'],
      [`Observation?patient=${patient}&category=laboratory`, 'test results', 'laboratory'],
      [`MedicationRequest?patient=${patient}`, 'the medication list', undefined],
    ];
    const now = new Date(ctx.clock());
    const events: PortalEvent[] = [];
    for (const [query, what, category] of reads) for (const r of await searchAll(ctx, c, query, what)) events.push(toCareEvent(c, r, category, now));

    const timeline = ctx.timelines.of(CARE_EVENT_STREAM);
    const result: SyncResult = { imported: 0, superseded: 0, unchanged: 0 };
    for (const e of events) {
      const key = `${c._id}|${e.provenance.resourceType}/${e.provenance.id}`;
      const known = await ctx.store.resources.findOne({ _id: key });
      if (known?.versionId === e.provenance.versionId) {
        result.unchanged++;
        continue;
      }
      if (known && (await timeline.get(c.lovedOneId, known.recordId))) {
        await timeline.supersede(c.lovedOneId, known.recordId, e);
        result.superseded++;
      } else {
        await timeline.append([e]);
        result.imported++;
      }
      await ctx.store.resources.replaceOne({ _id: key }, { connectionId: c._id, recordId: e._id, versionId: e.provenance.versionId }, { upsert: true });
    }
    await ctx.store.update(c._id, { lastSync: { at: now, ...result } }, ['lastError']);
    return result;
  } catch (err) {
    if (err instanceof PortalError) await ctx.store.update(c._id, { lastError: err.message });
    throw err;
  }
}
