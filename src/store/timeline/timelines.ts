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
