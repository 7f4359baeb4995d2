// Each member's alert preferences for each loved one: per kind, right away, daily or weekly
// digest, or never; quiet hours in their zone; the digest's day and hour. A member who never chose
// gets the defaults. Input is checked here, each refusal naming its field.
import type { Collection, Db, IndexDescription } from 'mongodb';
import { z } from 'zod';
import { knownZone } from '../family/changes.js';
import { WEEKDAYS, type Weekday } from '../family/medSchedule.js';
import { ALERT_KINDS, DELIVERY_MODES, KIND_NAMES, type AlertKind, type DeliveryMode } from './kinds.js';

export const ALERT_PREFERENCES = 'alert_preferences';
export const PREFERENCE_INDEXES: Record<string, IndexDescription[]> = { [ALERT_PREFERENCES]: [{ key: { lovedOneId: 1 }, name: 'by_loved_one' }] };

export interface QuietHours {
  /** "22:00" to "07:00" in `zone`: the span may cross midnight. */
  start: string;
  end: string;
}

export interface AlertPreferences {
  modes: Record<AlertKind, DeliveryMode>;
  quiet: QuietHours | null;
  /** The member's IANA zone for quiet hours and the digest's hour. */
  zone: string;
  /** The weekly digest's day, and both digests' hour (0–23). */
  digestDay: Weekday;
  digestHour: number;
}

interface PreferenceRecord extends AlertPreferences {
  _id: string; // `${uid}:${lovedOneId}`
  uid: string;
  lovedOneId: string;
  updatedAt: Date;
}

/** What a new member gets: missed doses and falls right away, the rest weekly, Sunday at 18:00. */
export function defaultPreferences(zone = 'UTC'): AlertPreferences {
  const modes = Object.fromEntries(KIND_NAMES.map((k) => [k, ALERT_KINDS[k].byDefault])) as Record<AlertKind, DeliveryMode>;
  return { modes, quiet: null, zone: knownZone(zone) ?? 'UTC', digestDay: 'sun', digestHour: 18 };
}

/** One refusal, naming the field it is about. */
export class PreferenceInvalid extends Error {
  constructor(readonly problems: { field: string; message: string }[]) {
    super(problems.map((p) => `${p.field}: ${p.message}`).join('; '));
    this.name = 'PreferenceInvalid';
  }
}

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time such as 22:00');
const minutesOf = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));

export const preferencesInput = z
  .object({
    modes: z.object(Object.fromEntries(KIND_NAMES.map((k) => [k, z.enum(DELIVERY_MODES)])) as Record<AlertKind, z.ZodEnum<{ [M in DeliveryMode]: M }>>),
    quiet: z.object({ start: hhmm, end: hhmm }).nullable(),
    zone: z.string().refine((s) => knownZone(s) !== null, 'is not a time zone this server knows (an IANA name such as Europe/Lisbon)'),
    digestDay: z.enum(WEEKDAYS),
    digestHour: z.number().int().min(0, 'must be an hour from 0 to 23').max(23, 'must be an hour from 0 to 23'),
  })
  .superRefine((p, ctx) => {
    if (p.quiet && p.quiet.start === p.quiet.end)
      ctx.addIssue({ code: 'custom', path: ['quiet', 'end'], message: 'must differ from the start (quiet all day would hold every alert)' });
  });

/** Checked preferences, or PreferenceInvalid naming each bad field ("quiet.end", "zone", "modes.missed_dose"). */
export function parsePreferences(raw: unknown): AlertPreferences {
  const parsed = preferencesInput.safeParse(raw);
  if (!parsed.success) throw new PreferenceInvalid(parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'preferences', message: i.message })));
  return parsed.data;
}

/** The instant quiet hours end, when `at` falls inside them; null when it does not. */
export function quietUntil(p: AlertPreferences, at: Date): Date | null {
  if (!p.quiet) return null;
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: p.zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  const now = minutesOf(parts);
  const start = minutesOf(p.quiet.start);
  const end = minutesOf(p.quiet.end);
  const inside = start < end ? now >= start && now < end : now >= start || now < end;
  if (!inside) return null;
  const wait = (end - now + 24 * 60) % (24 * 60);
  return new Date(Math.floor(at.getTime() / 60_000) * 60_000 + wait * 60_000);
}

/** A member's stored row as their preferences, or the defaults in their zone when they never chose. */
function fromRow(row: PreferenceRecord | null, zone?: string): AlertPreferences & { chosen: boolean } {
  if (!row) return { ...defaultPreferences(zone), chosen: false };
  const fallback = defaultPreferences(row.zone);
  // A kind added since the member chose gets its default.
  return { modes: { ...fallback.modes, ...row.modes }, quiet: row.quiet, zone: row.zone, digestDay: row.digestDay, digestHour: row.digestHour, chosen: true };
}

export class PreferenceStore {
  private readonly rows: Collection<PreferenceRecord>;

  constructor(db: Db) {
    this.rows = db.collection(ALERT_PREFERENCES);
  }

  /** The member's preferences for the loved one, or the defaults in their zone. */
  async of(uid: string, lovedOneId: string, zone?: string): Promise<AlertPreferences & { chosen: boolean }> {
    return fromRow(await this.rows.findOne({ _id: `${uid}:${lovedOneId}` }), zone);
  }

  /** `of` for every member of these loved ones, from one read: a pass over many loved ones (the
   *  digests) reads the rows once, not once per member. */
  async ofLovedOnes(lovedOneIds: readonly string[]): Promise<(uid: string, lovedOneId: string, zone?: string) => AlertPreferences & { chosen: boolean }> {
    const rows = lovedOneIds.length ? await this.rows.find({ lovedOneId: { $in: [...lovedOneIds] } }).toArray() : [];
    const byId = new Map(rows.map((r) => [r._id, r]));
    return (uid, lovedOneId, zone) => fromRow(byId.get(`${uid}:${lovedOneId}`) ?? null, zone);
  }

  async set(uid: string, lovedOneId: string, prefs: AlertPreferences, now = new Date()): Promise<void> {
    const p = parsePreferences(prefs);
    await this.rows.updateOne({ _id: `${uid}:${lovedOneId}` }, { $set: { uid, lovedOneId, ...p, updatedAt: now } }, { upsert: true });
  }

  /** Turn one kind off, or every kind a digest carries (an unsubscribe link); the rest stay as they were, or as the defaults. */
  async turnOff(uid: string, lovedOneId: string, what: AlertKind | 'daily' | 'weekly', zone?: string, now = new Date()): Promise<void> {
    const { chosen: _chosen, ...prefs } = await this.of(uid, lovedOneId, zone);
    const off = KIND_NAMES.filter((k) => k === what || prefs.modes[k] === what);
    const modes = { ...prefs.modes, ...Object.fromEntries(off.map((k) => [k, 'never'])) };
    await this.set(uid, lovedOneId, { ...prefs, modes }, now);
  }
}
