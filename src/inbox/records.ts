// Family inbox items: one per delivered message and loved one; never the full body, and the
// attachments only up to a bound. The inbox slice owns the collections; other slices (the sandbox's
// inbox page and purge, the app's removal of a loved one) call these functions. On the embedded
// FerretDB, which scans the whole collection for a query by loved one, each loved one also keeps a
// list of its newest items beside its care-event pages, read by key.
import { type Binary, type Collection, type Db, type IndexDescription } from 'mongodb';
import { lovedOneList, usesTimelinePages } from '../family/timeline.js';

export const EXCERPT_CHARS = 2000;
/** Attachment bytes kept per message: the delivery crosses the bus (NATS carries 1 MB) as base64. */
export const ATTACHMENT_KEEP_BYTES = 512 * 1024;
/** The most items a listing returns (and a loved one's list keeps). */
export const RECENT_INBOX_ITEMS = 50;

export const INBOX_ITEMS = 'inbox_items';
export const INBOX_ATTACHMENTS = 'inbox_attachments';
export const INBOX_INDEXES: Record<string, IndexDescription[]> = {
  [INBOX_ITEMS]: [{ key: { lovedOneId: 1, receivedAt: -1 }, name: 'by_loved_one_time' }, { key: { workspaceId: 1 }, name: 'by_workspace' }],
  [INBOX_ATTACHMENTS]: [{ key: { itemId: 1 }, name: 'by_item' }, { key: { workspaceId: 1 }, name: 'by_workspace' }, { key: { lovedOneId: 1 }, name: 'by_loved_one' }],
};

/** One kept attachment: `_id` is `<itemId>:<position>`, the position in attachmentNames. */
export interface InboxAttachment {
  _id: string;
  itemId: string;
  lovedOneId: string;
  workspaceId: string;
  index: number;
  name: string;
  contentType: string;
  size: number;
  data: Binary;
}

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
const newestFirst = (a: InboxItem, b: InboxItem) => b.receivedAt.getTime() - a.receivedAt.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
const recentList = (db: Db, lovedOneId: string) => lovedOneList<InboxItem>(db, lovedOneId, 'inbox', (raw) => ({ ...(raw as InboxItem), receivedAt: new Date((raw as { receivedAt: string }).receivedAt) }));
/** A loved one's newest items by query: a scan on FerretDB, so only for a loved one without a list. */
const queryRecent = (db: Db, lovedOneId: string, limit: number) => inboxItems(db).find({ lovedOneId }).sort({ receivedAt: -1, _id: -1 }).limit(limit).toArray();

/** Store the item, then put it on its loved one's list (repeating that changes nothing). */
export async function storeInboxItem(db: Db, item: InboxItem): Promise<void> {
  await inboxItems(db).insertOne(item);
  if (!(await usesTimelinePages(db))) return;
  await recentList(db, item.lovedOneId).update(
    item.workspaceId,
    () => queryRecent(db, item.lovedOneId, RECENT_INBOX_ITEMS),
    (items) => (items.some((i) => i._id === item._id) ? null : [...items, item].sort(newestFirst).slice(0, RECENT_INBOX_ITEMS)),
  );
}

/** A loved one's newest mail first (at most `RECENT_INBOX_ITEMS`). */
export async function recentInboxItems(db: Db, lovedOneId: string, limit: number): Promise<InboxItem[]> {
  const n = Math.min(limit, RECENT_INBOX_ITEMS);
  if (!(await usesTimelinePages(db))) return queryRecent(db, lovedOneId, n);
  // No list: no mail since the lists arrived, so whatever there is predates them.
  return ((await recentList(db, lovedOneId).read()) ?? (await queryRecent(db, lovedOneId, n))).slice(0, n);
}

/** Every item of a workspace, when the workspace itself is purged (its loved ones' lists go with
 *  their care-event pages). */
export async function purgeInboxOf(db: Db, workspaceId: string): Promise<void> {
  await inboxItems(db).deleteMany({ workspaceId });
  await attachments(db).deleteMany({ workspaceId });
}

const attachments = (db: Db): Collection<InboxAttachment> => db.collection<InboxAttachment>(INBOX_ATTACHMENTS);

export async function storeInboxAttachments(db: Db, list: InboxAttachment[]): Promise<void> {
  if (list.length) await attachments(db).insertMany(list);
}

/** Which positions of each item's attachments were kept (the rest were over the bound). */
export async function keptAttachments(db: Db, itemIds: string[]): Promise<Set<string>> {
  if (!itemIds.length) return new Set();
  const rows = await attachments(db).find({ itemId: { $in: itemIds } }, { projection: { _id: 1 } }).toArray();
  return new Set(rows.map((r) => r._id));
}

/** One kept attachment, only if it belongs to that loved one of that workspace. */
export function inboxAttachment(db: Db, workspaceId: string, lovedOneId: string, itemId: string, index: number): Promise<InboxAttachment | null> {
  return attachments(db).findOne({ _id: `${itemId}:${index}`, workspaceId, lovedOneId });
}

export function countInboxItemsOf(db: Db, workspaceId: string, lovedOneId: string): Promise<number> {
  return inboxItems(db).countDocuments({ workspaceId, lovedOneId });
}

/** A loved one's items and attachments, when the family removes the loved one; items deleted. */
export async function deleteInboxOf(db: Db, workspaceId: string, lovedOneId: string): Promise<number> {
  const n = (await inboxItems(db).deleteMany({ workspaceId, lovedOneId })).deletedCount;
  await attachments(db).deleteMany({ workspaceId, lovedOneId });
  return n;
}
