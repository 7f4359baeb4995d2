// One-click unsubscribe links (RFC 8058): a signed token naming the member, the loved one and the
// kind of alert, good once. Signing and checking are jose's (HS256 JWS, compared in constant time);
// the single use is an insert of the token's id, so two clicks at once cannot both count.
import { createHmac, createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Config } from '../config.js';
import { isDuplicateKey } from '../store/errors.js';
import { isAlertKind, type AlertKind } from './kinds.js';

export const UNSUBSCRIBE_USES = 'alert_unsubscribe_uses';
export const LINK_INDEXES: Record<string, IndexDescription[]> = { [UNSUBSCRIBE_USES]: [{ key: { usedAt: 1 }, name: 'by_time' }] };

/** Used only when neither ALERTS_SECRET nor NEWSLETTER_SECRET is set (production refuses the latter empty). */
const DEVELOPMENT_KEY = 'carecircle-development-newsletter-key';
const AUDIENCE = 'carecircle-alert-unsubscribe';
/** A link in an old mail still works for a year: people unsubscribe from mail they kept. */
const LINK_LIFETIME = '365d';

/** What a link turns off: one kind of alert, or a whole digest (every kind it carries). */
export type UnsubscribeTarget = AlertKind | 'daily' | 'weekly';
const isTarget = (s: string): s is UnsubscribeTarget => isAlertKind(s) || s === 'daily' || s === 'weekly';

export interface UnsubscribeClaim {
  uid: string;
  lovedOneId: string;
  kind: UnsubscribeTarget;
}

/** Why a link is refused, in words a person reads on the page. */
export class LinkRefused extends Error {
  constructor(
    readonly code: 'LINK_INVALID' | 'LINK_USED' | 'LINK_EXPIRED',
    message: string,
  ) {
    super(message);
    this.name = 'LinkRefused';
  }
}

/** The HMAC key as a KeyObject, whose imported form jose keeps: given raw bytes, it would import them
 *  again for every link (a digest pass signs one per digest). */
function keyOf(config: Pick<Config, 'alertsSecret' | 'newsletterSecret'>): KeyObject {
  const secret =
    config.alertsSecret ||
    createHmac('sha256', config.newsletterSecret || DEVELOPMENT_KEY)
      .update('carecircle-alerts-unsubscribe')
      .digest('base64url');
  return createSecretKey(new TextEncoder().encode(secret));
}

export class UnsubscribeLinks {
  private readonly uses: Collection<{ _id: string; uid: string; usedAt: Date }>;
  private readonly key: KeyObject;

  constructor(
    db: Db,
    private readonly config: Pick<Config, 'alertsSecret' | 'newsletterSecret' | 'appUrl'>,
    private readonly clock: () => number = Date.now,
  ) {
    this.uses = db.collection(UNSUBSCRIBE_USES);
    this.key = keyOf(config);
  }

  /** The link's URL on the app host (the configured public URL, never a request's Host). */
  async url(claim: UnsubscribeClaim): Promise<string> {
    const token = await new SignJWT({ lo: claim.lovedOneId, k: claim.kind })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claim.uid)
      .setAudience(AUDIENCE)
      .setJti(randomUUID())
      .setIssuedAt(Math.floor(this.clock() / 1000))
      .setExpirationTime(Math.floor(this.clock() / 1000) + 365 * 86_400)
      .sign(this.key);
    return `${this.config.appUrl}/alerts/unsubscribe/${token}`;
  }

  /** What a link says, without using it (the confirmation page); LinkRefused when forged or expired. */
  async read(token: string): Promise<UnsubscribeClaim & { jti: string }> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], audience: AUDIENCE, currentDate: new Date(this.clock()) });
      const kind = typeof payload.k === 'string' ? payload.k : '';
      if (!payload.sub || typeof payload.lo !== 'string' || !isTarget(kind) || !payload.jti)
        throw new LinkRefused('LINK_INVALID', 'This link is not one carecircle sent.');
      return { uid: payload.sub, lovedOneId: payload.lo, kind, jti: payload.jti };
    } catch (err) {
      if (err instanceof LinkRefused) throw err;
      if (err instanceof errors.JWTExpired)
        throw new LinkRefused('LINK_EXPIRED', `This link has expired (links work for ${LINK_LIFETIME.replace('d', ' days')}); change alerts in Settings.`);
      throw new LinkRefused('LINK_INVALID', 'This link is not one carecircle sent: it may have been changed or cut short.');
    }
  }

  /** Use a link once: its claim, or LinkRefused (forged, expired, or used before). */
  async use(token: string): Promise<UnsubscribeClaim> {
    const claim = await this.read(token);
    try {
      await this.uses.insertOne({ _id: claim.jti, uid: claim.uid, usedAt: new Date(this.clock()) });
    } catch (err) {
      if (isDuplicateKey(err)) throw new LinkRefused('LINK_USED', 'This link was already used. Change alerts in Settings.');
      throw err;
    }
    return { uid: claim.uid, lovedOneId: claim.lovedOneId, kind: claim.kind };
  }
}
