// Every index carecircle relies on, declared in one place and created at start-up.
import type { Db, IndexDescription } from 'mongodb';
import type { Logger } from '../log.js';
import { RATE_HEADS, RATE_TOKENS, rateTokenIndexes } from './rateLimit.js';
import { API_KEY_INDEXES, API_KEYS } from '../keys/keys.js';
import { SESSION_INDEXES, SESSIONS } from '../session/sessions.js';
import { AUDIT_INDEXES, MCP_AUDIT_LOG } from '../workspace/audit.js';
import { WORKSPACE_INDEXES } from '../workspace/records.js';
import { INGEST_INDEXES } from '../ingest/indexes.js';
import { COMMUNITY_INDEXES } from '../community/store.js';
import { NEWSLETTER_INDEXES } from '../newsletter/store.js';
import { OAUTH_INDEXES } from '../oauth/store.js';
import { SANDBOX_INDEXES } from '../sandbox/service.js';
import { INBOX_INDEXES } from '../inbox/records.js';
import { ENTITY_SNAPSHOTS } from './entities.js';
import { versionedIndexes } from './versioned.js';

export const COLLECTIONS = {
  rateTokens: RATE_TOKENS,
  rateHeads: RATE_HEADS,
  leases: 'leases',
} as const;

export const INDEXES: Record<string, IndexDescription[]> = {
  ...WORKSPACE_INDEXES,
  ...COMMUNITY_INDEXES,
  ...NEWSLETTER_INDEXES,
  ...SANDBOX_INDEXES,
  ...INBOX_INDEXES,
  [SESSIONS]: SESSION_INDEXES,
  [API_KEYS]: API_KEY_INDEXES,
  [MCP_AUDIT_LOG]: AUDIT_INDEXES,
  [COLLECTIONS.rateTokens]: rateTokenIndexes,
  [COLLECTIONS.rateHeads]: rateTokenIndexes,
  [COLLECTIONS.leases]: versionedIndexes,
  [ENTITY_SNAPSHOTS]: versionedIndexes,
  ...INGEST_INDEXES,
  ...OAUTH_INDEXES,
};

/**
 * Create the indexes that do not exist yet, by name. Asking FerretDB v1 to create an index that
 * already exists can crash its connection, so existing ones are never re-sent; when two processes
 * start at once and race, the loser looks again and finds nothing left to do.
 */
const DDL_TIMEOUT_MS = 15_000;

export async function ensureIndexes(db: Db, log: Logger): Promise<void> {
  let created = 0;
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    for (let attempt = 1; ; attempt++) {
      try {
        // Bounded: a DDL call that never answers (seen once under load on FerretDB) is retried,
        // not waited on forever.
        const existing = new Set((await db.collection(collection).listIndexes({ timeoutMS: DDL_TIMEOUT_MS }).toArray().catch(() => [])).map((i: { name?: string }) => i.name));
        const missing = indexes.filter((i) => !existing.has(i.name));
        if (missing.length) await db.collection(collection).createIndexes(missing, { timeoutMS: DDL_TIMEOUT_MS });
        created += missing.length;
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }
  log.debug({ created }, 'indexes ensured');
}
