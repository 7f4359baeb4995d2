// The authorization server's keys in MongoDB: one ES256 access-token signing key per rotation
// period, and the keys that sign its cookies. Private parts are sealed with the data key.
import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { SecretBox, Sealed } from '../partner/secretBox.js';
import { isDuplicateKey } from '../store/errors.js';

export const OAUTH_KEYS = 'oauth_keys';
export const OAUTH_KEY_INDEXES: IndexDescription[] = [{ key: { period: 1 }, name: 'by_period' }];
export const SIGNING_ALG = 'ES256';

interface SigningKeyDoc {
  _id: string; // `sig:<period>`
  kind: 'signing';
  period: number;
  kid: string;
  publicJwk: JWK;
  sealed: Sealed;
  createdAt: Date;
}

interface CookieKeysDoc {
  _id: 'cookies';
  kind: 'cookies';
  sealed: Sealed;
  createdAt: Date;
}

type KeyDoc = SigningKeyDoc | CookieKeysDoc;

export interface SigningKeys {
  /** The rotation period these keys were chosen for. */
  period: number;
  /** Key id of the key that signs now. */
  kid: string;
  /** Private JWKs to give the provider: the signing key first, then the next and the previous (published only). */
  keys: JWK[];
}

const signingId = (period: number) => `sig:${period}`;

/**
 * Period n = floor(now / rotation). Key n signs during period n; key n+1 is already published
 * (caches see it before it signs) and key n-1 stays published through period n, which is at least
 * the access-token lifetime, so every unexpired token still verifies. Each key's id is its
 * `sig:<period>` document, inserted once by whichever process needs it first.
 */
export class OAuthKeys {
  private readonly keys: Collection<KeyDoc>;

  constructor(
    db: Db,
    readonly rotationMs: number,
    private readonly box?: SecretBox,
    readonly clock: () => number = Date.now,
  ) {
    this.keys = db.collection<KeyDoc>(OAUTH_KEYS);
  }

  period(now = this.clock()): number {
    return Math.floor(now / this.rotationMs);
  }

  private sealer(): SecretBox {
    if (!this.box) throw new Error('OAuthKeys needs the data key to create or open private keys');
    return this.box;
  }

  private async signingDoc(period: number, create: boolean): Promise<SigningKeyDoc | null> {
    const found = (await this.keys.findOne({ _id: signingId(period) })) as SigningKeyDoc | null;
    if (found || !create) return found;
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const doc: SigningKeyDoc = {
      _id: signingId(period),
      kind: 'signing',
      period,
      kid,
      publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
      sealed: this.sealer().seal(JSON.stringify(await exportJWK(privateKey)), `oauth-key:${signingId(period)}`),
      createdAt: new Date(this.clock()),
    };
    try {
      await this.keys.insertOne(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await this.keys.findOne({ _id: signingId(period) })) as SigningKeyDoc | null;
    }
  }

  private open(doc: SigningKeyDoc): JWK {
    const privateJwk = JSON.parse(this.sealer().open(doc.sealed, `oauth-key:${doc._id}`)) as JWK;
    return { ...privateJwk, kid: doc.kid, alg: SIGNING_ALG, use: 'sig' };
  }

  /** The keys for the provider now, creating this period's and the next one's if missing. */
  async signingKeys(): Promise<SigningKeys> {
    const period = this.period();
    const [current, next, previous] = await Promise.all([this.signingDoc(period, true), this.signingDoc(period + 1, true), this.signingDoc(period - 1, false)]);
    if (!current || !next) throw new Error(`OAuth signing key for period ${period} could not be stored`);
    return { period, kid: current.kid, keys: [current, next, ...(previous ? [previous] : [])].map((d) => this.open(d)) };
  }

  /** Public keys a resource server accepts now (previous, current and next period), never private parts. */
  async publicKeys(): Promise<JWK[]> {
    const period = this.period();
    const docs = await this.keys.find({ _id: { $in: [period - 1, period, period + 1].map(signingId) } }, { projection: { publicJwk: 1 } }).toArray();
    return docs.map((d) => (d as SigningKeyDoc).publicJwk);
  }

  /** Keys that sign the authorization server's cookies, shared by every gateway process. */
  async cookieKeys(): Promise<string[]> {
    const aad = 'oauth-key:cookies';
    const found = (await this.keys.findOne({ _id: 'cookies' })) as CookieKeysDoc | null;
    if (found) return JSON.parse(this.sealer().open(found.sealed, aad)) as string[];
    const keys = [randomBytes(32).toString('base64url')];
    try {
      await this.keys.insertOne({ _id: 'cookies', kind: 'cookies', sealed: this.sealer().seal(JSON.stringify(keys), aad), createdAt: new Date(this.clock()) });
      return keys;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return this.cookieKeys();
    }
  }

  /** Delete signing keys older than the previous period: no unexpired token can name them. */
  async sweep(): Promise<number> {
    return (await this.keys.deleteMany({ kind: 'signing', period: { $lt: this.period() - 1 } })).deletedCount;
  }
}
