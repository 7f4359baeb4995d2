// The app's JSON API behind the session cookie: the workspace, its loved ones, MCP API keys and
// recent MCP activity, for the app's own pages and in-app agents.
import type { Db } from 'mongodb';
import { duplicateLovedOne, knownZone } from '../family/changes.js';
import type { AuditLog } from '../workspace/audit.js';
import { canManage } from '../family/circle.js';
import { lovedOneView, type WorkspaceStore } from '../family/records.js';
import { ApiProblem, json } from '../http/reply.js';
import { TooManyKeys, type KeyStore } from '../keys/keys.js';
import { describeIssues } from '../rpc/envelope.js';
import { keyInput, lovedOneInput, revokeKey, workspaceInput } from './actions.js';
import { isFormToken, WorkspaceCreations } from './creations.js';
import type { AppHelpers } from './helpers.js';
import type { AppRouteBuilder } from './routeTable.js';

export function appApiRoutes(routes: AppRouteBuilder, helpers: AppHelpers, deps: { keys: KeyStore; audit: AuditLog; store: WorkspaceStore; db: Db }): void {
  const { requireCaller } = helpers;
  const { keys, audit, store, db } = deps;
  const creations = new WorkspaceCreations(db, store);
  routes
    .on('apiWorkspace', 'GET', async (req) => {
      const caller = await requireCaller(req);
      const membership = await store.workspaceOf(caller.uid);
      if (!membership) return json(200, { workspace: null });
      const lovedOnes = await store.lovedOnesOf(membership.workspace._id);
      return json(200, {
        workspace: {
          id: membership.workspace._id,
          name: membership.workspace.name,
          role: membership.member.role,
          familyMemberCount: await store.memberCount(membership.workspace._id),
        },
        lovedOnes: lovedOnes.map(lovedOneView),
      });
    })
    .on('apiWorkspace', 'POST', async (req) => {
      const caller = await requireCaller(req);
      const hasWorkspace = () => new ApiProblem(409, 'BAD_REQUEST', 'You already have a family workspace', 'GET /api/workspace shows it.');
      const key = req.headers['idempotency-key']?.trim();
      if (key !== undefined && !isFormToken(key))
        throw new ApiProblem(
          400,
          'VALIDATION_FAILED',
          'Idempotency-Key: must be 1-200 printable characters without spaces',
          'Send one new key per workspace you mean to create, and the same key when you retry.',
        );
      const input = workspaceInput.safeParse(req.body ?? {});
      if (!input.success) {
        if (await store.workspaceOf(caller.uid)) throw hasWorkspace();
        throw new ApiProblem(
          400,
          'VALIDATION_FAILED',
          `Invalid body: ${describeIssues(input.error)}`,
          "Send familyName (1-120 chars), firstName and lastName (1-60 chars each), and optionally the loved one's timeZone (an IANA name such as America/New_York; default yours).",
        );
      }
      // With an Idempotency-Key, a retry of the same request gets the first answer, not a 409.
      const outcome = await creations.create(caller, input.data, key);
      if (outcome === 'has_workspace') throw hasWorkspace();
      return json(201, outcome.created);
    })
    .on('apiWorkspaceLovedOnes', 'POST', async (req) => {
      const caller = await requireCaller(req);
      const membership = await store.workspaceOf(caller.uid);
      if (!membership) throw new ApiProblem(404, 'NOT_FOUND', 'You have no family workspace yet', 'POST /api/workspace first.');
      if (!canManage(membership.member))
        throw new ApiProblem(403, 'FORBIDDEN', 'Only the primary caregiver can add a loved one', 'Ask the primary caregiver of your family workspace.');
      const input = lovedOneInput.safeParse(req.body ?? {});
      if (!input.success)
        throw new ApiProblem(
          400,
          'VALIDATION_FAILED',
          `Invalid body: ${describeIssues(input.error)}`,
          'Send firstName and lastName (1-60 chars each), optionally timeZone (an IANA name such as America/New_York; default yours), and allowDuplicate: true to add a second loved one of the same name.',
        );
      const existing =
        (req.body as { allowDuplicate?: unknown } | undefined)?.allowDuplicate === true
          ? null
          : await duplicateLovedOne(db, membership.workspace._id, input.data);
      if (existing)
        throw new ApiProblem(
          409,
          'BAD_REQUEST',
          `${existing.displayName} is already in this workspace`,
          'Send "allowDuplicate": true to add a second loved one of the same name.',
        );
      // Their zone, unless given, is the adding caregiver's.
      const timeZone = input.data.timeZone ?? (knownZone((await store.user(caller.uid))?.timeZone ?? '') || undefined);
      const l = await store.addLovedOne(membership.workspace._id, { ...input.data, timeZone }, false);
      return json(201, { id: l._id, name: l.displayName, inboxAddress: l.inboxAddress, ...(l.timeZone ? { timeZone: l.timeZone } : {}) });
    })
    .on('apiKeys', 'GET', async (req) => json(200, { keys: await keys.list((await requireCaller(req)).uid) }))
    .on('apiKeys', 'POST', async (req) => {
      const caller = await requireCaller(req);
      const input = keyInput.safeParse(req.body ?? {});
      if (!input.success)
        throw new ApiProblem(
          400,
          'VALIDATION_FAILED',
          `Invalid body: ${describeIssues(input.error)}`,
          'Send {"name": "<up to 60 chars>", "access": "read" | "read-write"} or an empty object (read-only).',
        );
      try {
        const minted = await keys.mint(caller.uid, input.data.name, input.data.access);
        return json(201, { apiKey: minted.plaintext, key: minted.key, note: 'This is the only time the key is shown.' }, { 'cache-control': 'no-store' });
      } catch (err) {
        if (err instanceof TooManyKeys) throw new ApiProblem(400, 'VALIDATION_FAILED', err.message, 'Revoke a key you no longer use.');
        throw err;
      }
    })
    .on('apiKeysRevoke', 'POST', async (req, params) => {
      const caller = await requireCaller(req);
      return json(200, { key: await revokeKey(keys, caller, params.id ?? '') });
    })
    .on('apiActivity', 'GET', async (req) => {
      const caller = await requireCaller(req);
      const rows = await audit.recent(caller.uid, 50);
      return json(200, {
        activity: rows.map((r) => ({
          at: r.at.toISOString(),
          method: r.method,
          tool: r.tool,
          success: r.success,
          durationMs: r.durationMs,
          via: r.authMethod,
        })),
      });
    });
}
