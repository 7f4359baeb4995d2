// The MCP audit log: one appended row per authenticated, parsed JSON-RPC message. Never the
// arguments or results. No code path updates or deletes a row.
import type { Collection, Db, IndexDescription } from 'mongodb';
import { newId } from '../store/ids.js';

export const MCP_AUDIT_LOG = 'mcp_audit_log';
export const AUDIT_INDEXES: IndexDescription[] = [{ key: { uid: 1, at: -1 }, name: 'by_uid_time' }];

export type AuthMethod = 'api-key' | 'session' | 'oauth';

export interface AuditRow {
  _id: string;
  uid: string;
  tenant: string;
  method: string;
  tool: string | null;
  success: boolean;
  durationMs: number;
  authMethod: AuthMethod;
  at: Date;
}

export class AuditLog {
  private readonly rows: Collection<AuditRow>;
  constructor(db: Db) {
    this.rows = db.collection<AuditRow>(MCP_AUDIT_LOG);
  }

  async append(rows: Omit<AuditRow, '_id'>[]): Promise<void> {
    if (rows.length) await this.rows.insertMany(rows.map((r) => ({ _id: newId('aud'), ...r })));
  }

  recent(uid: string, limit = 20): Promise<AuditRow[]> {
    return this.rows.find({ uid }).sort({ at: -1 }).limit(limit).toArray();
  }
}
