// What every care page shares: the view it is rendered for, its tabs and the note naming the zone.
import type { SessionCaller } from '../auth/sessions.js';
import type { LovedOneRecord } from '../family/records.js';
import { zoneAside, type Clock } from './time.js';

export interface CareView {
  caller: SessionCaller;
  lovedOne: LovedOneRecord;
  clock: Clock;
  query: Record<string, string>;
  now: Date;
}

/** The tabs every care page carries, the current one marked. */
export function CareNav({ lovedOne, current }: { lovedOne: LovedOneRecord; current: 'timeline' | 'medications' | 'vitals' | 'appointments' | 'tasks' }) {
  const base = `/care/${encodeURIComponent(lovedOne._id)}`;
  const tabs = [
    ['timeline', base, 'Timeline'],
    ['medications', `${base}/medications`, 'Medications'],
    ['vitals', `${base}/vitals`, 'Vital signs'],
    ['appointments', `${base}/appointments`, 'Appointments'],
    ['tasks', `${base}/tasks`, 'Tasks'],
  ] as const;
  return (
    <nav class="tabs" aria-label={`${lovedOne.displayName}'s care`}>
      {tabs.map(([key, href, label]) => (
        <a href={href} aria-current={key === current ? 'page' : undefined}>
          {label}
        </a>
      ))}
      <a href={`/inbox/${encodeURIComponent(lovedOne._id)}`}>Inbox</a>
      <a href={`${base}/portal`}>Health portals</a>
    </nav>
  );
}

/** "Times are in America/New_York (EST)." */
export const ZoneNote = ({ clock, now }: { clock: Clock; now: Date }) => (
  <p class="muted zone" id="zone-note">
    Times are in {clock.zone}
    {zoneAside(clock, now)}. <a href="/settings#time-zone">Change the time zone</a>
  </p>
);

/** Page sizes and periods the care pages accept from their query. */
export const PERIODS: Record<string, { days: number; label: string }> = {
  '7': { days: 7, label: 'Last 7 days' },
  '30': { days: 30, label: 'Last 30 days' },
  '90': { days: 90, label: 'Last 90 days' },
  '365': { days: 365, label: 'Last year' },
};

/** The chosen period (30 days unless another listed one is asked for). */
export function periodOf(query: Record<string, string>, now: Date): { key: string; since: Date } {
  const key = query.days && PERIODS[query.days] ? query.days : '30';
  return { key, since: new Date(now.getTime() - PERIODS[key]!.days * 86_400_000) };
}

/** A small GET form choosing the period: works without script. */
export function PeriodForm({ action, current }: { action: string; current: string }) {
  return (
    <form class="filters" method="get" action={action}>
      <label for="days">Period</label>
      <select id="days" name="days">
        {Object.entries(PERIODS).map(([key, p]) => (
          <option value={key} selected={key === current}>
            {p.label}
          </option>
        ))}
      </select>
      <button type="submit" class="secondary">
        Show
      </button>
    </form>
  );
}
