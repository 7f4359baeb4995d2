// A loved one's medication list, against a running carecircle: added, changed and stopped through
// the app's plain forms and the workspace MCP tools, each change kept as a version; today's doses
// follow the list's schedule and take their state from what the agency sent; a member who may only
// read is refused, another family's ids are not found, and bad input names its field.
import { callApproved } from './harness/identity.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../src/auth/sessions.js';
import { MedicationList, MEDICATIONS, type MedicationVersion } from '../src/family/medications.js';
import { appendCareEvents, WorkspaceStore, type CareEventRecord } from '../src/family/records.js';
import { KeyStore } from '../src/keys/keys.js';
import { RPC } from '../src/rpc/codes.js';
import { workspaceTools } from '../src/workspace/tools.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { family, onboard, postEvent, shareWith, storedEvents, TEST_DATA_KEY, type Family, type Partner } from './ingest.fixtures.js';

let svc: TestService;
let mcp: string;
let store: WorkspaceStore;
beforeAll(async () => {
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
  mcp = `${svc.config.appUrl}/api/mcp`;
  store = new WorkspaceStore(svc.store.db, svc.credentials, svc.config.inboxDomain, svc.timelines);
});
afterAll(async () => {
  await svc?.stop();
});

const versions = () => svc.store.db.collection<MedicationVersion>(MEDICATIONS);

/** A caregiver's family with an API key named as an assistant would be. */
async function caregiver(): Promise<Family & { apiKey: string }> {
  const fam = await family(svc.store.db, svc.credentials, svc.config);
  const apiKey = (await new KeyStore(svc.store.db, svc.credentials).mint(fam.uid, 'Claude', 'read-write')).plaintext;
  return { ...fam, apiKey };
}

/** A second member of the family, reading only (the default for family members). */
async function reader(fam: Family): Promise<{ cookie: string; apiKey: string }> {
  const uid = `u-${randomBytes(5).toString('hex')}`;
  const email = `${uid}@example.com`;
  await store.upsertUser({ uid, email });
  await store.addMember(fam.workspaceId, { uid, email }, 'family_member');
  const { token } = await new SessionStore(svc.store.db, svc.credentials).create({ uid, email, tenant: 'family' });
  return { cookie: `cc_session=${token}`, apiKey: (await new KeyStore(svc.store.db, svc.credentials).mint(uid, 'reader', 'read-write')).plaintext };
}

const get = async (cookie: string, path: string) => {
  const res = await fetch(`${svc.config.appUrl}${path}`, { headers: { cookie }, redirect: 'manual' });
  return { status: res.status, html: await res.text() };
};

/** A form post as the browser sends it from one of the app's pages. */
const post = async (cookie: string, path: string, form: Record<string, string>) => {
  const res = await fetch(`${svc.config.appUrl}${path}`, {
    method: 'POST',
    headers: { cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};

const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

const call = (key: string, name: string, args: Record<string, unknown>) =>
  postJson(mcp, rpc('tools/call', { name, arguments: args }), { authorization: `Bearer ${key}` });
const structured = (res: { json: any }) => {
  if (res.json.error || res.json.result.isError) throw new Error(JSON.stringify(res.json));
  return JSON.parse(res.json.result.content.at(-1).text);
};

/** A zone whose clock now reads between noon and 1 pm: doses at 8, 9 and 10 am are past their grace, one at 4 pm is still due. */
function noonZone(now = new Date()): string {
  const ahead = 12 - now.getUTCHours();
  return ahead === 0 ? 'Etc/GMT' : ahead > 0 ? `Etc/GMT-${ahead}` : `Etc/GMT+${-ahead}`;
}

const metformin = (zone: string) => ({
  name: 'Metformin',
  strength: '500 mg',
  dose: '1 tablet',
  form: 'tablet',
  route: 'by mouth',
  time1: '08:00',
  time2: '20:00',
  timeZone: zone,
  prescriber: 'Dr. Okafor',
  note: 'With food',
});

describe('medication list - in the app', () => {
  let fam: Family & { apiKey: string };
  beforeAll(async () => {
    fam = await caregiver();
  });
  const base = () => `/care/${fam.lovedOneId}/medication-list`;

  it('when the caregiver adds, changes and stops a medication with plain form posts, then each answers 303 and the list keeps every version with who made it', async () => {
    expect((await get(fam.cookie, base())).html).toContain('id="medications-none"');
    const form = await get(fam.cookie, `${base()}/new`);
    expect(form.status).toBe(200);
    expect(form.html).toContain('name="time1"');

    const added = await post(fam.cookie, `${base()}/new`, metformin('America/New_York'));
    expect(added).toMatchObject({ status: 303, location: base() });
    const [v1] = await versions().find({ lovedOneId: fam.lovedOneId }).toArray();
    expect(v1).toMatchObject({
      version: 1,
      change: 'added',
      status: 'active',
      schedule: { times: ['08:00', '20:00'], days: [], timeZone: 'America/New_York' },
    });
    expect(v1!.by).toMatchObject({ uid: fam.uid, how: 'app' });
    const id = v1!.medicationId;
    expect(textOf((await get(fam.cookie, base())).html)).toContain('8:00 am and 8:00 pm, every day (America/New_York)');

    const edit = await get(fam.cookie, `${base()}/${id}/edit`);
    expect(edit.html).toContain('value="Dr. Okafor"');
    const changed = await post(fam.cookie, `${base()}/${id}/edit`, {
      ...metformin('America/New_York'),
      strength: '1000 mg',
      time2: '',
      day_mon: 'yes',
      day_thu: 'yes',
      version: '1',
    });
    expect(changed).toMatchObject({ status: 303, location: base() });

    const ask = await get(fam.cookie, `${base()}/${id}/stop`);
    expect(ask.status).toBe(200);
    expect(textOf(ask.html)).toContain('Stop Metformin 1000 mg, 1 tablet for Rose Test?');
    // A stop from a page that saw an older version stops nothing.
    expect((await post(fam.cookie, `${base()}/${id}/stop`, { version: '1' })).status).toBe(409);
    const stopped = await post(fam.cookie, `${base()}/${id}/stop`, { version: '2', reason: 'Doctor switched her' });
    expect(stopped).toMatchObject({ status: 303, location: base() });

    const all = await versions().find({ medicationId: id }).sort({ version: 1 }).toArray();
    expect(all.map((v) => [v.version, v.change, v.status, v.strength, v.schedule.times])).toEqual([
      [1, 'added', 'active', '500 mg', ['08:00', '20:00']],
      [2, 'changed', 'active', '1000 mg', ['08:00']],
      [3, 'stopped', 'stopped', '1000 mg', ['08:00']],
    ]);
    const list = textOf((await get(fam.cookie, base())).html);
    expect(list).toContain('Stopped');
    expect(list).toContain('Doctor switched her');
    expect(list).toContain('Earlier versions (2)');
    expect(list).toContain('8:00 am, Mon and Thu (America/New_York)');
  });

  it('when a form is refused, then it comes back 400 with what was typed and each problem naming its field', async () => {
    const res = await post(fam.cookie, `${base()}/new`, {
      ...metformin('Mars/Olympus'),
      name: '',
      time1: '25:00',
      startDate: '2026-12-01',
      stopDate: '2026-11-01',
    });
    expect(res.status).toBe(400);
    const text = textOf(res.html);
    expect(text).toContain('Name: is required');
    expect(text).toContain('Times of day: must be times of day as HH:MM');
    expect(text).toContain('Time zone: must be an IANA time zone');
    expect(text).toContain('Stop date: must be on or after the start date');
    expect(res.html).toContain('value="500 mg"');
    expect(res.html).toContain('value="Mars/Olympus"');
    expect(res.html).toContain('>With food</textarea>');
    expect(await versions().countDocuments({ lovedOneId: fam.lovedOneId, name: '' })).toBe(0);
  });

  it('when a member who may only read opens or posts the forms, then 403 in plain words and nothing is written; the list still reads', async () => {
    const r = await reader(fam);
    const before = await versions().countDocuments({ lovedOneId: fam.lovedOneId });
    const list = await get(r.cookie, base());
    expect(list.status).toBe(200);
    expect(list.html).toContain('id="read-only"');
    expect(list.html).not.toContain('id="add-medication"');
    expect((await get(r.cookie, `${base()}/new`)).status).toBe(403);
    const refused = await post(r.cookie, `${base()}/new`, metformin('UTC'));
    expect(refused.status).toBe(403);
    expect(textOf(refused.html)).toContain('The primary caregiver has set your access to reading only');
    expect(await versions().countDocuments({ lovedOneId: fam.lovedOneId })).toBe(before);
  });

  it("when another family's loved one or medication is named, then 404 and nothing changes", async () => {
    const other = await caregiver();
    await post(other.cookie, `/care/${other.lovedOneId}/medication-list/new`, metformin('UTC'));
    const theirs = (await versions().findOne({ lovedOneId: other.lovedOneId }))!;
    expect((await get(fam.cookie, `/care/${other.lovedOneId}/medication-list`)).status).toBe(404);
    expect((await post(fam.cookie, `/care/${other.lovedOneId}/medication-list/new`, metformin('UTC'))).status).toBe(404);
    // Their medication under our own loved one is not ours either.
    expect((await get(fam.cookie, `${base()}/${theirs.medicationId}/edit`)).status).toBe(404);
    expect((await post(fam.cookie, `${base()}/${theirs.medicationId}/stop`, { version: '1' })).status).toBe(404);
    expect(await versions().countDocuments({ medicationId: theirs.medicationId })).toBe(1);
  });
});

describe("medication list - today's doses from the schedule", () => {
  let fam: Family & { apiKey: string };
  let partner: Partner;
  const zone = noonZone();
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  /** An instant at a wall time today in the zone (a fixed offset, so no daylight saving). */
  const at = (hhmm: string) => {
    const offset = Number(/GMT([+-]\d+)?/.exec(zone)![1] ?? 0); // Etc/GMT-5 is UTC+5
    return new Date(Date.parse(`${today}T${hhmm}:00Z`) + offset * 3_600_000).toISOString();
  };

  beforeAll(async () => {
    fam = await caregiver();
    partner = await onboard(svc.store.db, svc.credentials, 'Evergreen Home Care');
    await shareWith(svc, partner, 'rose-1', fam);
    const added = await post(fam.cookie, `/care/${fam.lovedOneId}/medication-list/new`, {
      name: 'Lisinopril',
      strength: '10 mg',
      time1: '08:00',
      time2: '09:00',
      time3: '10:00',
      time4: '16:00',
      timeZone: zone,
    });
    expect(added.status).toBe(303);
    const send = async (event_type: string, occurred_at: string, payload: Record<string, unknown>) => {
      const r = await postEvent(svc.urls.pipe!, partner, { institution_id: partner.institutionId, subject_ref: 'rose-1', event_type, occurred_at, payload });
      expect(r.status, JSON.stringify(r.json)).toBe(202);
    };
    // The agency names the medication in its own case and says which dose it was.
    await send('med_administered', at('08:05'), {
      medication_name: 'LISINOPRIL',
      dose_amount: 10,
      dose_unit: 'mg',
      administered_by: 'cg-1',
      caregiver_name: 'Ana',
      scheduled_at: at('08:00'),
    });
    await send('med_refused', at('09:10'), { medication_name: 'Lisinopril', scheduled_at: at('09:00'), reason: 'Said she felt dizzy', caregiver_name: 'Ana' });
    // A medicine the family has not listed still shows today, as the agency recorded it.
    await send('med_administered', at('11:00'), {
      medication_name: 'Vitamin D',
      dose_amount: 1000,
      dose_unit: 'IU',
      administered_by: 'cg-1',
      caregiver_name: 'Ana',
    });
    await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 3);
  });

  it('when the agency gave one dose and reported one refused, then the medications page shows given, refused, missed after the grace period, and due, beside an unlisted medicine given', async () => {
    const { html } = await get(`${fam.cookie}; tz=${encodeURIComponent(zone)}`, `/care/${fam.lovedOneId}/medications`);
    const todayList = html.slice(html.indexOf('id="meds-today"'), html.indexOf('</ul>', html.indexOf('id="meds-today"')));
    const rows = [...todayList.matchAll(/class="dose dose-([a-z-]+)"/g)].map((m) => m[1]);
    expect(rows).toEqual(['given', 'refused', 'missed', 'given', 'due']);
    const text = textOf(todayList);
    expect(text).toContain('Given Lisinopril 10 mg');
    expect(text).toContain('Given Vitamin D 1000 IU');
    expect(text).toContain('Ana wrote: “Said she felt dizzy”');
    expect(text).toContain('nothing recorded within the grace period');
    expect(html).toContain('id="meds-today-source"');
    // The loved one's own page reads today's doses from the same list, and names the missed one.
    const lovedOne = await get(`${fam.cookie}; tz=${encodeURIComponent(zone)}`, `/care/${fam.lovedOneId}`);
    expect([...lovedOne.html.matchAll(/class="dose dose-([a-z-]+)"/g)].map((m) => m[1])).toEqual(['given', 'refused', 'missed', 'given', 'due']);
    expect(textOf(lovedOne.html.slice(lovedOne.html.indexOf('id="attention"')))).toContain('Lisinopril 10 mg missed');
  });

  it("when the family records a dose themselves, then it fills the dose it names, like the agency's", async () => {
    const event = {
      _id: `evt_fam_${randomBytes(6).toString('hex')}`,
      lovedOneId: fam.lovedOneId,
      workspaceId: fam.workspaceId,
      source: 'family',
      eventType: 'med_administered',
      occurredAt: new Date(at('10:30')),
      receivedAt: new Date(),
      payload: { medication_name: 'Lisinopril', scheduled_at: at('10:00') },
    } as unknown as CareEventRecord;
    await appendCareEvents(svc.timelines, [event]);
    const out = structured(await call(fam.apiKey, 'list_medications', { lovedOneId: fam.lovedOneId }));
    expect(out.today.map((d: any) => [d.due, d.state])).toEqual([
      [at('08:00'), 'given'],
      [at('09:00'), 'refused'],
      [at('10:00'), 'given'],
      [at('16:00'), 'due'],
    ]);
    expect(out.today[0].recordedBy).toBe('Ana');
    expect(out.medications).toEqual([
      expect.objectContaining({ name: 'Lisinopril', strength: '10 mg', schedule: expect.objectContaining({ timeZone: zone }) }),
    ]);
  });
});

describe('medication list - workspace MCP tools', () => {
  let fam: Family & { apiKey: string };
  beforeAll(async () => {
    fam = await caregiver();
  });

  it('when tools are listed, then both medication tools declare input and output schemas, annotations and their scopes', async () => {
    const res = await postJson(mcp, rpc('tools/list', {}), { authorization: `Bearer ${fam.apiKey}`, 'mcp-protocol-version': '2025-06-18' });
    const tools = Object.fromEntries(res.json.result.tools.map((t: any) => [t.name, t]));
    expect(tools.list_medications.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(tools.update_medication.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    for (const t of [tools.list_medications, tools.update_medication]) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema.type).toBe('object');
    }
    expect(tools.update_medication.inputSchema.properties.action.enum).toEqual(['add', 'change', 'stop']);
  });

  it('when an assistant adds, changes and stops a medication, then each is a new version that names the assistant, and the list reads it back', async () => {
    const added = structured(
      await call(fam.apiKey, 'update_medication', {
        lovedOneId: fam.lovedOneId,
        action: 'add',
        medication: { name: 'Donepezil', strength: '5 mg', times: ['21:00'], timeZone: 'America/New_York' },
      }),
    );
    expect(added.medication).toMatchObject({ name: 'Donepezil', version: 1, status: 'active', changedBy: expect.stringMatching(/'s assistant, Claude$/) });
    const id = added.medication.medicationId;
    const changed = structured(
      await callApproved(svc, fam.cookie, () =>
        call(fam.apiKey, 'update_medication', { lovedOneId: fam.lovedOneId, action: 'change', medicationId: id, medication: { strength: '10 mg' } }),
      ),
    );
    // A change keeps what it does not name.
    expect(changed.medication).toMatchObject({ version: 2, strength: '10 mg', schedule: { times: ['21:00'], timeZone: 'America/New_York' } });
    // Changing and stopping declare the question the person approves first; adding needs none.
    const update = workspaceTools(store, { medications: new MedicationList(svc.store.db) }).find((t) => t.name === 'update_medication')!;
    const ctx = {
      requestId: 'r',
      clientIp: '127.0.0.1',
      protocolVersion: '2025-06-18',
      caller: { uid: fam.uid, email: 'x', tenant: 'family', via: 'api-key', scopes: 'all' },
    };
    expect(await update.confirm!({ lovedOneId: fam.lovedOneId, action: 'stop', medicationId: id }, ctx)).toBe('Stop Donepezil 10 mg for Rose Test?');
    expect(await update.confirm!({ lovedOneId: fam.lovedOneId, action: 'change', medicationId: id, medication: { strength: '5 mg' } }, ctx)).toBe(
      'Change Donepezil 10 mg for Rose Test (strength)?',
    );
    expect(await update.confirm!({ lovedOneId: fam.lovedOneId, action: 'add', medication: { name: 'Aspirin' } }, ctx)).toBeUndefined();
    const stopped = structured(
      await callApproved(svc, fam.cookie, () =>
        call(fam.apiKey, 'update_medication', { lovedOneId: fam.lovedOneId, action: 'stop', medicationId: id, reason: 'Side effects' }),
      ),
    );
    expect(stopped.medication).toMatchObject({ version: 3, status: 'stopped', stopReason: 'Side effects' });
    expect(structured(await call(fam.apiKey, 'list_medications', { lovedOneId: fam.lovedOneId })).medications).toEqual([]);
    const withStopped = structured(await call(fam.apiKey, 'list_medications', { lovedOneId: fam.lovedOneId, includeStopped: true }));
    expect(withStopped.medications).toEqual([expect.objectContaining({ medicationId: id, status: 'stopped' })]);
    const stored = await versions().find({ medicationId: id }).toArray();
    expect(stored.map((v) => v.by)).toEqual(Array(3).fill(expect.objectContaining({ uid: fam.uid, how: 'assistant', client: 'Claude' })));
  });

  it('when arguments are bad, then the error names the field and nothing is written', async () => {
    const before = await versions().countDocuments({ lovedOneId: fam.lovedOneId });
    const badTime = await call(fam.apiKey, 'update_medication', {
      lovedOneId: fam.lovedOneId,
      action: 'add',
      medication: { name: 'Aspirin', times: ['25:00'], timeZone: 'America/New_York' },
    });
    expect(badTime.json.error.code).toBe(RPC.INVALID_PARAMS);
    expect(badTime.json.error.message).toContain('medication.times.0: must be times of day as HH:MM');
    const noId = await call(fam.apiKey, 'update_medication', { lovedOneId: fam.lovedOneId, action: 'stop' });
    expect(noId.json.error.message).toContain('medicationId: is required to stop a medication');
    const badDay = await call(fam.apiKey, 'update_medication', {
      lovedOneId: fam.lovedOneId,
      action: 'add',
      medication: { name: 'Aspirin', times: ['08:00'], days: ['someday'], timeZone: 'UTC' },
    });
    expect(badDay.json.error.message).toContain('medication.days.0');
    expect(await versions().countDocuments({ lovedOneId: fam.lovedOneId })).toBe(before);
  });

  it("when a reader writes, or anyone names another family's loved one or medication, then -32003 and nothing is written", async () => {
    const r = await reader(fam);
    const refused = await call(r.apiKey, 'update_medication', {
      lovedOneId: fam.lovedOneId,
      action: 'add',
      medication: { name: 'Aspirin', asNeeded: true, timeZone: 'UTC' },
    });
    expect(refused.json.error).toMatchObject({ code: RPC.NOT_AUTHORIZED, message: 'You can only read this family workspace' });
    // Reading is still theirs.
    expect(structured(await call(r.apiKey, 'list_medications', { lovedOneId: fam.lovedOneId })).lovedOneId).toBe(fam.lovedOneId);

    const other = await caregiver();
    const theirs = structured(
      await call(other.apiKey, 'update_medication', {
        lovedOneId: other.lovedOneId,
        action: 'add',
        medication: { name: 'Aspirin', asNeeded: true, timeZone: 'UTC' },
      }),
    ).medication.medicationId;
    expect((await call(fam.apiKey, 'list_medications', { lovedOneId: other.lovedOneId })).json.error.code).toBe(RPC.NOT_AUTHORIZED);
    const foreign = await call(fam.apiKey, 'update_medication', { lovedOneId: fam.lovedOneId, action: 'stop', medicationId: theirs });
    expect(foreign.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(await versions().countDocuments({ medicationId: theirs })).toBe(1);
  });
});
