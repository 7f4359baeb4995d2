// The inbox listing in both timeline shapes: a loved one's newest items first, capped, and
// nothing left after a purge.
import { describe, expect, it } from 'vitest';
import { INBOX_ITEMS, purgeInboxOf, recentInboxItems, RECENT_INBOX_ITEMS, storeInboxItem, type InboxItem } from '../src/inbox/records.js';
import { SHAPES, useBothShapes } from './harness/shapes.js';

const shapes = useBothShapes();

const item = (lovedOneId: string, n: number): InboxItem => ({
  _id: `mail_${lovedOneId}_${n}`,
  lovedOneId,
  workspaceId: `ws_${lovedOneId}`,
  from: 'clinic@example.com',
  subject: `Visit summary ${n}`,
  receivedAt: new Date(Date.UTC(2026, 10, 1, 8, n)),
  excerpt: 'Blood pressure was stable.',
  attachmentNames: n % 2 ? ['summary.pdf'] : [],
});

describe.each(SHAPES)('inbox listing (%s)', (shape) => {
  it('when mail arrives out of order and beyond the cap, then the newest items come first, at most the cap', async () => {
    const { timelines } = shapes[shape];
    const lovedOneId = `lo_${shape}_many`;
    const order = Array.from({ length: RECENT_INBOX_ITEMS + 5 }, (_, i) => (i * 37) % (RECENT_INBOX_ITEMS + 5));
    for (const n of order) await storeInboxItem(timelines, item(lovedOneId, n));
    await storeInboxItem(timelines, item(lovedOneId, 3)); // a repeat changes nothing
    const all = await recentInboxItems(timelines, lovedOneId, 100);
    expect(all.map((m) => m._id)).toEqual(Array.from({ length: RECENT_INBOX_ITEMS }, (_, i) => `mail_${lovedOneId}_${RECENT_INBOX_ITEMS + 4 - i}`));
    expect(all[0]).toEqual(item(lovedOneId, RECENT_INBOX_ITEMS + 4));
    expect((await recentInboxItems(timelines, lovedOneId, 3)).map((m) => m._id)).toEqual(all.slice(0, 3).map((m) => m._id));
  });

  it('when the workspace is purged, then its items are gone', async () => {
    const { db, timelines } = shapes[shape];
    const lovedOneId = `lo_${shape}_purged`;
    await storeInboxItem(timelines, item(lovedOneId, 1));
    await purgeInboxOf(db, timelines, `ws_${lovedOneId}`, []);
    expect(await db.collection(INBOX_ITEMS).countDocuments({ lovedOneId })).toBe(0);
    expect(await recentInboxItems(timelines, lovedOneId, 10)).toEqual([]);
  });
});
