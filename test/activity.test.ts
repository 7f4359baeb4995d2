// Settings' recent activity read by key: a uid's newest audit rows first, capped, each batch
// folded into one write per uid, rows from before the lists still shown, other uids never.
import { describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { noteActivity, RECENT_ACTIVITY_ROWS, recentActivity } from '../src/workspace/activity.js';
import { MCP_AUDIT_LOG, type AuditRow } from '../src/workspace/audit.js';
import { useBothShapes } from './harness/shapes.js';

const dbs = useBothShapes();

const row = (uid: string, n: number): AuditRow => ({ _id: `aud_${uid}_${String(n).padStart(3, '0')}`, uid, tenant: 'family', method: 'tools/call', tool: 'list_care_events', success: n % 5 !== 0, durationMs: n, authMethod: 'api-key', at: new Date(Date.UTC(2026, 10, 1, 8, 0, n)) });

/** As the audit writer stores a batch: the log first, then the lists. */
async function store(db: Db, rows: AuditRow[]): Promise<void> {
  await db.collection<AuditRow>(MCP_AUDIT_LOG).insertMany(rows);
  await noteActivity(db, rows);
}

describe.each(['pages', 'query'] as const)('recent activity read through %s', (shape) => {
  it('when batches of several uids arrive out of order and beyond the cap, then each uid sees its own newest rows first', async () => {
    const db = dbs[shape];
    const [me, other] = [`uid_${shape}_me`, `uid_${shape}_other`];
    const total = RECENT_ACTIVITY_ROWS + 10;
    const order = Array.from({ length: total }, (_, i) => (i * 7) % total);
    for (let i = 0; i < total; i += 15) await store(db, order.slice(i, i + 15).flatMap((n) => [row(me, n), row(other, n + 1000)]));
    const mine = await recentActivity(db, me, 100);
    expect(mine.map((r) => r._id)).toEqual(Array.from({ length: RECENT_ACTIVITY_ROWS }, (_, i) => row(me, total - 1 - i)._id));
    expect(mine[0]).toEqual(row(me, total - 1));
    expect((await recentActivity(db, me, 20)).map((r) => r._id)).toEqual(mine.slice(0, 20).map((r) => r._id));
    expect((await recentActivity(db, other, 1))[0]!.uid).toBe(other);
  });

  it('when rows were logged before the lists existed, then they are shown with the new ones', async () => {
    const db = dbs[shape];
    const uid = `uid_${shape}_legacy`;
    await db.collection<AuditRow>(MCP_AUDIT_LOG).insertMany([row(uid, 1), row(uid, 2)]);
    expect((await recentActivity(db, uid, 10)).map((r) => r._id)).toEqual([row(uid, 2)._id, row(uid, 1)._id]);
    await store(db, [row(uid, 3)]);
    await noteActivity(db, [row(uid, 3)]); // a repeat changes nothing
    expect((await recentActivity(db, uid, 10)).map((r) => r._id)).toEqual([3, 2, 1].map((n) => row(uid, n)._id));
  });
});
