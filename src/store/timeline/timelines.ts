// Choosing the timeline adapter once, at start-up, from what the store says it is.
import type { Db } from 'mongodb';
import { EmbeddedTimeline } from './embedded.js';
import { IndexedTimeline } from './indexed.js';
import type { Stream, Timeline, TimelineRecord, Timelines } from './port.js';

export type TimelineShape = Timelines['shape'];

/** The embedded shape on FerretDB (`buildInfo` reports `ferretdbVersion`), the indexed one elsewhere. */
export async function storeShape(db: Db): Promise<TimelineShape> {
  const info = await db.admin().command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string' ? 'embedded' : 'indexed';
}

/** The timelines of a store in the given shape; one timeline per stream, made once. */
export function timelinesOf(db: Db, shape: TimelineShape): Timelines {
  const made = new Map<string, Timeline<never>>();
  return {
    shape,
    of<T extends TimelineRecord>(stream: Stream<T>): Timeline<T> {
      let t = made.get(stream.name) as Timeline<T> | undefined;
      if (!t)
        made.set(stream.name, (t = shape === 'embedded' ? new EmbeddedTimeline(db, stream) : new IndexedTimeline(db, stream)) as unknown as Timeline<never>);
      return t;
    },
  };
}

export async function openTimelines(db: Db): Promise<Timelines> {
  return timelinesOf(db, await storeShape(db));
}

/** The same timelines, telling `stored` the stream's name and the records stored after each append
 *  that stored any (a supersession appends too: its newer record, marked as superseding). Best
 *  effort: what listens must not depend on it for correctness. */
export function announcingTimelines(timelines: Timelines, stored: (stream: string, records: readonly TimelineRecord[]) => void): Timelines {
  const made = new Map<string, Timeline<never>>();
  return {
    shape: timelines.shape,
    of<T extends TimelineRecord>(stream: Stream<T>): Timeline<T> {
      let t = made.get(stream.name) as Timeline<T> | undefined;
      if (!t) {
        const inner = timelines.of(stream);
        t = {
          append: async (records) => {
            const appended = await inner.append(records);
            if (appended.stored.length) {
              const ids = new Set(appended.stored);
              stored(
                stream.name,
                records.filter((r) => ids.delete(r._id)),
              );
            }
            return appended;
          },
          list: (owner, q) => inner.list(owner, q),
          get: (owner, id) => inner.get(owner, id),
          // The inner supersede appends through its own append: the newer record is announced here.
          supersede: async (owner, id, newer) => {
            await inner.supersede(owner, id, newer);
            stored(stream.name, [{ ...newer, supersedes: id }]);
          },
          history: (owner, id) => inner.history(owner, id),
          purge: (match) => inner.purge(match),
          remove: (owner) => inner.remove(owner),
          removeWhere: (match, owners) => inner.removeWhere(match, owners),
          count: (owner) => inner.count(owner),
          adopt: (records) => inner.adopt(records),
        };
        made.set(stream.name, t as unknown as Timeline<never>);
      }
      return t;
    },
  };
}

/** Records announced with their stream at most this large, encoded; a larger append is announced by its stream alone. */
export const ANNOUNCED_RECORDS_MAX_BYTES = 256 * 1024;

/** What is published on `cc.records.stored`: the stream, and the records a listener needs when they fit. */
export interface RecordsStored {
  stream: string;
  records?: readonly TimelineRecord[];
}

/** The announcement: `records` (those of the append a listener needs, none at all being an answer
 *  too) when they fit in `maxBytes`; the stream alone when they do not, or when `records` is null. */
export function recordsStored(stream: string, records: readonly TimelineRecord[] | null, maxBytes = ANNOUNCED_RECORDS_MAX_BYTES): RecordsStored {
  if (!records) return { stream };
  if (!records.length) return { stream, records: [] };
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(records));
  } catch {
    return { stream };
  }
  return bytes <= maxBytes ? { stream, records } : { stream };
}
