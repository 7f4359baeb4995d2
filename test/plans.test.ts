// Appointments and shared tasks over real HTTP: the app's forms (303 after a post, refusals that keep
// what was typed and name the field), the private calendar feed read back with an independent
// iCalendar parser (ical.js), rotating its secret, two members taking one task at once, a reader's
// 403, foreign ids, and the workspace MCP tools.
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyChanged, WORKSPACE_COLLECTIONS, WorkspaceStore, type MemberAccess } from '../src/family/records.js';
import { instantToWall, wallToInstant } from '../src/family/planInput.js';
import { RPC } from '../src/rpc/codes.js';
import { appCall, caregiverWithKey, signIn } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const ZONE = 'America/New_York';
const origin = () => new URL(svc.config.appUrl).origin;
const get = async (cookie: string | null, path: string) => {
  const res = await fetch(`${svc.urls.app}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  return { status: res.status, location: res.headers.get('location'), type: res.headers.get('content-type'), text: await res.text() };
};
const post = async (cookie: string, path: string, body: Record<string, string> = {}) => {
  const res = await fetch(`${svc.urls.app}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), setCookie: res.headers.get('set-cookie')?.split(';')[0], html: await res.text() };
};
const mcp = (key: string, name: string, args: Record<string, unknown>) =>
  postJson(`${svc.config.appUrl}/api/mcp`, rpc('tools/call', { name, arguments: args }), { authorization: `Bearer ${key}` });
const structured = (res: { json: any }) => res.json.result.structuredContent ?? JSON.parse(res.json.result.content.at(-1).text);

/** A day `ahead` days from now in New York, as the form's date input sends it. */
const dayAhead = (ahead: number) => instantToWall(ZONE, new Date(Date.now() + ahead * 86_400_000)).day;

let n = 0;
/** A caregiver's workspace with a second member who may write (or only read). */
async function family(access: MemberAccess = 'write') {
  n++;
  const carer = await caregiverWithKey(svc, `carer${n}.${Date.now()}@example.com`, { firstName: 'Rosa', lastName: 'Rivera' });
  const email = `sib${n}.${Date.now()}@example.com`;
  const cookie = await signIn(svc, email, `Sam ${n}`);
  const db = svc.store.db;
  const user = await db.collection(WORKSPACE_COLLECTIONS.users).findOne<{ _id: string }>({ email });
  const uid = user!._id;
  const ws = new WorkspaceStore(db, svc.credentials, svc.config.inboxDomain, svc.timelines);
  await ws.addMember(carer.workspaceId, { uid, email }, 'family_member');
  await db.collection(WORKSPACE_COLLECTIONS.members).updateOne({ _id: `${carer.workspaceId}:${uid}` } as never, { $set: { access } });
  await familyChanged(svc.credentials, 'member', [uid]);
  const key = await appCall(svc, cookie, 'POST', '/api/keys', { name: 'sib', access: 'read-write' });
  expect(key.status).toBe(201);
  return { carer, sib: { cookie, uid, apiKey: key.json.apiKey as string } };
}

const appointment = (overrides: Record<string, string> = {}) => ({
  title: 'Cardiology check-up',
  withWhom: 'Dr. Patel',
  place: 'Mercy Heart Clinic, 2nd floor',
  day: dayAhead(3),
  startTime: '14:00',
  endTime: '15:00',
  timeZone: ZONE,
  takenBy: '',
  notes: 'Bring the blood-pressure log',
  ...overrides,
});

/** Turn the feed on (or make a new address): the address, shown once on the page the post leads to. */
async function newFeed(cookie: string): Promise<{ path: string; flash: string }> {
  const on = await post(cookie, '/settings/calendar', { action: 'rotate' });
  expect(on.status).toBe(303);
  expect(on.location).toBe('/settings/calendar');
  const flash = on.setCookie!;
  const shown = await get(`${cookie}; ${flash}`, '/settings/calendar');
  const url = new RegExp(`${svc.config.appUrl}/calendar/[A-Za-z0-9_-]{43}\\.ics`).exec(shown.text)![0];
  return { path: new URL(url).pathname, flash };
}

describe('plans - wall times', () => {
  it('when a New York time is given on either daylight-saving change day, then it is the right instant, and a skipped time is refused', () => {
    expect(wallToInstant(ZONE, '2026-03-08', '14:00')!.toISOString()).toBe('2026-03-08T18:00:00.000Z');
    expect(wallToInstant(ZONE, '2026-03-07', '14:00')!.toISOString()).toBe('2026-03-07T19:00:00.000Z');
    expect(wallToInstant(ZONE, '2026-11-01', '14:00')!.toISOString()).toBe('2026-11-01T19:00:00.000Z');
    expect(wallToInstant(ZONE, '2026-03-08', '02:30')).toBeNull();
  });
});

describe('plans - appointments in the app', () => {
  it('when a member adds, changes and cancels an appointment, then each step is a 303, the list and the loved one’s page show it, and the history names who changed what', async () => {
    const { carer, sib } = await family();
    const base = `/care/${carer.lovedOneId}/appointments`;
    const added = await post(sib.cookie, base, appointment({ takenBy: sib.uid }));
    expect(added.status, added.html).toBe(303);
    expect(added.location).toBe(base);
    const list = await get(carer.cookie, base);
    expect(list.text).toContain('Cardiology check-up');
    expect(list.text).toContain('with Dr. Patel');
    expect(list.text).toMatch(/Sam \d+ is taking Rosa/);
    const home = await get(carer.cookie, `/care/${carer.lovedOneId}`);
    expect(home.text).toContain('id="coming-up"');
    expect(home.text).toContain('Cardiology check-up');

    const id = /appointments\/(apt_[A-Za-z0-9]+)"/.exec(list.text)![1]!;
    const changed = await post(carer.cookie, `${base}/${id}`, appointment({ title: 'Cardiology (moved)', startTime: '16:00', endTime: '16:30' }));
    expect(changed.status, changed.html).toBe(303);
    const edit = await get(carer.cookie, `${base}/${id}`);
    expect(edit.text).toContain('value="Cardiology (moved)"');
    expect(edit.text).toContain('value="16:00"');
    expect(edit.text).toMatch(/added by Sam \d+, in the app/);
    expect(edit.text).toContain('changed by Test Caregiver, in the app');
    expect(edit.text).toContain('before: Cardiology check-up');

    const confirm = await get(carer.cookie, `${base}/${id}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Cancel the appointment');
    expect((await get(carer.cookie, base)).text).toContain('Cardiology (moved)'); // nothing happens on the GET
    const cancelled = await post(carer.cookie, `${base}/${id}/cancel`, { reason: 'Clinic called' });
    expect(cancelled.status).toBe(303);
    expect((await get(carer.cookie, base)).text).not.toContain('Cardiology (moved)');
  });

  it('when a form is refused, then it comes back 400 with what was typed and the field named, and a time too far ahead states the bound', async () => {
    const { carer, sib } = await family();
    const base = `/care/${carer.lovedOneId}/appointments`;
    const late = await post(sib.cookie, base, appointment({ day: dayAhead(900), notes: 'keep <this>' }));
    expect(late.status).toBe(400);
    expect(late.html).toContain('The start can be at most 2 years ahead (not after');
    expect(late.html).toContain('value="Cardiology check-up"');
    expect(late.html).toContain('>keep &lt;this></textarea>');
    expect(late.html).toMatch(/id="startTime"[^>]*aria-invalid="true"/);
    // Only the named field is marked: the others carry no aria-invalid at all.
    expect(late.html.match(/aria-invalid="[^"]*"/g)).toEqual(['aria-invalid="true"']);
    const backwards = await post(sib.cookie, base, appointment({ startTime: '15:00', endTime: '14:00', title: '' }));
    expect(backwards.status).toBe(400);
    expect(backwards.html).toContain('Please enter what the appointment is.');
    expect(backwards.html).toContain('The end must be after the start.');
    const zone = await post(sib.cookie, base, appointment({ timeZone: 'Mars/Olympus' }));
    expect(zone.html).toContain('Please give the time zone as a place name');
  });

  it('when a member who may only read posts, then it is 403 with a plain reason; and another family’s ids are 404', async () => {
    const { carer, sib } = await family('read');
    const base = `/care/${carer.lovedOneId}/appointments`;
    const refused = await post(sib.cookie, base, appointment());
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('let you read the family');
    const task = await post(sib.cookie, `/care/${carer.lovedOneId}/tasks`, { title: 'Groceries', dueDay: dayAhead(1), dueTime: '10:00', timeZone: ZONE });
    expect(task.status).toBe(403);
    expect((await get(sib.cookie, base)).status).toBe(200); // reading stays

    const other = await family();
    expect((await post(other.carer.cookie, base, appointment())).status).toBe(404);
    expect((await get(other.carer.cookie, `/care/${carer.lovedOneId}/tasks`)).status).toBe(404);
    expect((await post(carer.cookie, base, appointment())).status).toBe(303);
    const id = /appointments\/(apt_[A-Za-z0-9]+)"/.exec((await get(carer.cookie, base)).text)![1]!;
    // The pages whose only use is a change are refused to a reader as well.
    expect((await get(sib.cookie, `${base}/${id}`)).status).toBe(403);
    expect((await get(sib.cookie, `${base}/${id}/cancel`)).status).toBe(403);
    expect((await post(sib.cookie, `${base}/${id}/cancel`)).status).toBe(403);
    // Another family's appointment under one's own loved one: not found.
    expect((await get(other.carer.cookie, `/care/${other.carer.lovedOneId}/appointments/${id}`)).status).toBe(404);
    expect((await post(other.carer.cookie, `/care/${other.carer.lovedOneId}/appointments/${id}/cancel`)).status).toBe(404);
  });
});

describe('plans - the calendar feed', () => {
  it('when a member turns the feed on, then a calendar app reads the appointment from it with an independent parser; rotating kills the old URL; off kills it too', async () => {
    const { carer, sib } = await family();
    expect(
      (await post(sib.cookie, `/care/${carer.lovedOneId}/appointments`, appointment({ takenBy: sib.uid, title: 'Eye exam; "dilated", bring, glasses' })))
        .status,
    ).toBe(303);

    expect((await get(sib.cookie, '/settings')).text).toContain('href="/settings/calendar"');
    const first = await newFeed(sib.cookie);
    // Shown once: the page again shows only that the feed is on.
    const again = await get(`${sib.cookie}; ${first.flash}`, '/settings/calendar');
    expect(again.text).not.toContain(first.path);
    expect(again.text).toContain('id="feed-on"');

    const feed = await get(null, first.path);
    expect(feed.status).toBe(200);
    expect(feed.type).toBe('text/calendar; charset=utf-8');
    const cal = new ICAL.Component(ICAL.parse(feed.text));
    const events = cal.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect(e.summary).toBe('Rosa Rivera: Eye exam; "dilated", bring, glasses');
    expect(e.location).toBe('Mercy Heart Clinic, 2nd floor');
    expect(e.description).toMatch(/With Dr. Patel\nTaking Rosa Rivera: Sam \d+\nBring the blood-pressure log/);
    expect(e.startDate.toJSDate().toISOString()).toBe(wallToInstant(ZONE, dayAhead(3), '14:00')!.toISOString());
    expect(e.endDate.toJSDate().toISOString()).toBe(wallToInstant(ZONE, dayAhead(3), '15:00')!.toISOString());
    // The secret is stored only as its hash.
    expect(e.component.getFirstPropertyValue('status')).toBe('CONFIRMED');
    // A change raises the sequence, and a cancelled appointment stays in the feed marked so, so a
    // subscribed calendar updates or removes its copy.
    const base = `/care/${carer.lovedOneId}/appointments`;
    const id = /appointments\/(apt_[A-Za-z0-9]+)"/.exec((await get(carer.cookie, base)).text)![1]!;
    expect((await post(carer.cookie, `${base}/${id}`, appointment({ title: 'Eye exam', startTime: '10:00', endTime: '11:00' }))).status).toBe(303);
    expect((await post(carer.cookie, `${base}/${id}/cancel`)).status).toBe(303);
    const after = new ICAL.Component(ICAL.parse((await get(null, first.path)).text)).getAllSubcomponents('vevent');
    expect(after).toHaveLength(1);
    expect(after[0]!.getFirstPropertyValue('status')).toBe('CANCELLED');
    expect(after[0]!.getFirstPropertyValue('sequence')).toBe(2);
    expect(after[0]!.getFirstPropertyValue('uid')).toBe(e.uid);
    expect(new ICAL.Event(after[0]!).summary).toBe('Rosa Rivera: Eye exam');
    const stored = await svc.store.db.collection('plan_calendar_feeds').find({ uid: sib.uid }).toArray();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(first.path.slice('/calendar/'.length, -'.ics'.length));

    const second = await newFeed(sib.cookie);
    expect((await get(null, first.path)).status).toBe(404);
    expect((await get(null, second.path)).status).toBe(200);
    expect((await post(sib.cookie, '/settings/calendar', { action: 'off' })).status).toBe(303);
    expect((await get(null, second.path)).status).toBe(404);
    expect((await get(sib.cookie, '/settings/calendar')).text).toContain('id="feed-off"');
    expect((await get(null, '/calendar/not-a-token.ics')).status).toBe(404);
  });
});

describe('plans - shared tasks', () => {
  it('when a task is added, taken, handed back, taken again and marked done, then the circle sees each state', async () => {
    const { carer, sib } = await family();
    const base = `/care/${carer.lovedOneId}/tasks`;
    expect((await post(carer.cookie, base, { title: 'Drive Mom to cardiology', dueDay: dayAhead(2), dueTime: '13:30', timeZone: ZONE })).status).toBe(303);
    const id = /tasks\/(tsk_[A-Za-z0-9]+)\/take"/.exec((await get(sib.cookie, base)).text)![1]!;
    expect((await get(carer.cookie, `/care/${carer.lovedOneId}`)).text).toContain('Drive Mom to cardiology');
    expect((await post(sib.cookie, `${base}/${id}/take`)).status).toBe(303);
    expect((await get(carer.cookie, base)).text).toMatch(/Sam \d+ is doing this/);
    // Only the one who took it can hand it back.
    const notYours = await post(carer.cookie, `${base}/${id}/hand-back`);
    expect(notYours.status).toBe(409);
    expect(notYours.html).toMatch(/Sam \d+ is doing this, so only they can hand it back/);
    expect((await post(sib.cookie, `${base}/${id}/hand-back`)).status).toBe(303);
    expect((await get(carer.cookie, base)).text).toContain('Nobody has taken this yet');
    expect((await post(carer.cookie, `${base}/${id}/take`)).status).toBe(303);
    expect((await post(carer.cookie, `${base}/${id}/done`)).status).toBe(303);
    const page = await get(sib.cookie, base);
    expect(page.text).toContain('id="tasks-none"');
    expect(page.text.slice(page.text.indexOf('id="tasks-done"'))).toContain('Drive Mom to cardiology');
    expect((await post(sib.cookie, `${base}/${id}/nonsense`)).status).toBe(404);
  });

  it('when two members take one task at the same moment, then exactly one wins and the other is told who has it', async () => {
    const { carer, sib } = await family();
    const base = `/care/${carer.lovedOneId}/tasks`;
    for (let round = 0; round < 5; round++) {
      expect((await post(carer.cookie, base, { title: `Groceries ${round}`, dueDay: dayAhead(1), dueTime: '10:00', timeZone: ZONE })).status).toBe(303);
      const ids = [...(await get(carer.cookie, base)).text.matchAll(/tasks\/(tsk_[A-Za-z0-9]+)\/take"/g)].map((m) => m[1]!);
      const id = ids.at(-1)!;
      const [a, b] = await Promise.all([post(carer.cookie, `${base}/${id}/take`), post(sib.cookie, `${base}/${id}/take`)]);
      expect([a.status, b.status].sort()).toEqual([303, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.html).toContain('already took this task');
      // Close it so the next round's task is the only one with a take button.
      const winner = a.status === 303 ? carer.cookie : sib.cookie;
      expect((await post(winner, `${base}/${id}/done`)).status).toBe(303);
    }
  });
});

describe('plans - workspace MCP tools', () => {
  it('when an assistant adds an appointment and a task and moves the task, then the lists and the weekly summary show them, with who did it', async () => {
    const { carer, sib } = await family();
    const start = wallToInstant(ZONE, dayAhead(2), '09:15')!.toISOString();
    const added = await mcp(sib.apiKey, 'add_appointment', { lovedOneId: carer.lovedOneId, title: 'Dentist', start, timeZone: ZONE, takenBy: sib.uid });
    expect(added.status, added.text).toBe(200);
    const appt = structured(added).appointment;
    expect(appt).toMatchObject({ title: 'Dentist', start, timeZone: ZONE, status: 'scheduled', takenBy: { uid: sib.uid } });
    expect(Date.parse(appt.end) - Date.parse(appt.start)).toBe(3_600_000);
    const listed = structured(await mcp(carer.apiKey, 'list_appointments', { lovedOneId: carer.lovedOneId }));
    expect(listed.appointments.map((a: any) => a.title)).toEqual(['Dentist']);

    const task = structured(await mcp(carer.apiKey, 'add_task', { lovedOneId: carer.lovedOneId, title: 'Pick up prescriptions', due: start })).task;
    expect(task.state).toBe('open');
    const taken = structured(await mcp(sib.apiKey, 'update_task', { lovedOneId: carer.lovedOneId, taskId: task.id, action: 'take' })).task;
    expect(taken).toMatchObject({ state: 'taken', takenBy: { uid: sib.uid } });
    const refused = await mcp(carer.apiKey, 'update_task', { lovedOneId: carer.lovedOneId, taskId: task.id, action: 'take' });
    expect(refused.json.result.isError).toBe(true);
    expect(refused.json.result.content[0].text).toMatch(/Sam \d+ already took this task/);
    const done = structured(await mcp(sib.apiKey, 'update_task', { lovedOneId: carer.lovedOneId, taskId: task.id, action: 'done' })).task;
    expect(done.state).toBe('done');
    expect(structured(await mcp(carer.apiKey, 'list_tasks', { lovedOneId: carer.lovedOneId, state: 'done' })).tasks.map((t: any) => t.title)).toEqual([
      'Pick up prescriptions',
    ]);
    // The app shows who added it and how.
    expect((await get(carer.cookie, `/care/${carer.lovedOneId}/tasks`)).text).toContain("added by Test Caregiver's assistant, an API key");

    const prompt = await postJson(
      `${svc.config.appUrl}/api/mcp`,
      rpc('prompts/get', { name: 'weekly_care_summary', arguments: { lovedOneId: carer.lovedOneId } }),
      {
        authorization: `Bearer ${carer.apiKey}`,
      },
    );
    const text = prompt.json.result.messages[0].content.text as string;
    expect(text).toContain('Appointments in the next 7 days (1):');
    expect(text).toMatch(/: Dentist\n|: Dentist$/);
    // The task done is in the week's record, once; the coming appointment is listed as coming, once.
    expect(text).toMatch(/: Sam \d+ did: Pick up prescriptions/);
    expect(text.match(/Pick up prescriptions/g)).toHaveLength(1);
    expect(text.match(/Dentist/g)).toHaveLength(1);
  });

  it('when arguments are out of bounds, the caller may only read, or the ids are foreign, then each is refused plainly', async () => {
    const { carer, sib } = await family('read');
    const far = new Date(Date.now() + 800 * 86_400_000).toISOString();
    const late = await mcp(carer.apiKey, 'add_task', { lovedOneId: carer.lovedOneId, title: 'x', due: far });
    expect(late.json.error.code).toBe(RPC.INVALID_PARAMS);
    expect(late.json.error.message).toMatch(/due: The due time can be at most 1 year ahead \(not after/);
    const reader = await mcp(sib.apiKey, 'add_appointment', {
      lovedOneId: carer.lovedOneId,
      title: 'x',
      start: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(reader.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(reader.json.error.message).toBe('You can only read this care record');
    expect(structured(await mcp(sib.apiKey, 'list_tasks', { lovedOneId: carer.lovedOneId })).count).toBe(0);

    const other = await family();
    const foreign = await mcp(other.carer.apiKey, 'list_appointments', { lovedOneId: carer.lovedOneId });
    expect(foreign.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    const mine = structured(
      await mcp(carer.apiKey, 'add_task', { lovedOneId: carer.lovedOneId, title: 'Laundry', due: new Date(Date.now() + 86_400_000).toISOString() }),
    ).task;
    const crossed = await mcp(other.carer.apiKey, 'update_task', { lovedOneId: other.carer.lovedOneId, taskId: mine.id, action: 'take' });
    expect(crossed.json.error.code).toBe(RPC.NOT_AUTHORIZED);
  });
});

describe('plans - on the care timeline', () => {
  it('when an appointment is added, then changed, and a task is marked done, then list_care_events and the app timeline show each once, the appointment at its new time', async () => {
    const { carer, sib } = await family();
    const start = wallToInstant(ZONE, dayAhead(4), '09:15')!.toISOString();
    const added = structured(
      await mcp(sib.apiKey, 'add_appointment', {
        lovedOneId: carer.lovedOneId,
        title: 'Cardiology',
        withWhom: 'Dr Lee',
        place: 'Northside',
        start,
        timeZone: ZONE,
        takenBy: sib.uid,
      }),
    ).appointment;
    // Moved in the app to 16:00 the same day.
    const moved = await post(
      carer.cookie,
      `/care/${carer.lovedOneId}/appointments/${added.id}`,
      appointment({ title: 'Cardiology', withWhom: 'Dr Lee', place: 'Northside', day: dayAhead(4), startTime: '16:00', endTime: '17:00', takenBy: sib.uid }),
    );
    expect(moved.status, moved.html).toBe(303);
    const newStart = wallToInstant(ZONE, dayAhead(4), '16:00')!.toISOString();
    const due = new Date(Date.now() + 86_400_000).toISOString();
    const task = structured(await mcp(carer.apiKey, 'add_task', { lovedOneId: carer.lovedOneId, title: 'groceries', due })).task;
    expect((await post(sib.cookie, `/care/${carer.lovedOneId}/tasks/${task.id}/done`)).status).toBe(303);

    const list = async (args: Record<string, unknown> = {}) =>
      structured(await mcp(carer.apiKey, 'list_care_events', { lovedOneId: carer.lovedOneId, ...args })).events;
    const events = await list();
    const appointments = events.filter((e: any) => e.eventType === 'appointment');
    expect(appointments).toHaveLength(1);
    expect(appointments[0]).toMatchObject({
      id: expect.stringMatching(new RegExp(`^${added.id}\\.v1\\.`)),
      source: 'family',
      occurredAt: newStart,
      payload: { title: 'Cardiology', with_whom: 'Dr Lee', place: 'Northside', start: newStart, status: 'scheduled', taken_by: sib.uid },
      author: { name: 'Test Caregiver', via: 'app' },
      supersedes: expect.stringMatching(new RegExp(`^${added.id}\\.v0\\.`)),
    });
    const done = events.filter((e: any) => e.eventType === 'task_done');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ id: `${task.id}.done`, source: 'family', payload: { title: 'groceries' }, author: { uid: sib.uid, via: 'app' } });
    // Stable ids, filtered by type and by who wrote them like every entry.
    expect((await list()).map((e: any) => e.id)).toEqual(events.map((e: any) => e.id));
    expect((await list({ types: ['task_done'] })).map((e: any) => e.id)).toEqual([`${task.id}.done`]);
    expect((await list({ writtenBy: 'family' })).map((e: any) => e.eventType).sort()).toEqual(['appointment', 'task_done']);
    expect(await list({ writtenBy: 'agency' })).toEqual([]);

    // The timeline resource says it in words.
    const resource = await postJson(`${svc.config.appUrl}/api/mcp`, rpc('resources/read', { uri: `carecircle://loved-ones/${carer.lovedOneId}/timeline` }), {
      authorization: `Bearer ${carer.apiKey}`,
    });
    const text = resource.json.result.contents[0].text as string;
    expect(text).toMatch(/: Cardiology with Dr Lee at Northside, Sam \d+ taking Rosa\n/);
    expect(text).toMatch(/: Sam \d+ did: groceries/);
    expect(text.match(/Cardiology/g)).toHaveLength(1);

    // The app's timeline: once, at its new time, under the group's filter and the family's.
    const page = (await get(carer.cookie, `/care/${carer.lovedOneId}`)).text;
    const timeline = page.slice(page.indexOf('id="timeline"'));
    expect(timeline.match(/Cardiology with Dr Lee at Northside/g)).toHaveLength(1);
    expect(timeline).toContain(`id="entry-${appointments[0].id}"`);
    expect(timeline).toContain(`datetime="${newStart}"`);
    expect(timeline).toMatch(/Sam \d+ did: groceries/);
    const plansOnly = (await get(carer.cookie, `/care/${carer.lovedOneId}?type=plans&by=family`)).text;
    expect(plansOnly).toContain('Cardiology with Dr Lee at Northside');
    expect(plansOnly).toMatch(/Sam \d+ did: groceries/);
    const notes = (await get(carer.cookie, `/care/${carer.lovedOneId}?type=notes`)).text;
    expect(notes).not.toContain('did: groceries');
    const agency = (await get(carer.cookie, `/care/${carer.lovedOneId}?by=agency`)).text;
    expect(agency).not.toContain('Cardiology with Dr Lee');

    // Cancelled: still once, saying so.
    expect((await post(carer.cookie, `/care/${carer.lovedOneId}/appointments/${added.id}/cancel`, { reason: 'Clinic called' })).status).toBe(303);
    const after = (await list({ types: ['appointment'] })) as any[];
    expect(after.map((e) => [e.id.split('.')[1], e.payload.status, e.supersedes])).toEqual([['v2', 'cancelled', appointments[0].id]]);
  });
  it('when two members change one appointment at the same moment, then one is saved and the other refused, and the timeline lists it once, as the store holds it', async () => {
    const { carer, sib } = await family();
    const base = `/care/${carer.lovedOneId}/appointments`;
    expect((await post(sib.cookie, base, appointment({ title: 'Eye exam' }))).status).toBe(303);
    const id = /appointments\/(apt_[A-Za-z0-9]+)"/.exec((await get(carer.cookie, base)).text)![1]!;
    for (let round = 0; round < 4; round++) {
      const [a, b] = await Promise.all([
        post(carer.cookie, `${base}/${id}`, appointment({ title: 'Eye exam', startTime: '10:00', endTime: '11:00' })),
        post(sib.cookie, `${base}/${id}`, appointment({ title: 'Eye exam', startTime: '12:00', endTime: '13:00' })),
      ]);
      // One is filed; the other, made from the same version, is refused and says so (unless it came after).
      expect([303, 409]).toContain(a.status);
      expect([303, 409]).toContain(b.status);
      expect([a.status, b.status]).toContain(303);
      for (const r of [a, b]) if (r.status === 409) expect(r.html).toContain('Someone else changed “Eye exam” just now');
      const listed = structured(await mcp(carer.apiKey, 'list_care_events', { lovedOneId: carer.lovedOneId, types: ['appointment'] })).events;
      const stored = await svc.store.db.collection('plan_appointments').findOne<{ eventId: string; start: Date }>({ _id: id } as never);
      expect(listed).toHaveLength(1);
      expect(listed[0].id).toBe(stored!.eventId);
      expect(listed[0].occurredAt).toBe(stored!.start.toISOString());
    }
  });
});

describe("plans - the loved one's time zone", () => {
  it('when a loved one is added without a zone, then theirs is the adding caregiver’s, and new appointments, tasks and medications default to it in the forms and the tools', async () => {
    const email = `zone${Date.now()}@example.com`;
    const cookie = await signIn(svc, email);
    expect((await post(cookie, '/settings/time-zone', { timeZone: 'America/Chicago' })).status).toBe(303);
    const ws = await appCall(svc, cookie, 'POST', '/api/workspace', { familyName: 'Zone family', firstName: 'Ines', lastName: 'Ortiz' });
    expect(ws.status).toBe(201);
    expect(ws.json.lovedOne.timeZone).toBe('America/Chicago');
    const given = await appCall(svc, cookie, 'POST', '/api/workspace/loved-ones', { firstName: 'Tomas', lastName: 'Ortiz', timeZone: 'Europe/Lisbon' });
    expect(given.json).toMatchObject({ timeZone: 'Europe/Lisbon' });
    const lisbon = given.json.id as string;
    const key = (await appCall(svc, cookie, 'POST', '/api/keys', { name: 'z', access: 'read-write' })).json.apiKey as string;

    // The person now lives elsewhere: what is new for Tomas is still meant in Lisbon.
    expect((await post(cookie, '/settings/time-zone', { timeZone: 'Asia/Tokyo' })).status).toBe(303);
    expect((await get(cookie, `/care/${lisbon}/appointments`)).text).toMatch(/id="timeZone"[^>]*value="Europe\/Lisbon"/);
    expect((await get(cookie, `/care/${lisbon}/tasks`)).text).toMatch(/id="timeZone"[^>]*value="Europe\/Lisbon"/);
    expect((await get(cookie, `/care/${lisbon}/medication-list/new`)).text).toMatch(/id="med-timeZone"[^>]*value="Europe\/Lisbon"/);
    const start = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const appt = structured(await mcp(key, 'add_appointment', { lovedOneId: lisbon, title: 'Physio', start })).appointment;
    expect(appt.timeZone).toBe('Europe/Lisbon');
    const task = structured(await mcp(key, 'add_task', { lovedOneId: lisbon, title: 'Laundry', due: start })).task;
    expect(task.timeZone).toBe('Europe/Lisbon');
    // A tool argument may still name another zone.
    expect(structured(await mcp(key, 'add_task', { lovedOneId: lisbon, title: 'Call', due: start, timeZone: 'America/New_York' })).task.timeZone).toBe(
      'America/New_York',
    );
    const med = await mcp(key, 'update_medication', { lovedOneId: lisbon, action: 'add', medication: { name: 'Metformin', times: ['08:00'] } });
    expect(med.status, med.text).toBe(200);
    expect(structured(med).medication.schedule.timeZone).toBe('Europe/Lisbon');
    const listed = structured(await mcp(key, 'list_loved_ones', {})).lovedOnes;
    expect(listed.map((l: any) => l.timeZone)).toEqual(['America/Chicago', 'Europe/Lisbon']);

    // Changed on their edit page: new things follow, what was planned keeps its own zone.
    const edited = await post(cookie, `/workspace/loved-ones/${lisbon}/edit`, { firstName: 'Tomas', lastName: 'Ortiz', timeZone: 'Atlantic/Azores' });
    expect(edited.status, edited.html).toBe(303);
    expect(structured(await mcp(key, 'add_task', { lovedOneId: lisbon, title: 'Pharmacy', due: start })).task.timeZone).toBe('Atlantic/Azores');
    const tasks = structured(await mcp(key, 'list_tasks', { lovedOneId: lisbon })).tasks;
    expect(tasks.find((t: any) => t.title === 'Laundry').timeZone).toBe('Europe/Lisbon');
  });

  it('when a loved one’s zone is not a real one, then it is refused naming the field, in the API, the add form and the edit page', async () => {
    const cookie = await signIn(svc, `badzone${Date.now()}@example.com`);
    const ws = await appCall(svc, cookie, 'POST', '/api/workspace', { familyName: 'Bad zone', firstName: 'Ana', lastName: 'Lima', timeZone: 'Mars/Olympus' });
    expect(ws.status).toBe(400);
    expect(ws.json.code).toBe('VALIDATION_FAILED');
    expect(ws.json.message).toMatch(/timeZone: must be an IANA time zone/);
    expect((await appCall(svc, cookie, 'POST', '/api/workspace', { familyName: 'Good zone', firstName: 'Ana', lastName: 'Lima' })).status).toBe(201);
    const more = await appCall(svc, cookie, 'POST', '/api/workspace/loved-ones', { firstName: 'Rui', lastName: 'Lima', timeZone: 'Europe/Nowhere' });
    expect(more.status).toBe(400);
    expect(more.json.message).toMatch(/timeZone: must be an IANA time zone/);
    const form = await post(cookie, '/workspace/loved-ones', { firstName: 'Rui', lastName: 'Lima', timeZone: 'Europe/Nowhere' });
    expect(form.status).toBe(400);
    expect(form.html).toContain('The time zone must be an IANA time zone, e.g. America/New_York.');
    expect(form.html).toMatch(/id="timeZone"[^>]*value="Europe\/Nowhere"/);
    const id = (await appCall(svc, cookie, 'GET', '/api/workspace')).json.lovedOnes[0].id as string;
    const edit = await post(cookie, `/workspace/loved-ones/${id}/edit`, { firstName: 'Ana', lastName: 'Lima', timeZone: 'Nowhere' });
    expect(edit.status).toBe(400);
    expect(edit.html).toContain('The time zone must be an IANA time zone');
  });
});
