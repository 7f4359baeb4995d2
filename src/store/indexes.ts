// Creating the indexes the slices declare, at start-up, without re-sending existing ones.
import type { Db, IndexDescription } from 'mongodb';
import type { Logger } from '../log.js';

/** Indexes by collection; several owners of one collection's indexes are merged by concatenation. */
export type IndexTable = Readonly<Record<string, readonly IndexDescription[]>>;

export function mergeIndexes(tables: readonly IndexTable[]): Record<string, IndexDescription[]> {
  const merged: Record<string, IndexDescription[]> = {};
  for (const table of tables) for (const [collection, indexes] of Object.entries(table)) (merged[collection] ??= []).push(...indexes);
  return merged;
}

/**
 * Create the indexes that do not exist yet, by name. Asking FerretDB v1 to create an index that
 * already exists can crash its connection, so existing ones are never re-sent; when two processes
 * start at once and race, the loser looks again and finds nothing left to do.
 */
const DDL_TIMEOUT_MS = 15_000;

export async function ensureIndexes(db: Db, log: Logger, tables: readonly IndexTable[]): Promise<void> {
  let created = 0;
  for (const [collection, indexes] of Object.entries(mergeIndexes(tables))) {
    for (let attempt = 1; ; attempt++) {
      try {
        // Bounded: a DDL call that never answers (seen once under load on FerretDB) is retried,
        // not waited on forever.
        const existing = new Set(
          (
            await db
              .collection(collection)
              .listIndexes({ timeoutMS: DDL_TIMEOUT_MS })
              .toArray()
              .catch(() => [])
          ).map((i: { name?: string }) => i.name),
        );
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
