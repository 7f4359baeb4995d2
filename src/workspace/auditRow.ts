// The MCP audit log's row and collection, apart from its writer so the activity listing can share them.
import type { IndexDescription } from 'mongodb';

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
  /** The API key used (its id), so Settings can name it; absent on rows of other callers. */
  keyId?: string;
  /** The OAuth client of a connected app, so Settings can name the app. */
  clientId?: string;
  /** A write tool call: the records it added or changed (ids). */
  targets?: string[];
  /** A write tool call: how the person confirmed it (not_needed, asked, confirmed, declined, cancelled, unanswered, refused, waiting_in_app, approved_in_app, declined_in_app). */
  confirmation?: string;
  /** A write made on the person's approval in the app: who approved it (their name). */
  approvedBy?: string;
  /** A write answered with its first result, not applied again. */
  replayed?: boolean;
  at: Date;
}
