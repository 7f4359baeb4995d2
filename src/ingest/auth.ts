// Who is calling the pipe: the institution's integration must be active (403), the body must be
// signed by one of its live secrets (401), the send time must be fresh (401), and the institution
// must be within its rate (429). Checked in this order, before the body is parsed. Over NATS the
// record is kept in process memory, which every writer (the `carecircle partner` command included)
// clears on every process before its change returns; on the in-process bus, which that command
// cannot reach, it is read fresh for every request (shared with concurrent ones, see FreshReads).
// Either way a retired secret or a deactivated integration fails on the very next request.
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import type { InstitutionRecord, IssuedSecret, PartnerStore } from '../partner/records.js';
import { timestampProblem, verifySignature, type TimestampProblem } from '../partner/signature.js';
import { perMinute, type Limiter } from '../limits/limiter.js';
import { ApiProblem } from '../http/reply.js';
import { countRateLimited } from '../metrics/index.js';
import { FreshReads } from './fresh.js';

export interface VerifiedPartner {
  institution: InstitutionRecord;
  /** The secret that verified this request (recorded with what the request created). */
  secretId: string;
}

const TIMESTAMP_MESSAGES: Record<TimestampProblem, string> = {
  missing: 'X-Pipe-Timestamp is missing',
  malformed: 'X-Pipe-Timestamp is not an ISO 8601 date-time with seconds and a zone',
  too_old: 'X-Pipe-Timestamp is more than 5 minutes old',
  too_new: 'X-Pipe-Timestamp is more than 5 minutes ahead of our clock',
};

/** Opened secrets by the sealed records they came from: the same record always opens the same way. */
const OPENED_KEPT = 1_000;

export class PartnerAuth {
  private readonly policy;
  private readonly institutions = new FreshReads<InstitutionRecord | null>();
  private readonly opened = new Map<string, IssuedSecret[]>();
  /** The same for a record object served again from memory, without building its key. */
  private readonly openedFor = new WeakMap<InstitutionRecord, IssuedSecret[]>();

  constructor(
    private readonly partners: PartnerStore,
    private readonly limiter: Limiter,
    ratePerMin: number,
    private readonly clock: () => number = Date.now,
    /** Whether every writer of an institution reaches this process (a deployment on NATS). */
    private readonly keep = false,
  ) {
    this.policy = perMinute(ratePerMin);
  }

  async verify(req: HttpRequestEnvelope, raw: Buffer): Promise<VerifiedPartner> {
    const institutionId = req.headers['x-pipe-institution']?.trim();
    if (!institutionId) throw new ApiProblem(401, 'UNAUTHORIZED', 'X-Pipe-Institution is missing', 'Send your institution_id in X-Pipe-Institution.');
    const fresh = () => this.institutions.read(institutionId, () => this.partners.get(institutionId));
    const institution = await (this.keep ? this.partners.kept(institutionId, fresh) : fresh());
    if (!institution || institution.status !== 'active')
      throw new ApiProblem(
        403,
        'FORBIDDEN',
        `Institution ${institutionId.slice(0, 64)} has no active integration`,
        'Do not retry: contact carecircle partner support to activate the integration.',
      );
    const secretId = verifySignature(req.headers['x-pipe-signature'], raw, this.liveSecrets(institution));
    if (!secretId)
      throw new ApiProblem(
        401,
        'UNAUTHORIZED',
        'Signature verification failed',
        'X-Pipe-Signature must be sha256=<lowercase hex HMAC-SHA256 of the exact body bytes> under a live secret of this institution.',
      );
    const problem = timestampProblem(req.headers['x-pipe-timestamp'], this.clock());
    if (problem)
      throw new ApiProblem(
        401,
        'UNAUTHORIZED',
        TIMESTAMP_MESSAGES[problem],
        'Send the current time, e.g. 2026-11-22T10:15:00Z, and keep your clock in sync (NTP).',
      );
    const taken = await this.limiter.take(`ingest:institution:${institution._id}`, this.policy);
    if (!taken.allowed) {
      countRateLimited('ingest');
      throw new ApiProblem(429, 'RATE_LIMITED', 'Too many requests for this institution', `Wait ${taken.retryAfterSec} s (Retry-After) and send again.`, {
        'retry-after': String(taken.retryAfterSec),
      });
    }
    this.partners.recordUse(institution._id, secretId);
    return { institution, secretId };
  }

  /** Decrypting per request costs more than the read; keyed by the whole secret list, a rotation or retirement is a new key. */
  private liveSecrets(institution: InstitutionRecord): IssuedSecret[] {
    const same = this.openedFor.get(institution);
    if (same) return same;
    const key = JSON.stringify([institution._id, institution.secrets]);
    let live = this.opened.get(key);
    if (!live) {
      if (this.opened.size >= OPENED_KEPT) this.opened.clear();
      live = this.partners.liveSecrets(institution);
      this.opened.set(key, live);
    }
    this.openedFor.set(institution, live);
    return live;
  }
}
