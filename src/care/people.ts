// Aides (and, for the family's own entries, who wrote them) in words for the family: the display name the agency sent, else "an aide from <agency>";
// never the agency's internal caregiver id.
import type { Db } from 'mongodb';
import { aideName, authorOf, type AideNamer } from '../family/careEventTypes.js';
import type { CareEventRecord } from '../family/records.js';
import { institutionName } from '../partner/records.js';

/** Words for the aide of an event: its name as sent, else the agency's, from the names of the agencies that sent `events`. */
export async function aideNamer(db: Db, events: readonly CareEventRecord[]): Promise<AideNamer> {
  const ids = [...new Set(events.flatMap((e) => (e.institutionId ? [e.institutionId] : [])))];
  const names = new Map(await Promise.all(ids.map(async (id) => [id, await institutionName(db, id)] as const)));
  return (e) => {
    if (e.source === 'family') return authorOf(e);
    const name = aideName(e);
    if (name) return name;
    const agency = e.institutionId ? names.get(e.institutionId) : null;
    return agency ? `an aide from ${agency}` : 'an aide from the agency';
  };
}
