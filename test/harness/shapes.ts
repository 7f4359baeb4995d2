// Both read shapes of the family records against one test server: the embedded store's pages and
// lists read by key, and the plain queries MongoDB serves from its indexes.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { setTimelinePages } from '../../src/family/timeline.js';
import { databaseName } from '../../src/store/mongo.js';
import { freshDatabaseUrl } from './servers.js';

/** One fresh database seen through two connections, `pages` and `query`; filled in before the tests. */
export function useBothShapes(): Record<'pages' | 'query', Db> {
  const clients: MongoClient[] = [];
  const dbs = {} as Record<'pages' | 'query', Db>;
  beforeAll(async () => {
    const url = freshDatabaseUrl(inject('mongoUrl'));
    for (const [shape, pages] of [['pages', true], ['query', false]] as const) {
      const client = await new MongoClient(url).connect();
      clients.push(client);
      dbs[shape] = client.db(databaseName(url));
      setTimelinePages(dbs[shape], pages);
    }
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
  });
  return dbs;
}
