// Family inbox items: one per delivered message and loved one; never the full body. The inbox
// slice owns the collection; other slices (the sandbox's inbox page and purge) call these functions.
import type { Collection, Db, IndexDescription } from 'mongodb';

export const EXCERPT_CHARS = 2000;

export const INBOX_ITEMS = 'inbox_items';
export const INBOX_INDEXES: Record<string, IndexDescription[]> = {
  [INBOX_ITEMS]: [{ key: { lovedOneId: 1, receivedAt: -1 }, name: 'by_loved_one_time' }, { key: { workspaceId: 1 }, name: 'by_workspace' }],
};

export interface InboxItem {
  _id: string;
  lovedOneId: string;
  workspaceId: string;
  from: string;
  subject: string;
  receivedAt: Date;
  excerpt: string;
  attachmentNames: string[];
  messageId?: string;
}

const inboxItems = (db: Db): Collection<InboxItem> => db.collection<InboxItem>(INBOX_ITEMS);

export async function storeInboxItem(db: Db, item: InboxItem): Promise<void> {
  await inboxItems(db).insertOne(item);
}

/** A loved one's newest mail first. */
export function recentInboxItems(db: Db, lovedOneId: string, limit: number): Promise<InboxItem[]> {
  return inboxItems(db).find({ lovedOneId }).sort({ receivedAt: -1 }).limit(limit).toArray();
}

/** Every item of a workspace, when the workspace itself is purged. */
export async function purgeInboxOf(db: Db, workspaceId: string): Promise<void> {
  await inboxItems(db).deleteMany({ workspaceId });
}
