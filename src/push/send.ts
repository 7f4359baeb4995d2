// Sending one message to every browser a person subscribed: encrypted (RFC 8291) and signed (VAPID,
// RFC 8292) by web-push, delivered to each push service (RFC 8030), with each answer sorted.
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import webpush from 'web-push';
import { z } from 'zod';
import type { Config } from '../config.js';
import { describeIssues } from '../http/problems.js';
import type { Logger } from '../log.js';
import { PushSubscriptions, type PushSubscriptionRecord } from './subscriptions.js';
import { resolveVapid, type Vapid } from './vapid.js';

/**
 * What a notification shows. Callers decide what a member may see; the payload stays small and
 * carries no more than this (a push service stores it, encrypted, until the browser takes it).
 */
export interface PushMessage {
  title: string;
  body: string;
  /** Opened on click: a path of the app, or a URL on APP_URL (the service worker opens nothing else). */
  url: string;
  /** Notifications with the same tag replace each other on the device, and at the push service while undelivered. */
  tag?: string;
}

export type Urgency = 'very-low' | 'low' | 'normal' | 'high';

export interface PushOptions {
  /** How long a push service keeps the message for a browser that is offline, in seconds (RFC 8030 TTL). */
  ttlSeconds?: number;
  /** RFC 8030 §5.3: a device saving battery may hold back anything below `high`. */
  urgency?: Urgency;
  /** How long to wait for each push service, in milliseconds. */
  timeoutMs?: number;
}

/** A day: an alert older than that is no longer news; a fall should say `high`. */
export const DEFAULT_TTL_SECONDS = 86_400;
const DEFAULT_TIMEOUT_MS = 10_000;

export type PushOutcome =
  | { subscriptionId: string; device: string; status: 'sent'; statusCode: number }
  /** The push service no longer knows the subscription (404, 410): it has been removed. */
  | { subscriptionId: string; device: string; status: 'gone'; statusCode: number }
  | {
      subscriptionId: string;
      device: string;
      status: 'failed';
      /** Absent when no answer came (unreachable, timed out). */
      statusCode?: number;
      /** Worth sending again later (429, 5xx, no answer); otherwise sending again fails the same way. */
      retryable: boolean;
      /** The push service's Retry-After, in seconds, when it gave one. */
      retryAfterSeconds?: number;
      reason: string;
    };

/** A message that cannot be sent as given: the caller's mistake, named by field. */
export class PushMessageError extends Error {
  override name = 'PushMessageError';
}

/** Retry-After as seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** RFC 8030 Topic: at most 32 base64url characters, so the tag is hashed rather than sent. */
const topicOf = (tag: string) => createHash('sha256').update(tag).digest('base64url').slice(0, 32);

export interface PushSenderDeps {
  subscriptions: PushSubscriptions;
  vapid: Vapid;
  appUrl: string;
  log: Logger;
  clock?: () => number;
}

export class PushSender {
  private readonly message: z.ZodType<PushMessage>;
  private readonly clock: () => number;

  constructor(private readonly deps: PushSenderDeps) {
    this.clock = deps.clock ?? Date.now;
    const appOrigin = new URL(deps.appUrl).origin;
    this.message = z.strictObject({
      title: z.string().trim().min(1, 'is required').max(120, 'must be at most 120 characters'),
      body: z.string().trim().max(500, 'must be at most 500 characters'),
      url: z
        .string()
        .max(1000, 'must be at most 1000 characters')
        .refine(
          (u) => (u.startsWith('/') && !u.startsWith('//') ? true : URL.parse(u)?.origin === appOrigin),
          `must be a path of the app or a URL on ${appOrigin}`,
        )
        .transform((u) => new URL(u, appOrigin).href),
      tag: z.string().min(1).max(64, 'must be at most 64 characters').optional(),
    }) as unknown as z.ZodType<PushMessage>;
  }

  /** Send to each of the person's browsers at once; one outcome per subscription (none when they have none). */
  async sendPush(personId: string, message: PushMessage, opts: PushOptions = {}): Promise<PushOutcome[]> {
    const parsed = this.message.safeParse(message);
    if (!parsed.success) throw new PushMessageError(`push message: ${describeIssues(parsed.error)}`);
    const payload = JSON.stringify(parsed.data);
    const subscriptions = await this.deps.subscriptions.list(personId);
    return Promise.all(subscriptions.map((s) => this.deliver(s, payload, parsed.data.tag, opts)));
  }

  private async deliver(s: PushSubscriptionRecord, payload: string, tag: string | undefined, opts: PushOptions): Promise<PushOutcome> {
    const { vapid, log } = this.deps;
    const who = { subscriptionId: s._id, device: s.device };
    const request = webpush.generateRequestDetails({ endpoint: s.endpoint, keys: s.keys }, payload, {
      vapidDetails: { subject: vapid.subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
      TTL: opts.ttlSeconds ?? DEFAULT_TTL_SECONDS,
      urgency: opts.urgency ?? 'normal',
      contentEncoding: 'aes128gcm',
      ...(tag ? { topic: topicOf(tag) } : {}),
    });
    let res: Response;
    try {
      res = await fetch(request.endpoint, {
        method: request.method,
        headers: request.headers as Record<string, string>,
        body: new Uint8Array(request.body),
        // A push service answers; it does not send us elsewhere.
        redirect: 'manual',
        signal: AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (err) {
      // The endpoint is a capability and stays out of the log; its id is enough to find it.
      log.warn({ subscriptionId: s._id, err: (err as Error).name }, 'push service unreachable');
      return { ...who, status: 'failed', retryable: true, reason: 'the push service could not be reached' };
    }
    await res.body?.cancel();
    const statusCode = res.status;
    if (statusCode >= 200 && statusCode < 300) return { ...who, status: 'sent', statusCode };
    if (statusCode === 404 || statusCode === 410) {
      await this.deps.subscriptions.removeGone(s);
      log.info({ subscriptionId: s._id, statusCode }, 'push subscription gone: removed');
      return { ...who, status: 'gone', statusCode };
    }
    const retryable = statusCode === 429 || statusCode >= 500;
    const retryAfter = retryAfterSeconds(res.headers.get('retry-after'), this.clock());
    log.warn({ subscriptionId: s._id, statusCode, retryable }, 'push service refused a message');
    return {
      ...who,
      status: 'failed',
      statusCode,
      retryable,
      ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
      reason: reasonFor(statusCode),
    };
  }
}

function reasonFor(status: number): string {
  if (status === 429) return 'the push service asks us to slow down';
  if (status >= 500) return 'the push service is unavailable for now';
  if (status === 413) return 'the message is too large for the push service';
  if (status === 401 || status === 403) return 'the push service refused our VAPID signature (was the key pair changed?)';
  if (status >= 300 && status < 400) return 'the push service answered with a redirect';
  return `the push service refused the message (${status})`;
}

/** The push channel of one process: the configured (or embedded) VAPID pair and the subscription store. */
export function pushSender(config: Config, db: Db, log: Logger): PushSender {
  return new PushSender({ subscriptions: new PushSubscriptions(db), vapid: resolveVapid(config, log), appUrl: config.appUrl, log });
}
