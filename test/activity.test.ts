// Settings' recent activity in both timeline shapes: a uid's newest audit rows first, capped,
// a redelivered batch stored once, other uids never.
import { describe, expect, it } from 'vitest';
import { RECENT_ACTIVITY_ROWS, recentActivity, recordActivity } from '../src/workspace/activity.js';
import { MCP_AUDIT_LOG, type AuditRow } from '../src/workspace/audit.js';
import { SHAPES, useBothShapes } from './harness/shapes.js';

const shapes = useBothShapes();

const row = (uid: string, n: number): AuditRow => ({
  _id: `aud_${uid}_${String(n).padStart(3, '0')}`,
  uid,
  tenant: 'family',
  method: 'tools/call',
  tool: 'list_care_events',
  success: n % 5 !== 0,
  durationMs: n,
  authMethod: 'api-key',
  at: new Date(Date.UTC(2026, 10, 1, 8, 0, n)),
});

describe.each(SHAPES)('recent activity (%s)', (shape) => {
  it('when batches of several uids arrive out of order and beyond the cap, then each uid sees its own newest rows first', async () => {
    const { timelines } = shapes[shape];
    const [me, other] = [`uid_${shape}_me`, `uid_${shape}_other`];
    const total = RECENT_ACTIVITY_ROWS + 10;
    const order = Array.from({ length: total }, (_, i) => (i * 7) % total);
    for (let i = 0; i < total; i += 15)
      await recordActivity(
        timelines,
        order.slice(i, i + 15).flatMap((n) => [row(me, n), row(other, n + 1000)]),
      );
    const mine = await recentActivity(timelines, me, 100);
    expect(mine.map((r) => r._id)).toEqual(Array.from({ length: RECENT_ACTIVITY_ROWS }, (_, i) => row(me, total - 1 - i)._id));
    expect(mine[0]).toEqual(row(me, total - 1));
    expect((await recentActivity(timelines, me, 20)).map((r) => r._id)).toEqual(mine.slice(0, 20).map((r) => r._id));
    expect((await recentActivity(timelines, other, 1))[0]!.uid).toBe(other);
  });

  it('when a batch is delivered again, then each row is stored and listed once', async () => {
    const { db, timelines } = shapes[shape];
    const uid = `uid_${shape}_again`;
    await recordActivity(timelines, [row(uid, 1), row(uid, 2)]);
    await recordActivity(timelines, [row(uid, 3), row(uid, 2)]);
    expect((await recentActivity(timelines, uid, 10)).map((r) => r._id)).toEqual([3, 2, 1].map((n) => row(uid, n)._id));
    expect(await db.collection(MCP_AUDIT_LOG).countDocuments({ uid })).toBe(3);
  });
});
