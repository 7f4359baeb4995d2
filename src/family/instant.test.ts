// The one wall-time conversion on both of New York's 2026 daylight-saving changes: the skipped hour
// by each rule, the repeated hour as its first occurrence, and the hours either side.
import { describe, expect, it } from 'vitest';
import { wallTimeToInstant } from './instant.js';

const NY = 'America/New_York';
const at = (day: string, time: string, skipped: 'refuse' | 'after' = 'refuse') => wallTimeToInstant(NY, day, time, skipped)?.toISOString() ?? null;

describe('wall time to instant - daylight-saving changes in New York', () => {
  it('when the clocks spring forward on Mar 8, 2026, then 2:30 am is refused or read an hour later by rule, and the times either side keep their offsets', () => {
    expect(at('2026-03-08', '01:59')).toBe('2026-03-08T06:59:00.000Z');
    expect(at('2026-03-08', '02:30', 'refuse')).toBeNull();
    expect(at('2026-03-08', '02:30', 'after')).toBe('2026-03-08T07:30:00.000Z');
    expect(at('2026-03-08', '03:00')).toBe('2026-03-08T07:00:00.000Z');
    expect(at('2026-03-08', '00:00', 'after')).toBe('2026-03-08T05:00:00.000Z');
  });

  it('when the clocks fall back on Nov 1, 2026, then the repeated 1:30 am is its first occurrence (EDT) by either rule, and 2 am is EST', () => {
    expect(at('2026-11-01', '00:30')).toBe('2026-11-01T04:30:00.000Z');
    expect(at('2026-11-01', '01:30', 'refuse')).toBe('2026-11-01T05:30:00.000Z');
    expect(at('2026-11-01', '01:30', 'after')).toBe('2026-11-01T05:30:00.000Z');
    expect(at('2026-11-01', '02:00')).toBe('2026-11-01T07:00:00.000Z');
  });

  it('when the day or the time is not a real one, then there is no instant', () => {
    expect(at('2026-02-30', '10:00', 'after')).toBeNull();
    expect(at('2026-11-01', '24:00', 'after')).toBeNull();
    expect(at('2026-11-1', '10:00', 'after')).toBeNull();
  });
});
