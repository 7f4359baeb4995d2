// The partner client (`carecircle/partner`): signs and sends events and agency calls to
// {pipe_url}, retrying by the published rule and saying which rule stopped it.
//
// Retry rule: 2xx is done. 429 waits for Retry-After and sends again. Any other 4xx is terminal
// (fix the request, send anew). 5xx and network errors are retried after 1, 2, 4, 8, 16, 32 s,
// then every 32 s, and given up once about 5 minutes have passed since the first attempt.
import { randomUUID } from 'node:crypto';
import { signBody } from './signature.js';

export { signBody };

export const RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000];
export const GIVE_UP_AFTER_MS = 5 * 60 * 1000;
const ATTEMPT_TIMEOUT_MS = 30_000;

/** Why the client stopped sending. */
export type StopRule = 'accepted' | 'terminal_4xx' | 'gave_up_5xx' | 'gave_up_network' | 'gave_up_rate_limited';

export interface SendResult {
  ok: boolean;
  rule: StopRule;
  /** One sentence for a person: what happened and what to do. */
  reason: string;
  attempts: number;
  status?: number;
  body?: unknown;
  /** For events: the id the service gave it (the first one, for a duplicate). */
  eventId?: string;
  duplicate?: boolean;
}

export interface AttemptInfo {
  attempt: number;
  status?: number;
  error?: string;
  /** How long the client waits before the next attempt (absent when it stops). */
  nextDelayMs?: number;
}

export interface PartnerClientOptions {
  /** The ingest's base URL, {pipe_url}, e.g. https://pipe.carecircle.example */
  baseUrl: string;
  institutionId: string;
  /** The signing secret issued at onboarding (the HMAC key is its UTF-8 bytes). */
  secret: string;
  /** Seams for tests and embedding. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  retryDelaysMs?: readonly number[];
  giveUpAfterMs?: number;
  onAttempt?: (info: AttemptInfo) => void;
}

/** An event as a partner builds it; `institution_id` is filled in by the client. */
export interface PartnerEvent {
  subject_ref: string;
  event_type: string;
  occurred_at: string;
  payload: Record<string, unknown>;
  source_event_id?: string;
  institution_id?: string;
}

/** Seconds or an HTTP date; at least one second. */
function retryAfterMs(header: string | null, now: number): number {
  if (!header) return 1_000;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(1, secs) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? 1_000 : Math.max(1_000, at - now);
}

function describe(body: unknown): string {
  if (body && typeof body === 'object' && 'code' in body && 'message' in body)
    return `${String((body as { code: unknown }).code)}: ${String((body as { message: unknown }).message)}`;
  return 'no error body';
}

export class PartnerClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly delays: readonly number[];
  private readonly giveUpAfterMs: number;

  constructor(private readonly opts: PartnerClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = opts.now ?? Date.now;
    this.delays = opts.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.giveUpAfterMs = opts.giveUpAfterMs ?? GIVE_UP_AFTER_MS;
  }

  /** POST /pipe/v1/events. The body is the same on every attempt, so a retry is de-duplicated. */
  async sendEvent(event: PartnerEvent, options: { idempotencyKey?: string } = {}): Promise<SendResult> {
    const body = JSON.stringify({ ...event, institution_id: event.institution_id ?? this.opts.institutionId });
    const result = await this.send('POST', '/pipe/v1/events', () => body, options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {});
    const b = result.body as { event_id?: unknown; duplicate?: unknown } | undefined;
    return result.ok && typeof b?.event_id === 'string' ? { ...result, eventId: b.event_id, duplicate: b.duplicate === true } : result;
  }

  /** PUT family-share on or off. Turning it on returns the family's link code once, in `body.link_code`. */
  setFamilyShare(subjectRef: string, enabled: boolean): Promise<SendResult> {
    // Agency calls are single-use: each attempt signs a fresh body with the current time.
    return this.send('PUT', `/pipe/v1/clients/${encodeURIComponent(subjectRef)}/family-share`, () =>
      JSON.stringify({ enabled, subject_ref: subjectRef, requested_at: new Date(this.now()).toISOString() }),
    );
  }

  /** DELETE every event stored for the client. */
  purgeEvents(subjectRef: string): Promise<SendResult> {
    return this.send('DELETE', `/pipe/v1/clients/${encodeURIComponent(subjectRef)}/events`, () =>
      JSON.stringify({ subject_ref: subjectRef, requested_at: new Date(this.now()).toISOString() }),
    );
  }

  private async send(method: string, path: string, bodyOf: () => string, extra: Record<string, string> = {}): Promise<SendResult> {
    const started = this.now();
    let attempt = 0;
    let serverRetries = 0;
    for (;;) {
      attempt++;
      const body = bodyOf();
      let status: number | undefined;
      let parsed: unknown;
      let retryAfter: string | null = null;
      let error: string | undefined;
      try {
        const res = await this.fetchImpl(`${this.base}${path}`, {
          method,
          headers: {
            'content-type': 'application/json',
            'x-pipe-institution': this.opts.institutionId,
            'x-pipe-timestamp': new Date(this.now()).toISOString(),
            'x-pipe-signature': signBody(this.opts.secret, body),
            'x-request-id': randomUUID(),
            ...extra,
          },
          body,
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        });
        status = res.status;
        retryAfter = res.headers.get('retry-after');
        const text = await res.text();
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = text;
        }
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }

      const elapsed = () => this.now() - started;
      if (status !== undefined && status < 300) {
        this.opts.onAttempt?.({ attempt, status });
        return { ok: true, rule: 'accepted', reason: `accepted with ${status}`, attempts: attempt, status, body: parsed };
      }
      if (status === 429) {
        const wait = retryAfterMs(retryAfter, this.now());
        if (elapsed() + wait > this.giveUpAfterMs) {
          this.opts.onAttempt?.({ attempt, status });
          return {
            ok: false,
            rule: 'gave_up_rate_limited',
            reason: `still rate limited (429) after about ${Math.round(elapsed() / 1000)} s; queue the event and send it later`,
            attempts: attempt,
            status,
            body: parsed,
          };
        }
        this.opts.onAttempt?.({ attempt, status, nextDelayMs: wait });
        await this.sleep(wait);
        continue;
      }
      if (status !== undefined && status < 500) {
        this.opts.onAttempt?.({ attempt, status });
        return {
          ok: false,
          rule: 'terminal_4xx',
          reason: `${status} is terminal (${describe(parsed)}); fix the request and send it anew, do not retry it as it is`,
          attempts: attempt,
          status,
          body: parsed,
        };
      }
      // 5xx or no answer: exponential backoff, capped at the last delay, within about five minutes.
      const delay = this.delays[Math.min(serverRetries, this.delays.length - 1)] ?? 1_000;
      serverRetries++;
      if (elapsed() + delay > this.giveUpAfterMs) {
        this.opts.onAttempt?.({ attempt, ...(status !== undefined ? { status } : {}), ...(error ? { error } : {}) });
        const what = status !== undefined ? `the last answer was ${status}` : `the last attempt failed: ${error}`;
        return {
          ok: false,
          rule: status !== undefined ? 'gave_up_5xx' : 'gave_up_network',
          reason: `gave up after ${attempt} attempts in about ${Math.round(elapsed() / 1000)} s; ${what}`,
          attempts: attempt,
          ...(status !== undefined ? { status, body: parsed } : {}),
        };
      }
      this.opts.onAttempt?.({ attempt, ...(status !== undefined ? { status } : {}), ...(error ? { error } : {}), nextDelayMs: delay });
      await this.sleep(delay);
    }
  }
}
