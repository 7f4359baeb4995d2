// The reading ranges a family sets for a loved one, per vital kind and unit: a reading outside
// one is worth an alert. carecircle states no clinical norms: with no range set, nothing alerts.
import type { Collection, Db, IndexDescription } from 'mongodb';
import { HOME_VITALS, homeVitalLabel } from '../family/entries.js';
import { unitText, vitalKind } from '../family/vitalKinds.js';

export const ALERT_RANGES = 'alert_ranges';
export const RANGE_INDEXES: Record<string, IndexDescription[]> = { [ALERT_RANGES]: [{ key: { lovedOneId: 1 }, name: 'by_loved_one' }] };

export interface ReadingRange {
  /** A vital kind's key ("pulse", "blood_pressure": the first value, systolic). */
  vital: string;
  /** The unit as written for people ("/min", "mmHg"); a reading in another unit is not compared. */
  unit: string;
  low?: number;
  high?: number;
}

interface RangeRecord {
  _id: string; // `${lovedOneId}:${vital}`
  lovedOneId: string;
  workspaceId: string;
  range: ReadingRange;
  setBy: string;
  updatedAt: Date;
}

export class RangeInvalid extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'RangeInvalid';
  }
}

/** The kinds a range can be set for: the readings a family records, each with its plausible span. */
export const RANGE_VITALS = Object.keys(HOME_VITALS);

/** A checked range: a known kind and unit, numbers inside what a real reading can be, low below high. */
export function parseRange(vital: string, unit: string, low: number | undefined, high: number | undefined): ReadingRange {
  const spec = HOME_VITALS[vital];
  if (!spec) throw new RangeInvalid('vital', `must be one of ${RANGE_VITALS.join(', ')}`);
  const plausible = spec.units[unit];
  if (!plausible) throw new RangeInvalid('unit', `must be one of ${Object.keys(spec.units).join(', ')} for ${homeVitalLabel(vital)}`);
  if (low === undefined && high === undefined) throw new RangeInvalid('low', 'give a low or a high value (or both)');
  for (const [field, v] of [
    ['low', low],
    ['high', high],
  ] as const) {
    if (v === undefined) continue;
    if (!Number.isFinite(v)) throw new RangeInvalid(field, 'must be a number');
    if (v < plausible[0] || v > plausible[1])
      throw new RangeInvalid(
        field,
        `must be between ${plausible[0]} and ${plausible[1]} ${unit}, where a real ${homeVitalLabel(vital).toLowerCase()} reading falls`,
      );
  }
  if (low !== undefined && high !== undefined && low >= high) throw new RangeInvalid('low', `must be below the high value (${high})`);
  return { vital, unit, ...(low !== undefined ? { low } : {}), ...(high !== undefined ? { high } : {}) };
}

/** The range a reading falls outside of, if any: same kind, same unit. */
export function outsideRange(ranges: readonly ReadingRange[], payload: Record<string, unknown>): ReadingRange | null {
  const kind = vitalKind(payload.vital_type).key;
  const unit = unitText(payload.unit);
  const value = typeof payload.value === 'number' ? payload.value : Number.NaN;
  if (!Number.isFinite(value)) return null;
  const range = ranges.find((r) => r.vital === kind && r.unit === unit);
  if (!range) return null;
  return (range.low !== undefined && value < range.low) || (range.high !== undefined && value > range.high) ? range : null;
}

export class RangeStore {
  private readonly rows: Collection<RangeRecord>;

  constructor(db: Db) {
    this.rows = db.collection(ALERT_RANGES);
  }

  async of(lovedOneId: string): Promise<ReadingRange[]> {
    return (await this.rows.find({ lovedOneId }).sort({ _id: 1 }).toArray()).map((r) => r.range);
  }

  async set(lovedOne: { _id: string; workspaceId: string }, range: ReadingRange, setBy: string, now = new Date()): Promise<void> {
    const r = parseRange(range.vital, range.unit, range.low, range.high);
    await this.rows.updateOne(
      { _id: `${lovedOne._id}:${r.vital}` },
      { $set: { lovedOneId: lovedOne._id, workspaceId: lovedOne.workspaceId, range: r, setBy, updatedAt: now } },
      { upsert: true },
    );
  }

  async clear(lovedOneId: string, vital: string): Promise<void> {
    await this.rows.deleteOne({ _id: `${lovedOneId}:${vital}` });
  }
}
