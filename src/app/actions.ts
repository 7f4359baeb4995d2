// What the app's pages and JSON API both do: the form inputs they accept (and what a caregiver is
// told when one is wrong), revoking a key. Creating a workspace is ./creations.ts.
import { z } from 'zod';
import type { SessionCaller } from '../auth/sessions.js';
import { ApiProblem } from '../http/reply.js';
import { KeyNotFound, type KeyStore } from '../keys/keys.js';
import { knownZone } from '../family/changes.js';

const name = z.string().trim().min(1, 'is required').max(60, 'must be at most 60 characters');
/** A loved one's IANA zone; left out (or blank in a form), the adding caregiver's own. */
const lovedOneZone = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z
    .string()
    .trim()
    .refine((zone) => knownZone(zone) !== null, 'must be an IANA time zone, e.g. America/New_York')
    .optional(),
);
export const workspaceInput = z.object({
  familyName: z.string().trim().min(1, 'is required').max(120, 'must be at most 120 characters'),
  firstName: name,
  lastName: name,
  timeZone: lovedOneZone,
});
export const lovedOneInput = z.object({ firstName: name, lastName: name, timeZone: lovedOneZone });
export const keyInput = z.object({
  name: z.string().trim().max(60, 'must be at most 60 characters').optional().default(''),
  // Read-only unless the person chooses writing: an assistant adds to the record only when asked to.
  access: z.enum(['read', 'read-write'], { error: 'must be "read" or "read-write"' }).optional().default('read'),
});
export const workspaceNameInput = z.object({ familyName: workspaceInput.shape.familyName });

/** What each form field is called in a sentence. */
const FIELD_WORDS: Record<string, string> = {
  familyName: 'the family name',
  firstName: 'the first name',
  lastName: 'the last name',
  name: 'the key name',
  timeZone: 'the time zone',
};

/** Each problem as a sentence for a caregiver: "Please enter the first name." */
export function friendlyIssues(err: z.ZodError): string[] {
  return err.issues.map((issue) => {
    const field = FIELD_WORDS[String(issue.path[0] ?? '')] ?? 'this field';
    if (issue.code === 'too_small' || (issue.code === 'invalid_type' && issue.input === undefined)) return `Please enter ${field}.`;
    if (issue.code === 'too_big') return `${field[0]!.toUpperCase()}${field.slice(1)} can be at most ${String(issue.maximum)} characters.`;
    if (issue.code === 'custom') return `${field[0]!.toUpperCase()}${field.slice(1)} ${issue.message}.`;
    return `Please check ${field}.`;
  });
}

export async function revokeKey(keys: KeyStore, caller: SessionCaller, keyId: string) {
  try {
    return await keys.revoke(caller.uid, keyId);
  } catch (err) {
    if (err instanceof KeyNotFound) throw new ApiProblem(404, 'NOT_FOUND', 'No such key on your account', 'GET /api/keys lists your keys.');
    throw err;
  }
}
