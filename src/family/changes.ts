// Changes a family makes to its own records: a person's time zone, the workspace's name, a loved
// one's names, and removing a loved one. Callers have already re-derived the workspace from the
// signed-in caller; every write here is scoped by that workspace as well.
import type { Collection, Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import { familyChanged, WORKSPACE_COLLECTIONS, type LovedOneRecord, type UserRecord, type WorkspaceRecord } from './records.js';

const users = (db: Db): Collection<UserRecord> => db.collection(WORKSPACE_COLLECTIONS.users);
const workspaces = (db: Db): Collection<WorkspaceRecord> => db.collection(WORKSPACE_COLLECTIONS.workspaces);
const lovedOnes = (db: Db): Collection<LovedOneRecord> => db.collection(WORKSPACE_COLLECTIONS.lovedOnes);

/** The zone as given, when this runtime knows it (under that name or an older one); else null.
 *  Kept as given: the browser says Asia/Kolkata where this runtime's list still says Asia/Calcutta. */
export function knownZone(zone: string): string | null {
  if (!zone || zone.length > 64) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone }).format(0);
    return zone;
  } catch {
    return null;
  }
}

/** The zone new medications, appointments and tasks of a loved one are meant in, unless one names
 *  another: the loved one's, else (a loved one from before they had one) the person's own, else UTC. */
export const plannedZone = (lovedOne: { timeZone?: string | undefined }, personZone: string | null | undefined): string =>
  (lovedOne.timeZone && knownZone(lovedOne.timeZone)) || (personZone && knownZone(personZone)) || 'UTC';

/** The zone a person chose (or their browser gave at first sign-in); null when there is none yet. */
export async function userTimeZone(db: Db, uid: string): Promise<string | null> {
  const user = await users(db).findOne({ _id: uid }, { projection: { timeZone: 1 } });
  return (user?.timeZone && knownZone(user.timeZone)) || null;
}

/** Set the zone a person's times are shown in; false when it is not a known zone. */
export async function setUserTimeZone(db: Db, uid: string, zone: string): Promise<boolean> {
  const known = knownZone(zone);
  if (!known) return false;
  await users(db).updateOne({ _id: uid }, { $set: { timeZone: known } });
  return true;
}

export async function renameWorkspace(db: Db, credentials: Credentials, workspaceId: string, name: string): Promise<void> {
  await workspaces(db).updateOne({ _id: workspaceId }, { $set: { name } });
  await familyChanged(credentials, 'workspace', [workspaceId]);
}

/** New names for a loved one, and their time zone when given (what is already planned keeps its
 *  own); the inbox address stays, so mail already forwarded keeps arriving. */
export async function renameLovedOne(
  db: Db,
  credentials: Credentials,
  workspaceId: string,
  lovedOneId: string,
  name: { firstName: string; lastName: string; timeZone?: string | undefined },
): Promise<boolean> {
  const r = await lovedOnes(db).updateOne(
    { _id: lovedOneId, workspaceId },
    {
      $set: {
        firstName: name.firstName,
        lastName: name.lastName,
        displayName: `${name.firstName} ${name.lastName}`,
        ...(name.timeZone ? { timeZone: name.timeZone } : {}),
      },
    },
  );
  if (r.matchedCount === 1) await familyChanged(credentials, 'lovedOne', [lovedOneId]);
  return r.matchedCount === 1;
}

/** Names compared the way people read them: case, accents' composition and runs of spaces ignored. */
const sameName = (s: string) => s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

/** A loved one of the workspace with the same first and last name, other than `except`. */
export async function duplicateLovedOne(
  db: Db,
  workspaceId: string,
  name: { firstName: string; lastName: string },
  except?: string,
): Promise<LovedOneRecord | null> {
  const all = await lovedOnes(db).find({ workspaceId }).toArray();
  return all.find((l) => l._id !== except && sameName(l.firstName) === sameName(name.firstName) && sameName(l.lastName) === sameName(name.lastName)) ?? null;
}

/** Remove the loved one's record (their inbox address stops taking mail at once); their events,
 *  inbox and partner links are removed by their owners' functions. */
export async function deleteLovedOne(db: Db, credentials: Credentials, workspaceId: string, lovedOneId: string): Promise<boolean> {
  const deleted = (await lovedOnes(db).deleteOne({ _id: lovedOneId, workspaceId })).deletedCount === 1;
  // Also when nothing was deleted: a removal repeated after a crash still reaches every process.
  await familyChanged(credentials, 'lovedOne', [lovedOneId]);
  return deleted;
}
