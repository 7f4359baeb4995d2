// Settings' recent MCP activity read by key: on the embedded FerretDB, which scans the whole
// audit log for a query by uid, each uid keeps its newest rows in a collection of its own,
// updated once per uid for a whole batch of audit rows; MongoDB reads the log through its index.
// The audit log itself stays append-only and complete; these lists only serve the listing.
import type { Db } from 'mongodb';
import { keptList, ownCollection } from '../family/keyed.js';
import { usesTimelinePages } from '../family/timeline.js';
import { MCP_AUDIT_LOG, type AuditRow } from './auditRow.js';

/** The most rows a listing returns (and a uid's list keeps). */
export const RECENT_ACTIVITY_ROWS = 50;
const ACTIVITY_PREFIX = 'mcp_activity_';

export const activityCollection = (uid: string): string => ownCollection(ACTIVITY_PREFIX, uid);

const newestFirst = (a: AuditRow, b: AuditRow) => b.at.getTime() - a.at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
const listOf = (db: Db, uid: string) => keptList<AuditRow>(db, activityCollection(uid), 'recent', (raw) => ({ ...(raw as AuditRow), at: new Date((raw as { at: string }).at) }));
/** A uid's newest rows by query: a scan on FerretDB, so only for a uid that has no list yet. */
const queryRecent = (db: Db, uid: string, limit: number) => db.collection<AuditRow>(MCP_AUDIT_LOG).find({ uid }).sort({ at: -1, _id: -1 }).limit(limit).toArray();

/** Put stored audit rows on their uids' lists: one write per uid however many rows. */
export async function noteActivity(db: Db, rows: readonly AuditRow[]): Promise<void> {
  if (!rows.length || !(await usesTimelinePages(db))) return;
  const byUid = new Map<string, AuditRow[]>();
  for (const r of rows) byUid.set(r.uid, [...(byUid.get(r.uid) ?? []), r]);
  await Promise.all(
    [...byUid].map(([uid, fresh]) =>
      listOf(db, uid).update({ uid }, () => queryRecent(db, uid, RECENT_ACTIVITY_ROWS), (items) => {
        const known = new Set(items.map((r) => r._id));
        const added = fresh.filter((r) => !known.has(r._id));
        return added.length ? [...items, ...added].sort(newestFirst).slice(0, RECENT_ACTIVITY_ROWS) : null;
      }),
    ),
  );
}

/** A uid's newest audit rows, newest first (at most `RECENT_ACTIVITY_ROWS`). */
export async function recentActivity(db: Db, uid: string, limit: number): Promise<AuditRow[]> {
  const n = Math.min(limit, RECENT_ACTIVITY_ROWS);
  if (!(await usesTimelinePages(db))) return queryRecent(db, uid, n);
  return ((await listOf(db, uid).read()) ?? (await queryRecent(db, uid, n))).slice(0, n);
}
