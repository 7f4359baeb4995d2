// Family inbox items: one per delivered message and loved one; never the full body, and the
// attachments only up to a bound. The inbox slice owns the collections; other slices (the sandbox's
// inbox page and purge, the app's removal of a loved one) call these functions. The items are a
// timeline of the port (src/store/timeline), one per loved one.
import { type Binary, type Collection, type Db, type IndexDescription } from 'mongodb';
import type { Stream, Timelines } from '../store/timeline/port.js';

export const EXCERPT_CHARS = 2000;
/** Attachment bytes kept per message: the delivery crosses the bus (NATS carries 1 MB) as base64. */
export const ATTACHMENT_KEEP_BYTES = 512 * 1024;
/** The most items a listing returns (and a loved one's list keeps). */
export const RECENT_INBOX_ITEMS = 50;

export const INBOX_ITEMS = 'inbox_items';
export const INBOX_ATTACHMENTS = 'inbox_attachments';
export const INBOX_INDEXES: Record<string, IndexDescription[]> = {
  [INBOX_ITEMS]: [
    { key: { lovedOneId: 1, receivedAt: -1 }, name: 'by_loved_one_time' },
    { key: { workspaceId: 1 }, name: 'by_workspace' },
  ],
  [INBOX_ATTACHMENTS]: [
    { key: { itemId: 1 }, name: 'by_item' },
    { key: { workspaceId: 1 }, name: 'by_workspace' },
    { key: { lovedOneId: 1 }, name: 'by_loved_one' },
  ],
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

export const INBOX_STREAM: Stream<InboxItem> = { name: 'inbox', records: INBOX_ITEMS, owner: 'lovedOneId', time: 'receivedAt' };
const inboxItems = (timelines: Timelines) => timelines.of(INBOX_STREAM);

/** Store the item (repeating it changes nothing). */
export async function storeInboxItem(timelines: Timelines, item: InboxItem): Promise<void> {
  await inboxItems(timelines).append([item]);
}

/** A loved one's newest mail first (at most `RECENT_INBOX_ITEMS`). */
export async function recentInboxItems(timelines: Timelines, lovedOneId: string, limit: number): Promise<InboxItem[]> {
  return (await inboxItems(timelines).list(lovedOneId, { limit: Math.min(limit, RECENT_INBOX_ITEMS) })).records;
}

/** Every item of a workspace, when the workspace itself is purged. */
export async function purgeInboxOf(db: Db, timelines: Timelines, workspaceId: string, lovedOneIds: readonly string[]): Promise<void> {
  await inboxItems(timelines).removeWhere({ workspaceId }, lovedOneIds);
  await attachments(db).deleteMany({ workspaceId });
}

const attachments = (db: Db): Collection<InboxAttachment> => db.collection<InboxAttachment>(INBOX_ATTACHMENTS);

export async function storeInboxAttachments(db: Db, list: InboxAttachment[]): Promise<void> {
  if (list.length) await attachments(db).insertMany(list);
}

/** Which positions of each item's attachments were kept (the rest were over the bound). */
export async function keptAttachments(db: Db, itemIds: string[]): Promise<Set<string>> {
  if (!itemIds.length) return new Set();
  const rows = await attachments(db)
    .find({ itemId: { $in: itemIds } }, { projection: { _id: 1 } })
    .toArray();
  return new Set(rows.map((r) => r._id));
}

/** One kept attachment, only if it belongs to that loved one of that workspace. */
export function inboxAttachment(db: Db, workspaceId: string, lovedOneId: string, itemId: string, index: number): Promise<InboxAttachment | null> {
  return attachments(db).findOne({ _id: `${itemId}:${index}`, workspaceId, lovedOneId });
}

export function countInboxItemsOf(timelines: Timelines, lovedOneId: string): Promise<number> {
  return inboxItems(timelines).count(lovedOneId);
}

/** A loved one's items and attachments, when the family removes the loved one; items deleted. */
export async function deleteInboxOf(db: Db, timelines: Timelines, workspaceId: string, lovedOneId: string): Promise<number> {
  const n = await inboxItems(timelines).remove(lovedOneId);
  await attachments(db).deleteMany({ workspaceId, lovedOneId });
  return n;
}
