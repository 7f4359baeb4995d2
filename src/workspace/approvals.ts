// A change an assistant asked for, approved by the person in Settings → "Waiting for you": made
// there and then as their assistant would have made it, once, and recorded in the MCP audit log.
import type { Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import type { Bus } from '../bus/types.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Timelines } from '../store/timeline/port.js';
import { auditWriter } from './audit.js';
import { workspaceServer, type WorkspaceSeams } from './handler.js';
import { PendingStore } from './writeStore.js';

/** How an approval ended: made; refused with a plain reason (stale, or the tool said no); or nothing waiting. */
export type Approval = { outcome: 'made' } | { outcome: 'approved' } | { outcome: 'refused'; reason: string; stale: boolean } | { outcome: 'gone' };

export interface Approvals {
  /** The person `uid` (named `by`) approves their waiting change `id`. */
  approve(uid: string, id: string, by: string, request: { requestId: string; clientIp: string }): Promise<Approval>;
}

export function workspaceApprovals(
  config: Config,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  log: Logger,
  bus: Bus,
  seams: WorkspaceSeams = {},
): Approvals {
  const { server } = workspaceServer(config, db, credentials, timelines, log, bus, seams);
  const pending = new PendingStore(db);
  const audit = auditWriter(timelines, bus, config.busNamespace, log);
  const clock = seams.clock ?? Date.now;
  return {
    async approve(uid, id, by, request) {
      const row = await pending.take(uid, id, clock());
      if (!row) return { outcome: 'gone' };
      const started = performance.now();
      let made;
      try {
        // A change stored before changes were made on approval is left for the assistant's next call.
        made =
          row.args !== undefined && row.caller
            ? await server.applyApproved(
                { tool: row.tool, args: JSON.parse(row.args), caller: row.caller, ...(row.basis !== undefined ? { basis: row.basis } : {}) },
                request,
              )
            : undefined;
      } catch (err) {
        await pending.untake(id, 'waiting').catch(() => undefined);
        throw err;
      }
      if (!made) {
        await pending.untake(id, 'approved');
        return { outcome: 'approved' };
      }
      const caller = row.caller!;
      await audit
        .record([
          {
            uid: row.uid,
            tenant: row.tenant,
            method: 'tools/call',
            tool: row.tool,
            success: made.made,
            durationMs: Math.round(performance.now() - started),
            authMethod: caller.via,
            ...(caller.keyId ? { keyId: caller.keyId } : {}),
            ...(caller.clientId ? { clientId: caller.clientId } : {}),
            targets: made.made ? made.targets.slice(0, 20) : [],
            confirmation: 'approved_in_app',
            approvedBy: by,
            at: new Date(),
          },
        ])
        .catch((err: unknown) => log.error({ err }, 'audit append failed'));
      if (!made.made) {
        // Nothing was made: the change is gone from the list, and the assistant is asked afresh next time.
        await pending.used(id);
        return { outcome: 'refused', reason: made.reason, stale: made.stale };
      }
      await pending.applied(id, made.result);
      return { outcome: 'made' };
    },
  };
}
