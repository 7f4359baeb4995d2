// The ingest slice's declared indexes, created as start-up creates them: the family-share bindings
// are looked up by loved one (unlinking a removed loved one, counting its links), not only by id.
import { describe, expect, it } from 'vitest';
import { FAMILY_SHARE_BINDINGS } from '../src/ingest/familyShare.js';
import { INGEST_INDEXES } from '../src/ingest/indexes.js';
import { createLogger } from '../src/log.js';
import { ensureIndexes } from '../src/store/indexes.js';
import { useTestDatabase } from './harness/database.js';

const database = useTestDatabase();

describe('ingest indexes', () => {
  it('when the ingest indexes are ensured, then family_share_bindings has an index on the loved one its links are queried by', async () => {
    await ensureIndexes(database.db, createLogger('silent'), [INGEST_INDEXES]);
    const indexes = await database.db.collection(FAMILY_SHARE_BINDINGS).listIndexes().toArray();
    // The fields FamilyShares.linkedTo filters on besides `state` (which nearly every row shares).
    const byLovedOne = indexes.find(
      (i) =>
        Object.keys(i.key as object)
          .sort()
          .join() === 'link.lovedOneId,link.workspaceId',
    );
    expect(byLovedOne, JSON.stringify(indexes.map((i) => i.key))).toBeDefined();
  });
});
