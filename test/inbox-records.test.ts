// The inbox listing in both read shapes: a loved one's newest items first, capped, the items of
// a loved one from before the lists still listed, and nothing left after a purge.
import { describe, expect, it } from 'vitest';
import { startTimeline } from '../src/family/timeline.js';
import { INBOX_ITEMS, purgeInboxOf, recentInboxItems, RECENT_INBOX_ITEMS, storeInboxItem, type InboxItem } from '../src/inbox/records.js';
import { useBothShapes } from './harness/shapes.js';

const dbs = useBothShapes();

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

describe.each(['pages', 'query'] as const)('inbox listing read through %s', (shape) => {
  it('when mail arrives out of order and beyond the cap, then the newest items come first, at most the cap', async () => {
    const db = dbs[shape];
    const lovedOneId = `lo_${shape}_many`;
    await startTimeline(db, lovedOneId, `ws_${lovedOneId}`);
    const order = Array.from({ length: RECENT_INBOX_ITEMS + 5 }, (_, i) => (i * 37) % (RECENT_INBOX_ITEMS + 5));
    for (const n of order) await storeInboxItem(db, item(lovedOneId, n));
    const all = await recentInboxItems(db, lovedOneId, 100);
    expect(all.map((m) => m._id)).toEqual(Array.from({ length: RECENT_INBOX_ITEMS }, (_, i) => `mail_${lovedOneId}_${RECENT_INBOX_ITEMS + 4 - i}`));
    expect(all[0]).toEqual(item(lovedOneId, RECENT_INBOX_ITEMS + 4));
    expect((await recentInboxItems(db, lovedOneId, 3)).map((m) => m._id)).toEqual(all.slice(0, 3).map((m) => m._id));
  });

  it('when items were stored before the lists existed, then they are listed with the new ones', async () => {
    const db = dbs[shape];
    const lovedOneId = `lo_${shape}_legacy`;
    await db.collection<InboxItem>(INBOX_ITEMS).insertMany([item(lovedOneId, 1), item(lovedOneId, 2)]);
    expect((await recentInboxItems(db, lovedOneId, 10)).map((m) => m._id)).toEqual([`mail_${lovedOneId}_2`, `mail_${lovedOneId}_1`]);
    await storeInboxItem(db, item(lovedOneId, 3));
    expect((await recentInboxItems(db, lovedOneId, 10)).map((m) => m._id)).toEqual([3, 2, 1].map((n) => `mail_${lovedOneId}_${n}`));
  });

  it('when the workspace is purged, then its items are gone', async () => {
    const db = dbs[shape];
    const lovedOneId = `lo_${shape}_purged`;
    await storeInboxItem(db, item(lovedOneId, 1));
    await purgeInboxOf(db, `ws_${lovedOneId}`);
    expect(await db.collection(INBOX_ITEMS).countDocuments({ lovedOneId })).toBe(0);
  });
});
