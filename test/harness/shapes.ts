// Both timeline shapes against one test server: the embedded store's (a collection per owner and
// month) and the indexed one MongoDB serves from its indexes, each on a database of its own.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { databaseName } from '../../src/store/mongo.js';
import type { Timelines } from '../../src/store/timeline/port.js';
import { timelinesOf, type TimelineShape } from '../../src/store/timeline/timelines.js';
import { dropDatabases, freshDatabaseUrl } from './servers.js';

export const SHAPES: readonly TimelineShape[] = ['embedded', 'indexed'];

/** A fresh database per shape and its timelines in that shape; filled in before the tests. */
export function useBothShapes(): Record<TimelineShape, { db: Db; timelines: Timelines }> {
  const clients: MongoClient[] = [];
  const urls: string[] = [];
  const shapes = {} as Record<TimelineShape, { db: Db; timelines: Timelines }>;
  beforeAll(async () => {
    for (const shape of SHAPES) {
      const url = freshDatabaseUrl(inject('mongoUrl'));
      urls.push(url);
      const client = await new MongoClient(url).connect();
      clients.push(client);
      const db = client.db(databaseName(url));
      shapes[shape] = { db, timelines: timelinesOf(db, shape) };
    }
  });
  afterAll(async () => {
    // With the embedded timelines' databases beside each (`<name>_tl<nn>`).
    for (const url of urls) await dropDatabases(url, databaseName(url));
    for (const c of clients) await c.close();
  });
  return shapes;
}
