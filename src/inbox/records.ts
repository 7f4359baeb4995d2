// Family inbox items: one per delivered message and loved one; never the full body.
import type { Collection, Db } from 'mongodb';
import { INBOX_ITEMS } from '../sandbox/service.js';

export const EXCERPT_CHARS = 2000;

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

export const inboxItems = (db: Db): Collection<InboxItem> => db.collection<InboxItem>(INBOX_ITEMS);
