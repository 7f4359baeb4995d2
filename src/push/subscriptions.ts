// Web push subscriptions, one per person and browser: the input a page sends, checked field by
// field, and the store keyed by a hash of the endpoint (the endpoint itself is a bearer capability).
import { createHash, ECDH } from 'node:crypto';
import { isIP } from 'node:net';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { z } from 'zod';
import { specialUseAddress } from '../oauth/clientMetadata.js';

export const PUSH_SUBSCRIPTIONS = 'push_subscriptions';
export const PUSH_INDEXES: Record<string, IndexDescription[]> = { [PUSH_SUBSCRIPTIONS]: [{ key: { uid: 1, createdAt: -1 }, name: 'by_person' }] };

/** Browsers and devices one person may receive on; a person with more removes one first. */
export const MAX_DEVICES = 20;
/** Push services' endpoints run to a few hundred characters; this leaves room and bounds what is stored. */
export const MAX_ENDPOINT_LENGTH = 2048;

const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

/** base64url (padding tolerated, as some browsers send it) decoding to exactly `bytes` bytes. */
const base64url = (bytes: number, what: string) =>
  z
    .string({ error: `must be ${what}: ${bytes} bytes as base64url` })
    .max(200, `must be ${what}: ${bytes} bytes as base64url`)
    .transform((s) => s.replace(/=+$/, ''))
    .refine((s) => /^[A-Za-z0-9_-]*$/.test(s) && Buffer.from(s, 'base64url').length === bytes, `must be ${what}: ${bytes} bytes as base64url`);

/**
 * What a page posts: PushSubscription.toJSON(). The endpoint is where carecircle will POST, so it
 * must be https on a public name; plain http and loopback only when `allowLoopback` (development
 * and tests, never production).
 */
export function subscriptionInput(opts: { allowLoopback: boolean }) {
  return z.object({
    endpoint: z
      .string({ error: 'is required: the push service URL the browser gave (PushSubscription.endpoint)' })
      .min(1, 'is required: the push service URL the browser gave (PushSubscription.endpoint)')
      .max(MAX_ENDPOINT_LENGTH, `must be at most ${MAX_ENDPOINT_LENGTH} characters`)
      .superRefine((value, ctx) => {
        const url = URL.parse(value);
        if (!url || !/^https?:$/.test(url.protocol)) return void ctx.addIssue({ code: 'custom', message: 'must be an https URL' });
        if (url.username || url.password) return void ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password' });
        const host = url.hostname;
        const loopback = isLoopbackName(host);
        if (url.protocol === 'http:' && !(loopback && opts.allowLoopback)) return void ctx.addIssue({ code: 'custom', message: 'must be an https URL' });
        const literal = host.replace(/^\[|\]$/g, '');
        if (!opts.allowLoopback && (loopback || (isIP(literal) && specialUseAddress(literal))))
          ctx.addIssue({ code: 'custom', message: 'must name a public push service, not a local or private address' });
      }),
    expirationTime: z.number().nullable().optional(),
    keys: z.object(
      {
        // A point not on P-256 would fail every encryption later: refused now, naming the field.
        p256dh: base64url(65, 'the browser’s P-256 public key').refine((s) => {
          try {
            ECDH.convertKey(Buffer.from(s, 'base64url'), 'prime256v1');
            return true;
          } catch {
            return false;
          }
        }, 'must be a point on P-256'),
        auth: base64url(16, 'the authentication secret'),
      },
      { error: 'is required: {"p256dh", "auth"} from PushSubscription.toJSON()' },
    ),
  });
}

export type SubscriptionInput = z.output<ReturnType<typeof subscriptionInput>>;

export interface PushSubscriptionRecord {
  /** sha256 of the endpoint, hex. */
  _id: string;
  uid: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** "Chrome on Android": how the person tells their devices apart in Settings. */
  device: string;
  createdAt: Date;
}

export interface PushDevice {
  id: string;
  device: string;
  createdAt: Date;
}

export class TooManyDevices extends Error {
  override name = 'TooManyDevices';
  constructor() {
    super(`You receive notifications on as many browsers as a person may (${MAX_DEVICES}): remove one you no longer use first.`);
  }
}

export const endpointId = (endpoint: string): string => createHash('sha256').update(endpoint).digest('hex');

/** "Firefox on Android" from the User-Agent; the push service's host when the browser is not recognised. */
export function deviceLabel(userAgent: string | undefined, endpoint: string): string {
  const ua = userAgent ?? '';
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /OPR\//.test(ua)
      ? 'Opera'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Chrome\//.test(ua)
          ? 'Chrome'
          : /Safari\//.test(ua)
            ? 'Safari'
            : undefined;
  const system = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad/.test(ua)
      ? 'iOS'
      : /Windows/.test(ua)
        ? 'Windows'
        : /Mac OS X/.test(ua)
          ? 'macOS'
          : /CrOS/.test(ua)
            ? 'ChromeOS'
            : /Linux/.test(ua)
              ? 'Linux'
              : undefined;
  if (browser) return system ? `${browser} on ${system}` : browser;
  return `A browser using ${new URL(endpoint).host}`;
}

export class PushSubscriptions {
  private readonly subscriptions: Collection<PushSubscriptionRecord>;
  constructor(db: Db) {
    this.subscriptions = db.collection(PUSH_SUBSCRIPTIONS);
  }

  /**
   * Subscribe `uid` on a browser. The same browser subscribing again refreshes its keys and keeps
   * its date; a browser another person had subscribed on now notifies this one (one endpoint, one person).
   */
  async add(uid: string, input: SubscriptionInput, device: string, now = new Date()): Promise<{ id: string; created: boolean }> {
    const id = endpointId(input.endpoint);
    const refreshed = await this.subscriptions.updateOne({ _id: id, uid }, { $set: { keys: input.keys, device } });
    if (refreshed.matchedCount) return { id, created: false };
    if ((await this.subscriptions.countDocuments({ uid })) >= MAX_DEVICES) throw new TooManyDevices();
    await this.subscriptions.replaceOne({ _id: id }, { uid, endpoint: input.endpoint, keys: input.keys, device, createdAt: now }, { upsert: true });
    return { id, created: true };
  }

  /** Newest first. */
  list(uid: string): Promise<PushSubscriptionRecord[]> {
    return this.subscriptions.find({ uid }).sort({ createdAt: -1 }).limit(MAX_DEVICES).toArray();
  }

  async devices(uid: string): Promise<PushDevice[]> {
    return (await this.list(uid)).map((s) => ({ id: s._id, device: s.device, createdAt: s.createdAt }));
  }

  async remove(uid: string, id: string): Promise<boolean> {
    return (await this.subscriptions.deleteOne({ _id: id, uid })).deletedCount === 1;
  }

  removeByEndpoint(uid: string, endpoint: string): Promise<boolean> {
    return this.remove(uid, endpointId(endpoint));
  }

  /** What the push service said is gone: removed only if still the same subscription (the browser may have subscribed afresh meanwhile). */
  async removeGone(record: Pick<PushSubscriptionRecord, '_id' | 'uid' | 'keys'>): Promise<boolean> {
    return (await this.subscriptions.deleteOne({ _id: record._id, uid: record.uid, 'keys.auth': record.keys.auth })).deletedCount === 1;
  }

  /** Every subscription of a person, when their account goes. */
  async removeAll(uid: string): Promise<number> {
    return (await this.subscriptions.deleteMany({ uid })).deletedCount;
  }
}
