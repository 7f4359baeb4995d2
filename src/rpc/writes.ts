// What every write tool goes through on an MCP server: applied once per caller, arguments and ten
// minutes, and, when it asks a question, applied only after the person approved it.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { RPC } from './codes.js';
import { RpcError } from './errors.js';

/** How long the same write from the same caller returns its first result instead of running again. */
export const IDEMPOTENCY_WINDOW_MS = 10 * 60_000;
/** How long a person has to answer a confirmation before the question must be asked again. */
export const CONFIRMATION_TTL_MS = 10 * 60_000;

/** Where a request names its own idempotency key (`params._meta`). */
export const IDEMPOTENCY_KEY_META = 'io.carecircle/idempotency-key';
/** The key of the one input request a confirmation makes (`inputRequests`/`inputResponses`). */
export const CONFIRM_INPUT = 'confirm';

/** How a write's confirmation ended, as its audit row records it. */
export type ConfirmationOutcome =
  'not_needed' | 'asked' | 'confirmed' | 'declined' | 'cancelled' | 'unanswered' | 'refused' | 'waiting_in_app' | 'approved_in_app' | 'declined_in_app';

/**
 * The person's answer to an `elicitation/create` sent to a 2025-era client on the tools/call's event
 * stream, as the gateway holding that stream hands it back: `unanswered` when none came in time.
 */
export interface ElicitAnswer {
  /** The question's id (a token sealed by `RequestStates.sealQuestion`). */
  question: string;
  action: 'accept' | 'decline' | 'cancel' | 'unanswered';
  content?: Record<string, unknown>;
}

/** A question to put on the call's event stream instead of a reply (HttpReplyEnvelope.elicit). */
export interface ElicitQuestion {
  /** Where the answer is routed over the bus: the question token's unguessable id. */
  key: string;
  /** The `elicitation/create` request, its id the sealed question token. */
  request: Record<string, unknown>;
  /** How long the stream waits for the answer before the write is given up. */
  timeoutMs: number;
}

/** Carries a 2025-era client's answer, posted to any process, to the call waiting for it. */
export interface AnswerRoute {
  /** True once the waiting call took it; false when nothing waits under that key (answered, or timed out). */
  deliver(key: string, answer: Omit<ElicitAnswer, 'question'>): Promise<boolean>;
}

/** The same write already stored: its first result, replayed. */
export interface StoredWrite {
  digest: string;
  /** The first reply and the records it changed, as JSON; absent while the first call is still applying it. */
  result?: string;
}

/**
 * Where writes are claimed and their results kept: a claim is an insert on a unique `_id`, the one
 * operation every supported store makes atomic across connections.
 */
export interface IdempotencyStore {
  /** The live record with this id, or null (an expired one counts as none). */
  find(id: string, now: number): Promise<StoredWrite | null>;
  /** Insert `{_id: id, digest}` unless a live record has that id; the live record when one has. */
  claim(id: string, digest: string, now: number): Promise<StoredWrite | null>;
  /** Keep the first result of a claimed write. */
  complete(id: string, result: string): Promise<void>;
  /** Forget a claim whose write failed, so a retry applies it. */
  release(id: string): Promise<void>;
}

/** A change waiting for the person in the app, for clients that cannot ask them. */
export interface PendingChange {
  id: string;
  /** `applied`: approved in the app and made there; `result` is its first reply and targets. */
  status: 'waiting' | 'approved' | 'declined' | 'applying' | 'applied';
  result?: string;
}

export interface PendingChanges {
  /** The change for this caller, tool and arguments, recorded as waiting when there is none. */
  park(change: {
    caller: unknown;
    callerKey: string;
    tool: string;
    digest: string;
    question: string;
    /** The arguments, to apply the change when the person approves it in the app. */
    args: unknown;
    /** The tool's `basis` when asked, checked again on approval. */
    basis?: string;
    now: number;
  }): Promise<PendingChange>;
  /** Mark an approved change as used, so one approval applies one write. */
  used(id: string): Promise<void>;
}

/** What a server needs to run write tools; absent: a server with no write tools. */
export interface WriteMachinery {
  /** Who is calling, as a stable string (person and credential): the scope of idempotency. */
  callerKey(caller: unknown): string;
  idempotency: IdempotencyStore;
  pending: PendingChanges;
  /** Signs and checks `requestState` (2026-07-28 confirmations). */
  states: RequestStates;
  /** Where the person approves a waiting change, in plain words for the tool result. */
  approveAt: string;
  /**
   * Asking a 2025-era client that declared `elicitation` at initialize, on the tools/call's event
   * stream; absent: those clients leave the change waiting in the app like every other.
   */
  elicitation?: { timeoutMs: number; answers: AnswerRoute };
  clock?: () => number;
}

/** Arguments in a canonical form (keys sorted, recursively): the same arguments give the same digest. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** A pending change's id: one per caller and write, so parking the same call again finds it. */
export const pendingIdOf = (callerKey: string, digest: string): string =>
  `chg_${createHash('sha256').update(`${callerKey}\n${digest}`).digest('hex').slice(0, 32)}`;

export const argumentDigest = (tool: string, args: unknown): string =>
  createHash('sha256')
    .update(`${tool}\n${canonical(args)}`)
    .digest('base64url');

/** Named refusals of the write path. Pinned in rpc/codes.test.ts with the rest. */
const refusal = (code: number, error: string, message: string, hint: string) => new RpcError(code, message, { error, hint });

export const idempotencyKeyReused = () =>
  refusal(
    RPC.IDEMPOTENCY_KEY_REUSED,
    'idempotency_key_reused',
    `The ${IDEMPOTENCY_KEY_META} key was already used with other arguments`,
    'Use a new idempotency key for a different write; reuse a key only to retry the same call.',
  );

export const writeInProgress = () =>
  new RpcError(RPC.WRITE_IN_PROGRESS, 'The same write is still being applied', {
    error: 'write_in_progress',
    hint: 'Call again in a moment to get its result; it is applied once.',
    retryAfterSec: 1,
  });

export class RequestStateError extends RpcError {
  constructor(readonly problem: 'invalid' | 'expired' | 'replayed' | 'mismatch') {
    const text = {
      invalid: 'requestState is not one this server issued (altered or unreadable)',
      expired: 'requestState has expired',
      replayed: 'requestState was already used',
      mismatch: 'requestState was issued for another caller, tool or arguments',
    }[problem];
    super(RPC.REQUEST_STATE_REFUSED, `Invalid requestState: ${text}`, {
      error: `request_state_${problem}`,
      hint: 'Call the tool again without requestState or inputResponses to be asked afresh.',
    });
  }
}

const QUESTION_TYP = 'carecircle-elicitation';
const SESSION_TYP = 'carecircle-mcp-session';
/** A client keeps its session id as long as it runs; a week covers any one conversation. */
const SESSION_TTL_SEC = 7 * 86_400;

/** Two strings compared in constant time (their lengths are no secret). */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What a signed requestState binds: who, what, with which arguments, until when, and its one use. */
export interface StateClaims {
  callerKey: string;
  tool: string;
  digest: string;
  jti: string;
}

/**
 * `requestState` as an HMAC-signed JWT (jose, HS256): the client holds it between the two rounds
 * and can neither read our meaning into it nor change it. The key is derived by the caller from a
 * service secret and never leaves the server.
 */
export class RequestStates {
  constructor(
    private readonly key: Uint8Array,
    private readonly ttlMs = CONFIRMATION_TTL_MS,
  ) {
    if (key.byteLength < 32) throw new Error('RequestStates needs a key of at least 32 bytes');
  }

  seal(claims: Omit<StateClaims, 'jti'>, now: number): Promise<string> {
    const iat = Math.floor(now / 1000);
    return new SignJWT({ c: claims.callerKey, t: claims.tool, d: claims.digest })
      .setProtectedHeader({ alg: 'HS256', typ: 'carecircle-request-state' })
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.ceil(this.ttlMs / 1000))
      .sign(this.key);
  }

  /**
   * The id of an `elicitation/create` put to a 2025-era client: bound like a requestState, but of its
   * own type, so neither can stand in for the other, and good until the wait for it is over.
   */
  sealQuestion(claims: Omit<StateClaims, 'jti'>, now: number, waitMs: number): Promise<{ token: string; jti: string }> {
    const iat = Math.floor(now / 1000);
    const jti = randomUUID();
    return (
      new SignJWT({ c: claims.callerKey, t: claims.tool, d: claims.digest })
        .setProtectedHeader({ alg: 'HS256', typ: QUESTION_TYP })
        .setJti(jti)
        .setIssuedAt(iat)
        // A minute past the wait: the gateway's own "no answer" arrives after it and must still open.
        .setExpirationTime(iat + Math.ceil(waitMs / 1000) + 60)
        .sign(this.key)
        .then((token) => ({ token, jti }))
    );
  }

  /** A question's claims, opened by the caller answering it: undefined when not ours, expired or another caller's. */
  async openQuestion(token: string, callerKey: string, now: number): Promise<StateClaims | undefined> {
    const payload = await this.verify(token, QUESTION_TYP, now).catch(() => undefined);
    if (!payload || typeof payload.jti !== 'string' || typeof payload.t !== 'string' || typeof payload.d !== 'string') return undefined;
    if (typeof payload.c !== 'string' || !sameText(payload.c, callerKey)) return undefined;
    return { callerKey, tool: payload.t, digest: payload.d, jti: payload.jti };
  }

  /**
   * A 2025-era `Mcp-Session-Id` saying what the client declared at initialize (this server keeps no
   * session): signed, bound to the caller, carried by the client on every later request.
   */
  sealSession(callerKey: string, capabilities: { elicitation: boolean }, now: number): Promise<string> {
    const iat = Math.floor(now / 1000);
    return new SignJWT({ c: callerKey, e: capabilities.elicitation })
      .setProtectedHeader({ alg: 'HS256', typ: SESSION_TYP })
      .setIssuedAt(iat)
      .setExpirationTime(iat + SESSION_TTL_SEC)
      .sign(this.key);
  }

  /** What a session id says the client declared; nothing for an id not ours, expired or another caller's. */
  async openSession(token: string, callerKey: string, now: number): Promise<{ elicitation: boolean }> {
    const payload = await this.verify(token, SESSION_TYP, now).catch(() => undefined);
    if (!payload || typeof payload.c !== 'string' || !sameText(payload.c, callerKey)) return { elicitation: false };
    return { elicitation: payload.e === true };
  }

  private async verify(token: string, typ: string, now: number) {
    return (await jwtVerify(token, this.key, { algorithms: ['HS256'], typ, currentDate: new Date(now), clockTolerance: 0 })).payload;
  }

  /** The state's claims once its signature, expiry and binding check out; a RequestStateError otherwise. */
  async open(state: string, expected: Omit<StateClaims, 'jti'>, now: number): Promise<StateClaims> {
    let payload;
    try {
      ({ payload } = await jwtVerify(state, this.key, {
        algorithms: ['HS256'],
        typ: 'carecircle-request-state',
        currentDate: new Date(now),
        clockTolerance: 0,
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new RequestStateError('expired');
      throw new RequestStateError('invalid');
    }
    if (typeof payload.jti !== 'string') throw new RequestStateError('invalid');
    if (payload.c !== expected.callerKey || payload.t !== expected.tool || payload.d !== expected.digest) throw new RequestStateError('mismatch');
    return { ...expected, jti: payload.jti };
  }
}
