// What the app's pages and JSON API both do: the form inputs they accept, creating a workspace,
// revoking a key.
import { z } from 'zod';
import type { SessionCaller } from '../auth/sessions.js';
import type { WorkspaceStore } from '../family/records.js';
import { ApiProblem } from '../http/reply.js';
import { KeyNotFound, type KeyStore } from '../keys/keys.js';

const name = z.string().trim().min(1, 'is required').max(60, 'must be at most 60 characters');
export const workspaceInput = z.object({ familyName: z.string().trim().min(1, 'is required').max(120, 'must be at most 120 characters'), firstName: name, lastName: name });
export const lovedOneInput = z.object({ firstName: name, lastName: name });
export const keyInput = z.object({ name: z.string().trim().max(60, 'must be at most 60 characters').optional().default('') });

export async function createWorkspace(store: WorkspaceStore, caller: SessionCaller, input: z.infer<typeof workspaceInput>) {
  const workspace = await store.createWorkspace({ name: input.familyName, owner: caller, sandbox: false });
  const lovedOne = await store.addLovedOne(workspace._id, input, false);
  return { workspace, lovedOne };
}

export async function revokeKey(keys: KeyStore, caller: SessionCaller, keyId: string) {
  try {
    return await keys.revoke(caller.uid, keyId);
  } catch (err) {
    if (err instanceof KeyNotFound) throw new ApiProblem(404, 'NOT_FOUND', 'No such key on your account', 'GET /api/keys lists your keys.');
    throw err;
  }
}
