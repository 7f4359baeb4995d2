// Community threads, comments and channel membership in MongoDB: the one place that reads and
// writes them. Membership is one document per (channel, member) keyed by `_id`, so join and leave
// are exactly-once on MongoDB and FerretDB v1 alike. Comment counts shown to readers are computed
// from the comments themselves, never kept as counters that concurrent writers could lose.
import { randomBytes } from 'node:crypto';
import type { Collection, Db, Filter, IndexDescription } from 'mongodb';
import { isDuplicateKey } from '../store/errors.js';
import { looksLikeEmail, shownName } from './names.js';

export const COMMUNITY_COLLECTIONS = {
  members: 'community_members',
  threads: 'community_threads',
  comments: 'community_comments',
  profiles: 'community_profiles',
} as const;

export const COMMUNITY_INDEXES: Record<string, IndexDescription[]> = {
  [COMMUNITY_COLLECTIONS.members]: [{ key: { channel: 1 }, name: 'by_channel' }],
  [COMMUNITY_COLLECTIONS.threads]: [{ key: { channel: 1, lastActivityAt: -1, _id: -1 }, name: 'by_channel_activity' }],
  [COMMUNITY_COLLECTIONS.comments]: [{ key: { threadId: 1, createdAt: 1, _id: 1 }, name: 'by_thread_time' }],
};

/** The name a person chose to be shown by in the community, keyed by uid; chosen once. */
interface ProfileRecord {
  _id: string;
  displayName: string;
  chosenAt: Date;
}

interface MemberRecord {
  _id: string; // `${channel}:${uid}`
  channel: string;
  uid: string;
  displayName: string;
  joinedAt: Date;
}

export interface ThreadRecord {
  _id: string;
  channel: string;
  title: string;
  body: string;
  authorUid: string;
  authorName: string;
  createdAt: Date;
  /**
   * Newest of creation and the latest comment, raised with `$max` on each comment. FerretDB v1
   * applies it as read-then-write, so two comments in the same instant may leave the earlier time.
   */
  lastActivityAt: Date;
}

export interface CommentRecord {
  _id: string;
  threadId: string;
  channel: string;
  body: string;
  authorUid: string;
  authorName: string;
  createdAt: Date;
}

export interface ThreadSummary {
  id: string;
  channel: string;
  title: string;
  excerpt: string;
  authorName: string;
  createdAt: string;
  commentCount: number;
  lastActivityAt: string;
}

export interface ThreadDetail extends ThreadSummary {
  body: string;
}

export interface CommentView {
  id: string;
  threadId: string;
  body: string;
  authorName: string;
  createdAt: string;
}

export interface PageOf<T> {
  items: T[];
  nextCursor: string | null;
}

export const EXCERPT_LENGTH = 200;

/** The start of a body on one line, cut at a word boundary. */
export function excerptOf(body: string, max = EXCERPT_LENGTH): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;

/** Cursors are opaque to clients: base64url of the sort key of the last item returned. */
export class CursorError extends Error {
  override name = 'CursorError';
}

function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.getTime(), id])).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const [t, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof t === 'number' && Number.isFinite(t) && typeof id === 'string' && id.length <= 64) return { at: new Date(t), id };
  } catch {
    // fall through
  }
  throw new CursorError('cursor is not one this API returned');
}

export class CommunityStore {
  private readonly members: Collection<MemberRecord>;
  private readonly threads: Collection<ThreadRecord>;
  private readonly comments: Collection<CommentRecord>;
  private readonly profiles: Collection<ProfileRecord>;

  constructor(
    db: Db,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.profiles = db.collection<ProfileRecord>(COMMUNITY_COLLECTIONS.profiles);
    this.members = db.collection<MemberRecord>(COMMUNITY_COLLECTIONS.members);
    this.threads = db.collection<ThreadRecord>(COMMUNITY_COLLECTIONS.threads);
    this.comments = db.collection<CommentRecord>(COMMUNITY_COLLECTIONS.comments);
  }

  /** The display name this person chose, or null before they chose one. A name stored under an
   *  older, looser rule that looks like an email address counts as not chosen, so they are asked again. */
  async chosenName(uid: string): Promise<string | null> {
    const name = (await this.profiles.findOne({ _id: uid }))?.displayName;
    return name === undefined || looksLikeEmail(name) ? null : name;
  }

  /** Choose the display name once; a second choice (two tabs, a replayed form) keeps the first,
   *  unless the first looks like an email address: that one is replaced. */
  async chooseName(uid: string, displayName: string): Promise<string> {
    try {
      await this.profiles.insertOne({ _id: uid, displayName, chosenAt: this.clock() });
      return displayName;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const stored = await this.profiles.findOne({ _id: uid });
      if (stored && looksLikeEmail(stored.displayName))
        await this.profiles.updateOne({ _id: uid, displayName: stored.displayName }, { $set: { displayName, chosenAt: this.clock() } });
      return (await this.chosenName(uid)) ?? displayName;
    }
  }

  async join(channel: string, uid: string, displayName: string): Promise<'joined' | 'already_member'> {
    try {
      await this.members.insertOne({ _id: `${channel}:${uid}`, channel, uid, displayName, joinedAt: this.clock() });
      return 'joined';
    } catch (err) {
      if (isDuplicateKey(err)) return 'already_member';
      throw err;
    }
  }

  async leave(channel: string, uid: string): Promise<'left' | 'not_member'> {
    const res = await this.members.deleteOne({ _id: `${channel}:${uid}` });
    return res.deletedCount ? 'left' : 'not_member';
  }

  async isMember(channel: string, uid: string): Promise<boolean> {
    return (await this.members.findOne({ _id: `${channel}:${uid}` }, { projection: { _id: 1 } })) !== null;
  }

  async memberCount(channel: string): Promise<number> {
    return this.members.countDocuments({ channel });
  }

  async createThread(input: { channel: string; title: string; body: string; authorUid: string; authorName: string }): Promise<ThreadDetail> {
    const now = this.clock();
    const record: ThreadRecord = { _id: newId('thr'), ...input, createdAt: now, lastActivityAt: now };
    await this.threads.insertOne(record);
    return { ...summary(record, 0), body: record.body };
  }

  async addComment(thread: ThreadRecord, input: { body: string; authorUid: string; authorName: string }): Promise<CommentView> {
    const now = this.clock();
    const record: CommentRecord = { _id: newId('cmt'), threadId: thread._id, channel: thread.channel, ...input, createdAt: now };
    await this.comments.insertOne(record);
    await this.threads.updateOne({ _id: thread._id }, { $max: { lastActivityAt: now } });
    return commentView(record);
  }

  async getThread(id: string): Promise<ThreadRecord | null> {
    return this.threads.findOne({ _id: id });
  }

  async threadDetail(thread: ThreadRecord): Promise<ThreadDetail> {
    const stats = await this.stats([thread._id]);
    return { ...summary(thread, stats.get(thread._id) ?? 0), body: thread.body };
  }

  /** Threads of a channel, most recently active first. */
  async listThreads(channel: string, opts: { limit: number; cursor?: string }): Promise<PageOf<ThreadSummary>> {
    const filter: Filter<ThreadRecord> = { channel };
    if (opts.cursor) {
      const c = decodeCursor(opts.cursor);
      filter.$or = [{ lastActivityAt: { $lt: c.at } }, { lastActivityAt: c.at, _id: { $lt: c.id } }];
    }
    const rows = await this.threads
      .find(filter)
      .sort({ lastActivityAt: -1, _id: -1 })
      .limit(opts.limit + 1)
      .toArray();
    const page = rows.slice(0, opts.limit);
    const stats = await this.stats(page.map((t) => t._id));
    const last = page.at(-1);
    return {
      items: page.map((t) => summary(t, stats.get(t._id) ?? 0)),
      nextCursor: rows.length > opts.limit && last ? encodeCursor(last.lastActivityAt, last._id) : null,
    };
  }

  /** Comments of a thread, oldest first. */
  async listComments(threadId: string, opts: { limit: number; cursor?: string }): Promise<PageOf<CommentView>> {
    const filter: Filter<CommentRecord> = { threadId };
    if (opts.cursor) {
      const c = decodeCursor(opts.cursor);
      filter.$or = [{ createdAt: { $gt: c.at } }, { createdAt: c.at, _id: { $gt: c.id } }];
    }
    const rows = await this.comments
      .find(filter)
      .sort({ createdAt: 1, _id: 1 })
      .limit(opts.limit + 1)
      .toArray();
    const page = rows.slice(0, opts.limit);
    const last = page.at(-1);
    return { items: page.map(commentView), nextCursor: rows.length > opts.limit && last ? encodeCursor(last.createdAt, last._id) : null };
  }

  /**
   * Comment count per thread, from the comments themselves (FerretDB v1 has `$sum` but no `$max`
   * accumulator, so the last activity comes from the thread's own `lastActivityAt`).
   */
  private async stats(threadIds: string[]): Promise<Map<string, number>> {
    if (!threadIds.length) return new Map();
    const rows = await this.comments
      .aggregate<{ _id: string; count: number }>([{ $match: { threadId: { $in: threadIds } } }, { $group: { _id: '$threadId', count: { $sum: 1 } } }])
      .toArray();
    return new Map(rows.map((r) => [r._id, r.count]));
  }
}

function summary(t: ThreadRecord, commentCount: number): ThreadSummary {
  return {
    id: t._id,
    channel: t.channel,
    title: t.title,
    excerpt: excerptOf(t.body),
    authorName: shownName(t.authorName, t.authorUid),
    createdAt: t.createdAt.toISOString(),
    commentCount,
    lastActivityAt: t.lastActivityAt.toISOString(),
  };
}

function commentView(c: CommentRecord): CommentView {
  return { id: c._id, threadId: c.threadId, body: c.body, authorName: shownName(c.authorName, c.authorUid), createdAt: c.createdAt.toISOString() };
}
