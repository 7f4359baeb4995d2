// The timeline on MongoDB: plain queries on the records collection, served by the indexes its
// slice declares (owner and time). One document per record, so every operation is one command.
import type { Collection, Db, Filter } from 'mongodb';
import {
  decodeCursor,
  encodeCursor,
  insertReporting,
  TimelineBase,
  type Appended,
  type Stream,
  type TimelinePage,
  type TimelineQuery,
  type TimelineRecord,
} from './port.js';

export class IndexedTimeline<T extends TimelineRecord> extends TimelineBase<T> {
  private readonly records: Collection<T>;
  constructor(db: Db, stream: Stream<T>) {
    super(db, stream);
    this.records = db.collection<T>(stream.records);
  }

  append(records: readonly T[]): Promise<Appended> {
    return insertReporting(this.db.collection(this.stream.records), records);
  }

  async list(owner: string, q: TimelineQuery): Promise<TimelinePage<T>> {
    const { owner: o, time, type } = this.stream;
    const after = decodeCursor(this.stream.name, owner, q);
    const and: Record<string, unknown>[] = [{ [o]: owner }, { supersededBy: { $exists: false } }];
    if (q.since) and.push({ [time]: { $gte: q.since } });
    if (q.until) and.push({ [time]: { $lt: q.until } });
    if (type && q.types?.length) and.push({ [type]: { $in: [...q.types] } });
    if (after) and.push({ $or: [{ [time]: { $lt: after.at } }, { [time]: after.at, _id: { $lt: after.id } }] });
    const found = (await this.records
      .find({ $and: and } as Filter<T>)
      .sort({ [time]: -1, _id: -1 })
      .limit(q.limit + 1)
      .toArray()) as T[];
    const page = found.slice(0, q.limit);
    const last = page.at(-1);
    return found.length > q.limit && last
      ? { records: page, nextCursor: encodeCursor(this.stream.name, owner, q, { at: this.timeOf(last), id: last._id }) }
      : { records: page };
  }

  async get(owner: string, id: string): Promise<T | null> {
    return (await this.records.findOne({ _id: id, [this.stream.owner]: owner } as Filter<T>)) as T | null;
  }

  protected async mark(_owner: string, id: string, by: string): Promise<void> {
    await this.records.updateOne({ _id: id } as Filter<T>, { $set: { supersededBy: by } as never });
  }

  async purge(match: Readonly<Record<string, string>>): Promise<number> {
    return (await this.records.deleteMany({ ...match } as Filter<T>)).deletedCount;
  }

  async remove(owner: string): Promise<number> {
    const n = (await this.records.deleteMany({ [this.stream.owner]: owner } as Filter<T>)).deletedCount;
    await this.forgetClaims([owner]);
    return n;
  }

  async removeWhere(match: Readonly<Record<string, string>>, owners: readonly string[]): Promise<void> {
    await this.records.deleteMany({ ...match } as Filter<T>);
    await this.forgetClaims(owners);
  }

  /** The records collection is the timeline: nothing to copy. */
  async adopt(): Promise<void> {}

  count(owner: string): Promise<number> {
    return this.records.countDocuments({ [this.stream.owner]: owner } as Filter<T>);
  }
}
