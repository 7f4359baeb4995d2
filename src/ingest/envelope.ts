// What partners send, parsed with zod: the event envelope, the payloads of the known event types,
// and the bodies of the agency calls. Unknown event types pass with their payload as it is.
import { z } from 'zod';
import { isoInstant, PARTNER_PAYLOADS } from '../family/careEventTypes.js';

export const SUBJECT_REF = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'subject_ref must be printable ASCII without spaces');

/** Payload fields of the v1 event types (SPEC, Events), from the catalogue of care-event types. Extra fields are kept. */
export const KNOWN_PAYLOADS = PARTNER_PAYLOADS;

export type KnownEventType = keyof typeof KNOWN_PAYLOADS;
export const KNOWN_EVENT_TYPES = Object.keys(KNOWN_PAYLOADS) as KnownEventType[];

export const eventEnvelope = z.object({
  institution_id: z.string().min(1).max(64),
  subject_ref: SUBJECT_REF,
  event_type: z.string().regex(/^[a-z][a-z0-9_.-]{0,63}$/, 'event_type must be lower-case letters, digits, "_", "." or "-" (up to 64)'),
  occurred_at: isoInstant(),
  payload: z.record(z.string(), z.unknown()),
  /** The partner's own id of the event: the de-duplication key (DESIGN). */
  source_event_id: z.string().min(1).max(200).optional(),
});
export type EventEnvelope = z.infer<typeof eventEnvelope>;

/** Agency calls carry what they act on and when they were made inside the signed body (see docs/partners.md). */
const controlBase = { subject_ref: SUBJECT_REF, requested_at: isoInstant() };
export const familyShareBody = z.object({ enabled: z.boolean(), ...controlBase });
export const purgeBody = z.object(controlBase);

/** "payload.caregiver_id: Invalid input: expected string, received undefined" — field first, then what is wrong. */
export function describeIssues(error: z.ZodError, prefix = ''): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

/** The envelope, then the payload of a known type; throws a message naming the field. */
export function parseEvent(body: unknown): { ok: true; event: EventEnvelope } | { ok: false; message: string } {
  const env = eventEnvelope.safeParse(body);
  if (!env.success) return { ok: false, message: describeIssues(env.error) };
  const schema = Object.hasOwn(KNOWN_PAYLOADS, env.data.event_type) ? (KNOWN_PAYLOADS as Record<string, z.ZodType>)[env.data.event_type] : undefined;
  if (schema) {
    const p = schema.safeParse(env.data.payload);
    if (!p.success) return { ok: false, message: describeIssues(p.error, 'payload') };
  }
  return { ok: true, event: env.data };
}
