// The authorization server's storage on MongoDB and FerretDB v1: the oidc-provider adapter, the
// consumption markers that make codes and refresh tokens single-use, grants for Settings →
// Connected apps, and the sweep that expires what FerretDB cannot expire by itself (no TTL).
import { createHash } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';
import type { Credentials } from '../auth/credentials.js';
import { isDuplicateKey } from '../store/errors.js';
import { OAUTH_KEY_INDEXES, OAUTH_KEYS } from './keys.js';

/** `AuthorizationCode` → `oauth_authorization_code`. */
export const oauthCollection = (model: string): string => `oauth_${model.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()}`;

export const OAUTH_CONSUMED = 'oauth_consumed';
export const OAUTH_GRANT_USAGE = 'oauth_grant_usage';
const GRANTS = oauthCollection('Grant');
const CLIENTS = oauthCollection('Client');
/** ClientDocument: the last accepted copy of each Client ID Metadata Document, for Connected apps (the provider fetches anew). */
const CLIENT_MODELS = ['Client', 'ClientDocument'] as const;

/** Models whose id is not a bearer secret. Every other id (codes, tokens, the session and
 * interaction cookies) is stored as its SHA-256 and cut out of the stored payload (`sealPayload`),
 * so a copy of the database replays nothing. */
const PLAIN_ID_MODELS = new Set(['Client', 'Grant']);
/** Models the provider stores under a bearer id; records written before payloads were sealed are sealed by the sweep. */
const BEARER_MODELS = ['Session', 'Interaction', 'AuthorizationCode', 'RefreshToken', 'AccessToken'] as const;
/** Models whose tokens hang off a grant and die with it. */
const GRANT_BOUND_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken'] as const;
/** Models the provider consumes (single use): their `find` also looks for a consumption marker. */
const CONSUMABLE_MODELS = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PushedAuthorizationRequest']);
/** Models that expire; the sweep deletes them once `expiresAt` has passed. */
const EXPIRING_MODELS = [
  'Session',
  'Interaction',
  'AuthorizationCode',
  'RefreshToken',
  'AccessToken',
  'Grant',
  'ReplayDetection',
  'RevokedAccessToken',
] as const;

const byExpiry: IndexDescription = { key: { expiresAt: 1 }, name: 'by_expiry' };
const byGrant: IndexDescription = { key: { grantId: 1 }, name: 'by_grant' };

export const OAUTH_INDEXES: Record<string, IndexDescription[]> = {
  [oauthCollection('Session')]: [byExpiry, { key: { uid: 1 }, name: 'by_uid' }],
  [oauthCollection('Interaction')]: [byExpiry],
  [oauthCollection('AuthorizationCode')]: [byExpiry, byGrant],
  [oauthCollection('RefreshToken')]: [byExpiry, byGrant],
  [oauthCollection('AccessToken')]: [byExpiry, byGrant],
  [oauthCollection('ReplayDetection')]: [byExpiry],
  [GRANTS]: [byExpiry, { key: { accountId: 1 }, name: 'by_account' }, { key: { clientId: 1 }, name: 'by_client' }],
  [CLIENTS]: [{ key: { createdAt: 1 }, name: 'by_created' }],
  [oauthCollection('ClientDocument')]: [{ key: { createdAt: 1 }, name: 'by_created' }],
  [OAUTH_CONSUMED]: [byExpiry],
  [OAUTH_KEYS]: OAUTH_KEY_INDEXES,
};

interface StoredDoc {
  _id: string;
  /** The provider's payload as JSON: grants key scopes by resource URL, and FerretDB v1 refuses dots in field names. */
  payload: string;
  createdAt: Date;
  expiresAt?: Date;
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  clientId?: string;
}

/** `at` is in seconds since the epoch, as the provider's `consumed` field. */
interface ConsumedMarker {
  _id: string;
  at: number;
  expiresAt: Date;
}
interface GrantUsage {
  _id: string;
  lastUsedAt: Date;
}

/** One grant as Settings → Connected apps shows it. */
export interface ConnectedApp {
  grantId: string;
  clientId: string;
  clientName: string;
  clientUri?: string;
  /** Hosts the app's redirect URIs point at, so a caregiver can tell two apps of one name apart. */
  redirectHosts: string[];
  /** Granted scopes, space-separated as in the grant (for every resource). */
  scope: string;
  createdAt: Date;
  expiresAt?: Date;
  lastUsedAt?: Date;
}

/** The name an app registered, or "Unnamed app". */
const clientNameOf = (client: AdapterPayload | undefined): string =>
  typeof client?.client_name === 'string' && client.client_name.trim() ? client.client_name.trim() : 'Unnamed app';
const sha256 = (value: string): string => createHash('sha256').update(value).digest('base64url');
const epochSeconds = (ms: number): number => Math.floor(ms / 1000);
const DAY_MS = 24 * 60 * 60 * 1000;

/** Stands for a record's own id inside its stored payload. JSON.stringify escapes every control
 *  character, so this one never occurs in its output otherwise, and putting the id back is exact. */
const OWN_ID = '\u0001';

/**
 * The provider's payload as stored. When the id is a bearer secret, every copy of it the provider
 * put in the payload (its `jti`; an interaction's resume URL) is replaced by OWN_ID, for `find` to
 * put back from the id it is asked for. An interaction also copies its session's cookie id, which
 * the provider never reads back: that is dropped.
 */
function sealPayload(model: string, id: string, payload: AdapterPayload): string {
  if (PLAIN_ID_MODELS.has(model)) return JSON.stringify(payload);
  const { jti: _own, ...rest } = payload;
  if (model === 'Interaction' && rest.session) {
    const { cookie: _cookie, ...session } = rest.session as Record<string, unknown>;
    rest.session = session as AdapterPayload['session'];
  }
  return JSON.stringify(rest).replaceAll(id, OWN_ID);
}

/** The payload the provider stored under `id`; without an id (a lookup by uid) the copies stay out. */
function openPayload(model: string, stored: string, id?: string): AdapterPayload {
  if (PLAIN_ID_MODELS.has(model)) return JSON.parse(stored) as AdapterPayload;
  const payload = JSON.parse(stored.replaceAll(OWN_ID, id ?? '')) as AdapterPayload;
  return id === undefined ? payload : { ...payload, jti: id };
}

export class OAuthStore {
  private readonly consumed: Collection<ConsumedMarker>;
  private readonly usage: Collection<GrantUsage>;
  /** Last time this process wrote a grant's lastUsedAt, so a busy client costs one write a minute. */
  private readonly touched = new Map<string, number>();

  constructor(
    readonly db: Db,
    readonly credentials: Credentials,
    readonly clock: () => number = Date.now,
  ) {
    this.consumed = db.collection<ConsumedMarker>(OAUTH_CONSUMED);
    this.usage = db.collection<GrantUsage>(OAUTH_GRANT_USAGE);
  }

  docs(model: string): Collection<StoredDoc> {
    return this.db.collection<StoredDoc>(oauthCollection(model));
  }

  /**
   * The adapter factory oidc-provider is configured with: one adapter per model name. `reuse` makes
   * the provider's invalid_grant error (passed in, so workers never load oidc-provider).
   */
  adapterFactory(reuse: (message: string) => Error): AdapterFactory {
    return (model: string) => new MongoAdapter(this, model, reuse);
  }

  markConsumed(model: string, storedId: string, expiresAt: Date | undefined): Promise<unknown> {
    const now = this.clock();
    return this.consumed.insertOne({ _id: `${model}:${storedId}`, at: epochSeconds(now), expiresAt: expiresAt ?? new Date(now + DAY_MS) });
  }

  consumedAt(model: string, storedId: string): Promise<ConsumedMarker | null> {
    return this.consumed.findOne({ _id: `${model}:${storedId}` });
  }

  /** Keep the last accepted copy of a client's metadata document, for the name Connected apps shows. */
  rememberClientDocument(url: string, doc: object): Promise<unknown> {
    return this.docs('ClientDocument').updateOne(
      { _id: url },
      { $set: { payload: JSON.stringify(doc) }, $setOnInsert: { createdAt: new Date(this.clock()) } },
      { upsert: true },
    );
  }

  /** Delete a grant and every code and token issued under it; every process forgets it before this returns. */
  async revokeGrant(grantId: string): Promise<void> {
    await Promise.all([
      ...GRANT_BOUND_MODELS.map((m) => this.docs(m).deleteMany({ grantId })),
      this.docs('Grant').deleteOne({ _id: grantId }),
      this.usage.deleteOne({ _id: grantId }),
    ]);
    this.touched.delete(grantId);
    await this.credentials.revoked('grant', [grantId]);
  }

  /** Revoke a grant on behalf of the person it belongs to; false when it is not theirs or gone. */
  async revokeGrantOf(accountId: string, grantId: string): Promise<boolean> {
    const grant = await this.docs('Grant').findOne({ _id: grantId }, { projection: { accountId: 1 } });
    if (!grant || grant.accountId !== accountId) return false;
    await this.revokeGrant(grantId);
    return true;
  }

  /** The grant behind an access token, if it still stands (not revoked, not expired). */
  async liveGrant(grantId: string): Promise<{ accountId: string; clientId: string; expiresAt?: Date } | null> {
    const grant = await this.docs('Grant').findOne({ _id: grantId }, { projection: { accountId: 1, clientId: 1, expiresAt: 1 } });
    if (!grant?.accountId || !grant.clientId) return null;
    if (grant.expiresAt && grant.expiresAt.getTime() <= this.clock()) return null;
    return { accountId: grant.accountId, clientId: grant.clientId, ...(grant.expiresAt ? { expiresAt: grant.expiresAt } : {}) };
  }

  /** Record that a grant's access token was used (at most once a minute per process). */
  touchGrant(grantId: string): void {
    const now = this.clock();
    if ((this.touched.get(grantId) ?? 0) > now - 60_000) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(grantId, now);
    void this.usage.updateOne({ _id: grantId }, { $max: { lastUsedAt: new Date(now) } }, { upsert: true }).catch(() => undefined);
  }

  /** Registered clients by id (either kind of registration); an id no longer stored is absent. */
  private async clients(clientIds: readonly string[]): Promise<Map<string, AdapterPayload>> {
    if (!clientIds.length) return new Map();
    const found = await Promise.all(
      CLIENT_MODELS.map((m) =>
        this.docs(m)
          .find({ _id: { $in: [...clientIds] } })
          .toArray(),
      ),
    );
    return new Map(found.flat().map((c) => [c._id, JSON.parse(c.payload) as AdapterPayload]));
  }

  /** The names apps gave themselves, by client id, for the ids still registered (Settings' activity). */
  async clientNames(clientIds: readonly string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    for (const [id, client] of await this.clients([...new Set(clientIds)])) names.set(id, clientNameOf(client));
    return names;
  }

  /** The live grants of one person, newest first, with their apps' names and last use. */
  async connectedApps(accountId: string): Promise<ConnectedApp[]> {
    const now = this.clock();
    const grants = (await this.docs('Grant').find({ accountId }).toArray()).filter((g) => !g.expiresAt || g.expiresAt.getTime() > now);
    if (!grants.length) return [];
    const clientIds = [...new Set(grants.map((g) => g.clientId).filter((c): c is string => !!c))];
    const [clientById, usage] = await Promise.all([this.clients(clientIds), this.usage.find({ _id: { $in: grants.map((g) => g._id) } }).toArray()]);
    const usedAt = new Map(usage.map((u) => [u._id, u.lastUsedAt]));
    return grants
      .map((g): ConnectedApp => {
        const payload = JSON.parse(g.payload) as { resources?: Record<string, string> };
        const client = clientById.get(g.clientId ?? '');
        const scope = [
          ...new Set(
            Object.values(payload.resources ?? {})
              .flatMap((s) => s.split(' '))
              .filter(Boolean),
          ),
        ].join(' ');
        const redirectHosts = [...new Set((client?.redirect_uris ?? []).map((u) => URL.parse(u)?.host || u))];
        const lastUsedAt = usedAt.get(g._id);
        return {
          grantId: g._id,
          clientId: g.clientId ?? '',
          clientName: clientNameOf(client),
          ...(typeof client?.client_uri === 'string' ? { clientUri: client.client_uri } : {}),
          redirectHosts,
          scope,
          createdAt: g.createdAt,
          ...(g.expiresAt ? { expiresAt: g.expiresAt } : {}),
          ...(lastUsedAt ? { lastUsedAt } : {}),
        };
      })
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  }

  /** The sweep (cron role): what has expired, consumption markers past their token's life, and
   *  registered clients that never got a grant within `clientUnusedMs` of registering. */
  async sweep(clientUnusedMs: number): Promise<Record<string, number>> {
    const now = new Date(this.clock());
    let expired = 0;
    for (const model of EXPIRING_MODELS) expired += (await this.docs(model).deleteMany({ expiresAt: { $lt: now } })).deletedCount;
    const markers = (await this.consumed.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
    let clients = 0;
    for (const model of CLIENT_MODELS) {
      const stale = await this.docs(model)
        .find({ createdAt: { $lt: new Date(now.getTime() - clientUnusedMs) } }, { projection: { _id: 1 } })
        .limit(1000)
        .toArray();
      for (const { _id } of stale) {
        if (await this.docs('Grant').findOne({ clientId: _id }, { projection: { _id: 1 } })) continue;
        clients += (await this.docs(model).deleteOne({ _id })).deletedCount;
      }
    }
    const usageIds = (
      await this.usage
        .find({}, { projection: { _id: 1 } })
        .limit(1000)
        .toArray()
    ).map((u) => u._id);
    const liveGrants = new Set(
      (
        await this.docs('Grant')
          .find({ _id: { $in: usageIds } }, { projection: { _id: 1 } })
          .toArray()
      ).map((g) => g._id),
    );
    const orphans = usageIds.filter((id) => !liveGrants.has(id));
    const usage = orphans.length ? (await this.usage.deleteMany({ _id: { $in: orphans } })).deletedCount : 0;
    return { expired, markers, clients, usage, sealed: await this.sealOlderRecords() };
  }

  /** Records written before payloads were sealed hold their id in the clear: seal them. The
   *  `_id` must be the hash of the id found, so nothing else is ever rewritten. */
  private async sealOlderRecords(): Promise<number> {
    let sealed = 0;
    for (const model of BEARER_MODELS) {
      const older = await this.docs(model)
        .find({ payload: { $regex: '"jti":' } }, { projection: { payload: 1 } })
        .limit(1000)
        .toArray();
      for (const doc of older) {
        if (doc.payload.includes(OWN_ID)) continue;
        const payload = JSON.parse(doc.payload) as AdapterPayload;
        if (typeof payload.jti !== 'string' || sha256(payload.jti) !== doc._id) continue;
        sealed += (await this.docs(model).updateOne({ _id: doc._id, payload: doc.payload }, { $set: { payload: sealPayload(model, payload.jti, payload) } }))
          .modifiedCount;
      }
    }
    return sealed;
  }
}

/** oidc-provider's storage contract for one model. Single use (`consume`) is an insert of a marker
 *  on a unique `_id`: FerretDB v1 does not make conditional updates atomic, but a duplicate insert
 *  always fails, so of two requests racing to spend one code or refresh token exactly one wins.
 *  The loser is a reuse, and reuse revokes the whole grant. */
export class MongoAdapter implements Adapter {
  private readonly docs: Collection<StoredDoc>;

  constructor(
    private readonly store: OAuthStore,
    private readonly model: string,
    private readonly reuse: (message: string) => Error,
  ) {
    this.docs = store.docs(model);
  }

  private storedId(id: string): string {
    return PLAIN_ID_MODELS.has(this.model) ? id : sha256(id);
  }

  private live(doc: StoredDoc | null): StoredDoc | undefined {
    if (!doc) return undefined;
    if (doc.expiresAt && doc.expiresAt.getTime() <= this.store.clock()) return undefined;
    return doc;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const now = this.store.clock();
    const indexed = {
      ...(payload.grantId ? { grantId: payload.grantId } : {}),
      ...(payload.uid ? { uid: payload.uid } : {}),
      ...(payload.userCode ? { userCode: payload.userCode } : {}),
      ...(payload.accountId ? { accountId: payload.accountId } : {}),
      ...(payload.clientId ? { clientId: payload.clientId } : {}),
    };
    await this.docs.updateOne(
      { _id: this.storedId(id) },
      {
        $set: { payload: sealPayload(this.model, id, payload), ...indexed, ...(expiresIn ? { expiresAt: new Date(now + expiresIn * 1000) } : {}) },
        $setOnInsert: { createdAt: new Date(now) },
      },
      { upsert: true },
    );
    if (this.model === 'Grant') await this.store.credentials.revoked('grant', [id]); // no process keeps an old copy
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const storedId = this.storedId(id);
    const [doc, marker] = await Promise.all([
      this.docs.findOne({ _id: storedId }),
      CONSUMABLE_MODELS.has(this.model) ? this.store.consumedAt(this.model, storedId) : null,
    ]);
    const live = this.live(doc);
    if (!live) return undefined;
    const payload = openPayload(this.model, live.payload, id);
    return marker ? { ...payload, consumed: marker.at } : payload;
  }

  /** A session found by uid comes back without its cookie id (the store does not know it): the
   *  provider only reads such a session, to check that it still stands and whose it is. */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const doc = this.live(await this.docs.findOne({ uid }));
    return doc ? openPayload(this.model, doc.payload) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const doc = this.live(await this.docs.findOne({ userCode }));
    return doc ? openPayload(this.model, doc.payload) : undefined;
  }

  async consume(id: string): Promise<void> {
    const storedId = this.storedId(id);
    const doc = await this.docs.findOne({ _id: storedId }, { projection: { expiresAt: 1, grantId: 1 } });
    try {
      await this.store.markConsumed(this.model, storedId, doc?.expiresAt);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // Another request spent it first: a reuse. The grant goes, with every token under it.
      if (doc?.grantId) await this.store.revokeGrant(doc.grantId);
      throw this.reuse(`${this.model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
    }
  }

  async destroy(id: string): Promise<void> {
    await this.docs.deleteOne({ _id: this.storedId(id) });
    if (this.model === 'Grant') await this.store.credentials.revoked('grant', [id]);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.docs.deleteMany({ grantId });
  }
}
