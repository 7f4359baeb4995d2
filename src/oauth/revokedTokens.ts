// JWT access tokens revoked before they expire. A JWT is checked by its signature, not looked up,
// so its revocation is a separate record: one point read by token id on every verified request.
// The interface is all the resource server sees, so the records can move to a key-value store
// with expiry (NATS KV, Redis) without touching it.
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import { oauthCollection } from './store.js';

export interface RevokedAccessTokens {
  /** Remember `jti` as revoked until `expiresAt` (the token's own expiry); idempotent. */
  revoke(jti: string, expiresAt: Date): Promise<void>;
  isRevoked(jti: string): Promise<boolean>;
}

/** Swept with the other expiring OAuth records (`RevokedAccessToken` in the store's sweep). */
export const OAUTH_REVOKED_ACCESS_TOKENS = oauthCollection('RevokedAccessToken');
export const REVOKED_ACCESS_TOKEN_INDEXES: IndexDescription[] = [{ key: { expiresAt: 1 }, name: 'by_expiry' }];

interface RevokedRecord {
  /** The token's `jti`: an id, not a bearer secret (the signed token is). */
  _id: string;
  expiresAt: Date;
}

export class StoredRevokedAccessTokens implements RevokedAccessTokens {
  private readonly records: Collection<RevokedRecord>;

  constructor(
    db: Db,
    private readonly credentials: Credentials,
  ) {
    this.records = db.collection<RevokedRecord>(OAUTH_REVOKED_ACCESS_TOKENS);
  }

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.records.updateOne({ _id: jti }, { $set: { expiresAt } }, { upsert: true });
    // Every process forgets the token's state before /oauth/revoke answers.
    await this.credentials.revoked('jti', [jti]);
  }

  async isRevoked(jti: string): Promise<boolean> {
    // Kept until the sweep after expiry; an expired token is refused by its `exp` anyway.
    return (await this.records.findOne({ _id: jti }, { projection: { _id: 1 } })) !== null;
  }
}
