// The worker side of the pipe host ({pipe_url}): partner events and the agency's family-share
// calls. The gateway forwarded the exact body bytes; nothing is parsed before the signature check.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { PartnerStore } from '../partner/records.js';
import { parseIsoInstant, TIMESTAMP_TOLERANCE_MS } from '../partner/signature.js';
import { newId } from '../store/ids.js';
import type { Limiter } from '../limits/limiter.js';
import { hasLovedOne } from '../family/records.js';
import { ApiProblem, json } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { PartnerAuth, type VerifiedPartner } from './auth.js';
import { controlKey, eventKey, type KeyClaims } from './dedupe.js';
import { describeIssues, familyShareBody, parseEvent, purgeBody } from './envelope.js';
import { shareView, type FamilyShares } from './familyShare.js';
import { unstorable } from './storable.js';
import { INGEST_ROUTES } from './routes.js';
import type { EventSink, LaneName } from './stream.js';
import { mayRaiseAlert } from '../family/alerting.js';
import type { CareEventWriter, QueuedEvent } from './writer.js';
import { countDatabaseError } from '../bus/failures.js';
import { metrics } from '../metrics/index.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The gateway's envelope body: the request bytes, base64. */
const rawBody = z.object({ raw: z.string() });

export interface PipeDeps {
  config: Config;
  db: Db;
  credentials: Credentials;
  partners: PartnerStore;
  shares: FamilyShares;
  writer: CareEventWriter;
  sink: EventSink;
  limiter: Limiter;
  /** Where the de-duplication keys are claimed: the store, or NATS key-value on a NATS bus. */
  claims: KeyClaims;
  clock?: () => number;
  /** Keep institutions in memory: only where every writer reaches this process (NATS). */
  keepInstitutions?: boolean;
}

/** The stream lane of an accepted event: urgent when it may raise an alert (a fall in a note, a
 *  reading), decided from the event alone, so the alert never waits behind routine events. */
export function laneOf(e: QueuedEvent): LaneName {
  return mayRaiseAlert(e) ? 'urgent' : 'routine';
}

function bytesOf(req: HttpRequestEnvelope): Buffer {
  const parsed = rawBody.safeParse(req.body);
  if (!parsed.success) throw new ApiProblem(400, 'BAD_REQUEST', 'The request body is missing', 'Send the JSON body.');
  return Buffer.from(parsed.data.raw, 'base64');
}

function parseJsonBytes(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new ApiProblem(400, 'BAD_REQUEST', 'The body is not valid JSON', 'Send one JSON object (UTF-8). Do not retry this body as it is.');
  }
}

const invalid = (message: string, hint = 'Fix the field and send the event again; do not retry this body as it is.') =>
  new ApiProblem(400, 'VALIDATION_FAILED', message, hint);

export function pipeHandlers(deps: PipeDeps): RouteHandlers {
  const clock = deps.clock ?? Date.now;
  const auth = new PartnerAuth(deps.partners, deps.limiter, deps.config.rateIngestPerMin, clock, deps.keepInstitutions);
  const keys = deps.claims;

  /** The subject's binding, when it holds and its loved one still exists. Both are kept in memory
   *  and forgotten on every process by whoever changes them, before that change returns. */
  async function liveBinding(institutionId: string, subjectRef: string) {
    const binding = await deps.shares.currentBinding(institutionId, subjectRef);
    return binding && (await hasLovedOne(deps.db, deps.credentials, binding.link.workspaceId, binding.link.lovedOneId)) ? binding : null;
  }
  const retentionMs = deps.config.ingestDedupeDays * DAY_MS;

  /** Past authentication, a failure to read or write is ours: 503, which partners retry. */
  const guarded =
    (fn: (req: HttpRequestEnvelope, params: Record<string, string>, log: Logger) => Promise<HttpReplyEnvelope>) =>
    async (req: HttpRequestEnvelope, params: Record<string, string>, log: Logger): Promise<HttpReplyEnvelope> => {
      try {
        return await fn(req, params, log);
      } catch (err) {
        if (err instanceof ApiProblem) throw err;
        countDatabaseError(err);
        log.error({ err }, 'pipe request failed');
        throw new ApiProblem(
          503,
          'UNAVAILABLE',
          'The request could not be stored right now',
          'Retry with exponential backoff (1, 2, 4, 8, 16, 32 s); nothing was lost on your side.',
          { 'retry-after': '2' },
        );
      }
    };

  async function acceptEvent(req: HttpRequestEnvelope, _params: Record<string, string>, log: Logger): Promise<HttpReplyEnvelope> {
    const raw = bytesOf(req);
    const { institution, secretId } = await auth.verify(req, raw);
    const body = parseJsonBytes(raw);
    const parsed = parseEvent(body);
    if (!parsed.ok) throw invalid(parsed.message);
    const event = parsed.event;
    // Before anything else reads the payload: what the store would refuse is the partner's to fix,
    // and a 202 for it would be an event that can never be stored. Checked on the payload as sent,
    // not as parsed: the schema's copy silently leaves out a "__proto__" key, which is refused.
    const unfit = unstorable((body as { payload: unknown }).payload, 'payload');
    if (unfit) throw invalid(`${unfit.path}: ${unfit.message} [rule: ${unfit.rule}]`);
    if (event.institution_id !== institution._id) throw invalid(`institution_id: "${event.institution_id.slice(0, 64)}" does not match X-Pipe-Institution`);
    const now = clock();
    const occurredAt = parseIsoInstant(event.occurred_at)!;
    if (occurredAt - now > TIMESTAMP_TOLERANCE_MS) throw invalid('occurred_at: is in the future; send when the event has happened');
    if (now - occurredAt > retentionMs)
      throw invalid(
        `occurred_at: is more than ${deps.config.ingestDedupeDays} days old, beyond the replay window`,
        'Contact carecircle partner support for a backfill; do not retry.',
      );
    const idempotencyKey = req.headers['idempotency-key']?.trim();
    if (idempotencyKey !== undefined && (idempotencyKey.length < 1 || idempotencyKey.length > 200)) throw invalid('Idempotency-Key: must be 1-200 characters');
    if (event.source_event_id && idempotencyKey && event.source_event_id !== idempotencyKey)
      throw invalid('source_event_id: differs from the Idempotency-Key header; send one id, or the same in both');
    const sourceEventId = event.source_event_id ?? idempotencyKey;

    const binding = await liveBinding(institution._id, event.subject_ref);
    if (!binding)
      throw new ApiProblem(
        404,
        'NOT_FOUND',
        'No family-share mapping for this subject_ref',
        'The client is not opted in to family-share, its family has not entered the link code yet, or the subject was deleted. Do not retry this event.',
      );

    const claim = await keys.claim({
      _id: eventKey(institution._id, event, sourceEventId),
      kind: 'event',
      institutionId: institution._id,
      subjectRef: event.subject_ref,
      secretId,
      requestId: req.requestId,
      at: new Date(now),
      eventId: newId('evt'),
    });
    const first = claim.record;
    // The same request again (a gateway retry) is not a duplicate; anything else with this key is.
    const duplicate = !claim.fresh && first.requestId !== req.requestId;
    // A duplicate makes the first event durable again under its id: its first request may have
    // failed after claiming the key. Both sinks are idempotent for an event id (JetStream's
    // Nats-Msg-Id window, then the care event's `_id`), so this never stores it twice, and it
    // saves a status write on every event.
    const queued: QueuedEvent = {
      v: 1,
      eventId: first.eventId!,
      institutionId: institution._id,
      subjectRef: event.subject_ref,
      eventType: event.event_type,
      occurredAt: new Date(occurredAt).toISOString(),
      receivedAt: first.at.toISOString(),
      payload: event.payload,
      ...(sourceEventId ? { sourceEventId } : {}),
      linkId: binding.link.linkId,
    };
    const lane = laneOf(queued);
    await deps.sink.put(queued, lane);
    metrics.ingestAccepted.inc();
    if (lane === 'urgent') metrics.ingestUrgent.inc();
    if (duplicate) metrics.ingestDuplicates.inc();
    log.info(
      { institutionId: institution._id, secretId, eventId: queued.eventId, eventType: queued.eventType, duplicate, sink: deps.sink.kind, lane },
      'event accepted',
    );
    return json(202, { event_id: queued.eventId, duplicate });
  }

  /** Agency calls: verified like events, the body names the subject and is fresh and single-use. */
  async function control<T extends { subject_ref: string; requested_at: string }>(
    req: HttpRequestEnvelope,
    params: Record<string, string>,
    schema: z.ZodType<T>,
  ): Promise<{ partner: VerifiedPartner; body: T; replay: boolean; key: string }> {
    const raw = bytesOf(req);
    const partner = await auth.verify(req, raw);
    const parsed = schema.safeParse(parseJsonBytes(raw));
    if (!parsed.success) throw invalid(describeIssues(parsed.error), 'Fix the body and send it again.');
    const body = parsed.data;
    if (body.subject_ref !== params.subject_ref)
      throw invalid('subject_ref: differs from the subject in the path', 'Sign a body naming the subject you act on.');
    const at = parseIsoInstant(body.requested_at)!;
    if (Math.abs(clock() - at) > TIMESTAMP_TOLERANCE_MS)
      throw new ApiProblem(401, 'UNAUTHORIZED', 'requested_at is more than 5 minutes from our clock', 'Sign a new body with the current time in requested_at.');
    const key = controlKey(partner.institution._id, raw);
    const claim = await keys.claim({
      _id: key,
      kind: 'control',
      institutionId: partner.institution._id,
      subjectRef: body.subject_ref,
      secretId: partner.secretId,
      requestId: req.requestId,
      at: new Date(clock()),
      status: 'pending',
    });
    return { partner, body, key, replay: !claim.fresh && claim.record.status === 'accepted' };
  }

  async function putFamilyShare(req: HttpRequestEnvelope, params: Record<string, string>, log: Logger): Promise<HttpReplyEnvelope> {
    const { partner, body, replay, key } = await control(req, params, familyShareBody);
    const inst = partner.institution._id;
    if (replay) return json(200, { ...shareView(body.subject_ref, await deps.shares.load(inst, body.subject_ref)), replayed: true });
    let reply: Record<string, unknown>;
    if (body.enabled) {
      const { snapshot, linkCode } = await deps.shares.enable(inst, body.subject_ref);
      reply = {
        ...shareView(body.subject_ref, snapshot),
        ...(linkCode ? { link_code: linkCode.code, link_code_expires_at: linkCode.expiresAt.toISOString() } : {}),
      };
    } else {
      reply = shareView(body.subject_ref, await deps.shares.disable(inst, body.subject_ref));
    }
    await keys.markAccepted(key);
    log.info({ institutionId: inst, secretId: partner.secretId, familyShare: reply.family_share }, 'family-share set');
    return json(200, reply);
  }

  async function purgeEvents(req: HttpRequestEnvelope, params: Record<string, string>, log: Logger): Promise<HttpReplyEnvelope> {
    const { partner, body, replay, key } = await control(req, params, purgeBody);
    const inst = partner.institution._id;
    if (replay) return json(200, { subject_ref: body.subject_ref, purged: 0, replayed: true });
    // First the instant (so events still in flight are dropped), then what is stored.
    await deps.shares.markPurged(inst, body.subject_ref);
    const purged = await deps.writer.purge(inst, body.subject_ref);
    await keys.markAccepted(key);
    log.info({ institutionId: inst, secretId: partner.secretId, purged }, 'subject events purged');
    return json(200, { subject_ref: body.subject_ref, purged });
  }

  return handlers(INGEST_ROUTES)
    .on('pipeV1Events', 'POST', guarded(acceptEvent))
    .on('pipeV1ClientsFamilyShare', 'PUT', guarded(putFamilyShare))
    .on('pipeV1ClientsEvents', 'DELETE', guarded(purgeEvents))
    .done();
}
