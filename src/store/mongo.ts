// MongoDB connection and readiness. Only features that also run on FerretDB v1 are used:
// no transactions, TTL or partial indexes, $lookup or change streams.
import { MongoClient, type Db } from 'mongodb';
import type { Logger } from '../log.js';
import { ensureIndexes, type IndexTable } from './indexes.js';

export interface Store {
  client: MongoClient;
  db: Db;
  /** True when a ping answered recently. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/** The database named in the URL's path, or `carecircle`. */
export function databaseName(url: string): string {
  const path = url
    .replace(/^mongodb(\+srv)?:\/\/[^/]*/, '')
    .replace(/^\//, '')
    .split('?')[0];
  return path ? decodeURIComponent(path) : 'carecircle';
}

/** Connect, and create the indexes of `tables` that do not exist yet. */
export async function openStore(url: string, log: Logger, tables: readonly IndexTable[] = []): Promise<Store> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000, appName: 'carecircle' });
  await client.connect();
  const db = client.db(databaseName(url));
  await ensureIndexes(db, log, tables);
  return {
    client,
    db,
    ready: async () => {
      try {
        await db.command({ ping: 1 }, { timeoutMS: 1000 });
        return true;
      } catch {
        return false;
      }
    },
    close: () => client.close(),
  };
}
