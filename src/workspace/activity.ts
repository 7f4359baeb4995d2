// Settings' recent MCP activity: the audit log read as one timeline per uid (src/store/timeline),
// so the listing costs what one person's rows cost on either store. The log itself stays
// append-only and complete.
import type { Stream, Timelines } from '../store/timeline/port.js';
import { MCP_AUDIT_LOG, type AuditRow } from './auditRow.js';

/** The most rows a listing returns. */
export const RECENT_ACTIVITY_ROWS = 50;

/** By day on the embedded store: an assistant can make hundreds of requests a day, and Settings reads the newest. */
export const ACTIVITY_STREAM: Stream<AuditRow> = { name: 'activity', records: MCP_AUDIT_LOG, owner: 'uid', time: 'at', period: 'day' };

/** Store audit rows; a row already stored (its id is its `_id`) is no failure: a redelivery is harmless. */
export async function recordActivity(timelines: Timelines, rows: readonly AuditRow[]): Promise<void> {
  await timelines.of(ACTIVITY_STREAM).append(rows);
}

/** A uid's newest audit rows, newest first (at most `RECENT_ACTIVITY_ROWS`). */
export async function recentActivity(timelines: Timelines, uid: string, limit: number): Promise<AuditRow[]> {
  return (await timelines.of(ACTIVITY_STREAM).list(uid, { limit: Math.min(limit, RECENT_ACTIVITY_ROWS) })).records;
}
