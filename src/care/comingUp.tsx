// "Coming up" on a loved one's page: the next appointments and the open tasks, a few lines each,
// with links to the full lists.
import type { Db } from 'mongodb';
import type { Clock } from './time.js';
import type { LovedOneRecord } from '../family/records.js';
import { PlansStore, type AppointmentRecord, type TaskRecord } from '../family/plans.js';

const SHOWN = 3;

export interface ComingUp {
  appointments: AppointmentRecord[];
  tasks: TaskRecord[];
}

export async function comingUp(db: Db, lovedOneId: string, now: Date): Promise<ComingUp> {
  const plans = new PlansStore(db);
  const [appointments, tasks] = await Promise.all([plans.upcoming(lovedOneId, now, SHOWN), plans.openTasks(lovedOneId, SHOWN)]);
  return { appointments, tasks };
}

export function ComingUpBlock({ plans, lovedOne, clock }: { plans: ComingUp; lovedOne: LovedOneRecord; clock: Clock }) {
  const base = `/care/${encodeURIComponent(lovedOne._id)}`;
  return (
    <section class="card coming-up" id="coming-up" aria-labelledby="coming-up-title">
      <h2 id="coming-up-title">Coming up</h2>
      <h3>Appointments</h3>
      {plans.appointments.length ? (
        <ul class="doses" id="coming-appointments">
          {plans.appointments.map((a) => (
            <li>
              <time dateTime={a.start.toISOString()}>{clock.dayTime(a.start)}</time> <strong>{a.title}</strong>
              {a.place ? ` at ${a.place}` : ''}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No appointments coming up.</p>
      )}
      <p>
        <a href={`${base}/appointments`}>All appointments</a>
      </p>
      <h3>Open tasks</h3>
      {plans.tasks.length ? (
        <ul class="doses" id="coming-tasks">
          {plans.tasks.map((t) => (
            <li>
              <time dateTime={t.due.toISOString()}>{clock.dayTime(t.due)}</time> <strong>{t.title}</strong>{' '}
              {t.state === 'open' ? '(nobody has taken it yet)' : ''}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No open tasks.</p>
      )}
      <p>
        <a href={`${base}/tasks`}>All tasks</a>
      </p>
    </section>
  );
}
