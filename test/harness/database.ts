// A database of its own for a test file, on the run's shared MongoDB-compatible server.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { databaseName } from '../../src/store/mongo.js';
import { dropDatabases, freshDatabaseUrl } from './servers.js';

export interface TestDatabase {
  url: string;
  client: MongoClient;
  db: Db;
  /** Another connection to the same database, as a second process would have. */
  connect(): Promise<{ db: Db; close(): Promise<void> }>;
}

/** Registers beforeAll/afterAll hooks; the returned object is filled in before the tests run. */
export function useTestDatabase(): TestDatabase {
  const handle = {} as TestDatabase;
  beforeAll(async () => {
    handle.url = freshDatabaseUrl(inject('mongoUrl'));
    handle.client = await new MongoClient(handle.url).connect();
    handle.db = handle.client.db(databaseName(handle.url));
    handle.connect = async () => {
      const other = await new MongoClient(handle.url).connect();
      return { db: other.db(databaseName(handle.url)), close: () => other.close() };
    };
  });
  afterAll(async () => {
    // With the embedded timelines' databases beside it (`<name>_tl<nn>`).
    if (handle.url) await dropDatabases(handle.url, databaseName(handle.url));
    await handle.client?.close();
  });
  return handle;
}
