// The family's own entries over real HTTP: added in the app (plain form posts) and by an assistant
// through the workspace MCP's write tools, with who wrote them and how; corrected with history,
// withdrawn with a reason; refused for a reader, for a typo'd reading (naming the field), and for
// a loved one or an entry outside the caller's workspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendCareEvents } from '../src/family/records.js';
import { RPC } from '../src/rpc/codes.js';
import { appCall, callApproved, caregiverWithKey, signIn } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
let mcp: string;
beforeAll(async () => {
  svc = await startTestService({});
  mcp = `${svc.urls.app}/api/mcp`;
});
afterAll(async () => {
  await svc?.stop();
});

const origin = () => new URL(svc.config.appUrl).origin;
const TZ = 'Asia/Tokyo';
const get = async (cookie: string, path: string) => {
  const res = await fetch(`${svc.urls.app}${path}`, { redirect: 'manual', headers: { cookie: `${cookie}; tz=${encodeURIComponent(TZ)}` } });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};
const post = async (cookie: string, path: string, body: Record<string, string> = {}) => {
  const res = await fetch(`${svc.urls.app}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `${cookie}; tz=${encodeURIComponent(TZ)}`, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
const callTool = (key: string, name: string, args: Record<string, unknown>) =>
  postJson(mcp, rpc('tools/call', { name, arguments: args }), { authorization: `Bearer ${key}` });
const structured = (res: { json: any }) => res.json.result.structuredContent ?? JSON.parse(res.json.result.content.at(-1).text);

/** A caregiver with a workspace and an API key labelled as a person would label it. */
async function caregiver(email: string, keyName = 'Claude') {
  const me = await caregiverWithKey(svc, email);
  const key = await appCall(svc, me.cookie, 'POST', '/api/keys', { name: keyName, access: 'read-write' });
  return { ...me, apiKey: key.json.apiKey as string };
}

/** A sibling who joined by invitation, with their own key. */
async function sibling(cookie: string, email: string, name: string) {
  const invited = await post(cookie, '/family/invites', { email });
  const link = new RegExp(`${svc.config.appUrl}/join/[A-Za-z0-9._%-]+`).exec(invited.html)![0];
  const theirs = await signIn(svc, email, name);
  expect((await post(theirs, new URL(link).pathname)).status).toBe(303);
  const key = await appCall(svc, theirs, 'POST', '/api/keys', { name: 'My assistant', access: 'read-write' });
  const uid = (await appCall(svc, cookie, 'GET', '/api/family')).json.members.length; // joined
  expect(uid).toBe(2);
  return { cookie: theirs, apiKey: key.json.apiKey as string };
}

/** The uid of a member, from the Family page's access form. */
async function memberUid(cookie: string, email: string): Promise<string> {
  const html = (await get(cookie, '/family')).html;
  const row = html.split('<tr>').find((r) => r.includes(email))!;
  return decodeURIComponent(/\/family\/members\/([^/]+)\/access/.exec(row)![1]!);
}

describe('family entries - the workspace MCP write tools', () => {
  it('when an assistant adds a note, a dose and a reading with a key, then list_care_events returns them as family entries naming the person and the key', async () => {
    const me = await caregiver('entries.mcp@example.com', 'Claude');
    const note = await callTool(me.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'Slept badly.\nAte well at lunch.' });
    expect(note.status, note.text).toBe(200);
    expect(structured(note).entry).toMatchObject({ source: 'family', eventType: 'note_added', payload: { note_text: 'Slept badly.\nAte well at lunch.' } });
    expect(structured(note).entry.author).toMatchObject({ via: 'assistant', client: 'Claude', name: 'Test Caregiver' });
    expect(structured(note).entry.line).toContain("Test Caregiver's assistant, Claude");
    const dose = await callTool(me.apiKey, 'log_medication_dose', {
      lovedOneId: me.lovedOneId,
      medication: 'Metoprolol',
      status: 'given',
      amount: 25,
      unit: 'mg',
    });
    expect(structured(dose).entry).toMatchObject({
      eventType: 'med_administered',
      payload: { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg' },
    });
    const bp = await callTool(me.apiKey, 'record_vital', { lovedOneId: me.lovedOneId, kind: 'blood_pressure', value: 142, second: 88, unit: 'mmHg' });
    expect(structured(bp).entry).toMatchObject({
      eventType: 'vital_recorded',
      payload: { vital_type: 'blood_pressure', value: 142, secondary_value: 88, unit: 'mmHg' },
    });
    const day = await callTool(me.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'Quiet, a walk in the garden.', about: 'day', mood: 'good' });
    expect(structured(day).entry).toMatchObject({ eventType: 'day_noted', payload: { mood: 'good' } });

    const list = structured(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId }));
    expect(list.events.map((e: any) => e.eventType).sort()).toEqual(['day_noted', 'med_administered', 'note_added', 'vital_recorded']);
    for (const e of list.events) expect(e).toMatchObject({ source: 'family', author: { via: 'assistant', client: 'Claude' } });
  });

  it('when the write tools are listed, then each declares its schemas, the write scope and honest annotations', async () => {
    const me = await caregiver('entries.list@example.com');
    const tools = (await postJson(mcp, rpc('tools/list'), { authorization: `Bearer ${me.apiKey}`, 'mcp-protocol-version': '2025-06-18' })).json.result
      .tools as any[];
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['add_care_note', 'log_medication_dose', 'record_vital', 'retract_entry']) {
      const t = byName.get(name);
      expect(t, name).toBeDefined();
      expect(t.inputSchema.required).toContain('lovedOneId');
      expect(t.outputSchema.properties.entry).toBeDefined();
      expect(t.annotations.readOnlyHint).toBe(false);
    }
    expect(byName.get('retract_entry').annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(byName.get('add_care_note').annotations).toMatchObject({ destructiveHint: false, idempotentHint: false });
  });

  it('when a reading is out of its plausible range or a time out of bounds, then the call is refused naming the field and the bound', async () => {
    const me = await caregiver('entries.range@example.com');
    const pulse = await callTool(me.apiKey, 'record_vital', { lovedOneId: me.lovedOneId, kind: 'pulse', value: 720, unit: '/min' });
    expect(pulse.json.error.code).toBe(RPC.INVALID_PARAMS);
    expect(pulse.json.error.message).toBe('Invalid arguments for record_vital: value: must be between 25 and 250 /min; check for a typo');
    const unit = await callTool(me.apiKey, 'record_vital', { lovedOneId: me.lovedOneId, kind: 'weight', value: 70, unit: 'stone' });
    expect(unit.json.error.message).toContain('unit: must be one of kg, lb for weight');
    const bp = await callTool(me.apiKey, 'record_vital', { lovedOneId: me.lovedOneId, kind: 'blood_pressure', value: 120, unit: 'mmHg' });
    expect(bp.json.error.message).toContain('second: is required');
    const old = await callTool(me.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'x', at: '2020-01-01T00:00:00Z' });
    expect(old.json.error.message).toMatch(/at: must be within the last 30 days \(after \d{4}-/);
    const list = structured(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId }));
    expect(list.count).toBe(0);
  });

  it('when a loved one of another family is named, then the write is not authorized and nothing is stored there', async () => {
    const me = await caregiver('entries.mine@example.com');
    const other = await caregiver('entries.theirs@example.com');
    const res = await callTool(me.apiKey, 'add_care_note', { lovedOneId: other.lovedOneId, text: 'not mine' });
    expect(res.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(structured(await callTool(other.apiKey, 'list_care_events', { lovedOneId: other.lovedOneId })).count).toBe(0);
  });

  it('when an entry is withdrawn, then the listing shows the withdrawal with its reason; an agency event cannot be withdrawn', async () => {
    const me = await caregiver('entries.retract@example.com');
    const note = structured(await callTool(me.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'Wrong loved one, sorry' })).entry;
    await appendCareEvents(svc.timelines, [
      {
        _id: 'evt_agency_retract',
        lovedOneId: me.lovedOneId,
        workspaceId: me.workspaceId,
        source: 'partner',
        institutionId: 'inst_test',
        eventType: 'note_added',
        occurredAt: new Date(Date.now() - 60_000),
        receivedAt: new Date(),
        payload: { caregiver_id: 'cg-1', note_text: 'Agency note' },
      },
    ]);
    // Withdrawing asks the person first: approved in Settings, then called again.
    const withdrawn = await callApproved(svc, me.cookie, () =>
      callTool(me.apiKey, 'retract_entry', { lovedOneId: me.lovedOneId, entryId: note.id, reason: 'Meant for Dad' }),
    );
    expect(structured(withdrawn).entry).toMatchObject({ eventType: 'entry_withdrawn', supersedes: note.id, payload: { reason: 'Meant for Dad' } });
    // Sent again (a retry): the same withdrawal, not an error and not a second one.
    const again = await callTool(me.apiKey, 'retract_entry', { lovedOneId: me.lovedOneId, entryId: note.id, reason: 'Meant for Dad' });
    expect(structured(again).entry.id).toBe(structured(withdrawn).entry.id);
    const agency = await callTool(me.apiKey, 'retract_entry', { lovedOneId: me.lovedOneId, entryId: 'evt_agency_retract', reason: 'no' });
    expect(agency.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    const list = structured(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId }));
    expect(list.events.map((e: any) => e.eventType).sort()).toEqual(['entry_withdrawn', 'note_added']);
    expect(list.events.find((e: any) => e.eventType === 'note_added').source).toBe('partner');
    // Filtered by who wrote it, one event a page: each writer's own, and the cursor goes on from there.
    const family = structured(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId, writtenBy: 'family', limit: 1 }));
    expect(family.events.map((e: any) => e.eventType)).toEqual(['entry_withdrawn']);
    const sent = structured(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId, writtenBy: 'agency' }));
    expect(sent.events.map((e: any) => e.id)).toEqual(['evt_agency_retract']);
    if (family.nextCursor) {
      const rest = structured(
        await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId, writtenBy: 'family', limit: 1, cursor: family.nextCursor }),
      );
      expect(rest.events).toEqual([]);
    }
  });
});

describe('family entries - who may write', () => {
  it('when the caregiver makes an invited sibling a reader, then their writes are refused (403 in the app, -32003 over MCP) until they may write again', async () => {
    const me = await caregiver('entries.access@example.com');
    const sam = await sibling(me.cookie, 'sam.access@example.com', 'Sam');
    // Invited members may add things from the start.
    const first = await callTool(sam.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'Visited after work' });
    expect(structured(first).entry.author).toMatchObject({ name: 'Sam', client: 'My assistant' });

    const uid = await memberUid(me.cookie, 'sam.access@example.com');
    expect((await post(me.cookie, `/family/members/${encodeURIComponent(uid)}/access`, { access: 'read' })).status).toBe(303);
    expect(textOf((await get(me.cookie, '/family')).html)).toContain('Can only read');

    const refused = await callTool(sam.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'again' });
    expect(refused.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(refused.json.error.message).toContain('You can only read this care record');
    const form = await post(sam.cookie, `/care/${me.lovedOneId}/add/note`, { text: 'again' });
    expect(form.status).toBe(403);
    expect(textOf(form.html)).toContain('You can only read this care record');
    expect(textOf((await get(sam.cookie, `/care/${me.lovedOneId}`)).html)).toContain('The primary caregiver decides who can add to it');
    // A sibling cannot change anyone's access.
    expect((await post(sam.cookie, `/family/members/${encodeURIComponent(uid)}/access`, { access: 'write' })).status).toBe(403);

    expect((await post(me.cookie, `/family/members/${encodeURIComponent(uid)}/access`, { access: 'write' })).status).toBe(303);
    expect((await post(sam.cookie, `/care/${me.lovedOneId}/add/note`, { text: 'Back to helping' })).status).toBe(303);
  });
});

describe('family entries - in the app', () => {
  it('when a member posts the note form, then 303 and the note shows with its line breaks, who wrote it and how', async () => {
    const me = await caregiver('entries.app@example.com');
    const page = await get(me.cookie, `/care/${me.lovedOneId}`);
    const formId = /name="formId" value="([^"]+)"/.exec(page.html)![1]!;
    const res = await post(me.cookie, `/care/${me.lovedOneId}/add/note`, { formId, text: 'Slept badly.\nAsked for Dad.', at: '' });
    expect(res.status, res.html).toBe(303);
    expect(res.location).toMatch(new RegExp(`^/care/${me.lovedOneId}#entry-fe_`));
    // Posted twice (a double tap): stored once.
    expect((await post(me.cookie, `/care/${me.lovedOneId}/add/note`, { formId, text: 'Slept badly.\nAsked for Dad.' })).status).toBe(303);
    const after = await get(me.cookie, `/care/${me.lovedOneId}?by=family`);
    expect(textOf(after.html)).toContain('Note from Test Caregiver, in the app');
    expect(after.html).toContain('Slept badly.\nAsked for Dad.');
    expect(after.html.match(/Slept badly\./g)!.length).toBe(1);
  });

  it('when a reading is mistyped, then the form comes back 400 with what was typed and the field named', async () => {
    const me = await caregiver('entries.typo@example.com');
    const res = await post(me.cookie, `/care/${me.lovedOneId}/add/reading`, { kind: 'temperature', value: '371', unit: '°C', at: '' });
    expect(res.status).toBe(400);
    expect(textOf(res.html)).toContain('Reading: must be between 30 and 45 °C; check for a typo');
    expect(res.html).toMatch(/id="value"[^>]*value="371"|value="371"[^>]*id="value"/);
    expect(res.html).toContain('aria-invalid="true"');
    const words = await post(me.cookie, `/care/${me.lovedOneId}/add/reading`, { kind: 'temperature', value: 'warm', unit: '°C', at: '' });
    expect(textOf(words.html)).toContain('Reading: must be a number');
    const ok = await post(me.cookie, `/care/${me.lovedOneId}/add/reading`, { kind: 'temperature', value: '37,1', unit: '°C', at: '' });
    expect(ok.status, ok.html).toBe(303);
    expect(textOf((await get(me.cookie, `/care/${me.lovedOneId}`)).html)).toContain('Temperature 37.1 °C, recorded by Test Caregiver, in the app');
  });

  it('when an entry is corrected and then withdrawn, then its history keeps every version and the timeline shows it withdrawn with the reason', async () => {
    const me = await caregiver('entries.history@example.com');
    const added = await post(me.cookie, `/care/${me.lovedOneId}/add/dose`, { status: 'given', medication: 'Metoprolol', amount: '250', unit: 'mg', at: '' });
    const id = /#entry-(.+)$/.exec(added.location!)![1]!;
    const form = await get(me.cookie, `/care/${me.lovedOneId}/entries/${id}/correct`);
    expect(form.html).toContain('value="250"');
    const at = /id="at"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*id="at"/.exec(form.html)!;
    const corrected = await post(me.cookie, `/care/${me.lovedOneId}/entries/${id}/correct`, {
      status: 'given',
      medication: 'Metoprolol',
      amount: '25',
      unit: 'mg',
      at: at[1] ?? at[2]!,
    });
    expect(corrected.status, corrected.html).toBe(303);
    const history = textOf((await get(me.cookie, corrected.location!)).html);
    expect(history).toContain('Metoprolol 250 mg given by Test Caregiver, in the app');
    expect(history).toContain('Metoprolol 25 mg given by Test Caregiver, in the app');
    expect(history.indexOf('250 mg')).toBeLessThan(history.indexOf('25 mg given'));
    // The earlier version cannot be corrected again: the newest one is.
    expect((await post(me.cookie, `/care/${me.lovedOneId}/entries/${id}/correct`, { status: 'given', medication: 'X' })).status).toBe(409);

    const newest = /\/entries\/([^/]+)$/.exec(corrected.location!)![1]!;
    const confirm = await get(me.cookie, `/care/${me.lovedOneId}/entries/${newest}/withdraw`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.html)).toContain('Withdraw this entry?');
    expect((await post(me.cookie, `/care/${me.lovedOneId}/entries/${newest}/withdraw`, { reason: '' })).status).toBe(400);
    const done = await post(me.cookie, `/care/${me.lovedOneId}/entries/${newest}/withdraw`, { reason: 'Logged on the wrong day' });
    expect(done.status).toBe(303);
    const timeline = textOf((await get(me.cookie, `/care/${me.lovedOneId}`)).html);
    expect(timeline).toContain('A dose given withdrawn by Test Caregiver, in the app');
    expect(timeline).toContain('Reason: Logged on the wrong day');
    const all = textOf((await get(me.cookie, done.location!)).html);
    expect(all).toContain('250 mg');
    expect(all).toContain('Withdrawn by Test Caregiver');
  });

  it('when an id is another family’s loved one, an agency event or unknown, then 404', async () => {
    const me = await caregiver('entries.foreign@example.com');
    const other = await caregiver('entries.foreign2@example.com');
    expect((await get(me.cookie, `/care/${other.lovedOneId}/add/note`)).status).toBe(404);
    expect((await post(me.cookie, `/care/${other.lovedOneId}/add/note`, { text: 'x' })).status).toBe(404);
    await appendCareEvents(svc.timelines, [
      {
        _id: 'evt_agency_foreign',
        lovedOneId: me.lovedOneId,
        workspaceId: me.workspaceId,
        source: 'partner',
        institutionId: 'inst_test',
        eventType: 'note_added',
        occurredAt: new Date(),
        receivedAt: new Date(),
        payload: { caregiver_id: 'cg-1', note_text: 'Agency note' },
      },
    ]);
    expect((await get(me.cookie, `/care/${me.lovedOneId}/entries/evt_agency_foreign/correct`)).status).toBe(404);
    expect((await post(me.cookie, `/care/${me.lovedOneId}/entries/evt_agency_foreign/withdraw`, { reason: 'x' })).status).toBe(404);
    expect((await get(me.cookie, `/care/${me.lovedOneId}/entries/fe_nothing`)).status).toBe(404);
    // Filtered by who wrote it: the agency's note alone, then the family's (none yet).
    expect(textOf((await get(me.cookie, `/care/${me.lovedOneId}?by=agency`)).html)).toContain('Agency note');
    expect(textOf((await get(me.cookie, `/care/${me.lovedOneId}?by=family`)).html)).toContain('Nothing matches these filters.');
  });
});

describe('family entries - leaving carecircle', () => {
  it('when a sibling deletes their account, then their credentials stop, their profile goes and their entries stay under "a former member"', async () => {
    const me = await caregiver('entries.leaving@example.com');
    const sam = await sibling(me.cookie, 'sam.leaving@example.com', 'Sam Leaving');
    expect(structured(await callTool(sam.apiKey, 'add_care_note', { lovedOneId: me.lovedOneId, text: 'Brought soup' })).entry.author.name).toBe('Sam Leaving');
    const uid = await memberUid(me.cookie, 'sam.leaving@example.com');

    const page = textOf((await get(sam.cookie, '/settings/delete-account')).html);
    expect(page).toContain('What goes');
    expect(page).toContain('What stays');
    const deleted = await post(sam.cookie, '/settings/delete-account');
    expect(deleted.status).toBe(200);
    expect(textOf(deleted.html)).toContain('Your account is deleted');

    expect((await callTool(sam.apiKey, 'list_loved_ones', {})).status).toBe(403);
    // The session ended with the account: Settings greets a signed-out visitor.
    expect(textOf((await get(sam.cookie, '/settings')).html)).toContain('Welcome to carecircle');
    expect(await svc.store.db.collection('users').countDocuments({ _id: uid as never })).toBe(0);
    expect(textOf((await get(me.cookie, '/family')).html)).not.toContain('sam.leaving@example.com');
    const timeline = textOf((await get(me.cookie, `/care/${me.lovedOneId}`)).html);
    expect(timeline).toContain('Note from a former member');
    expect(timeline).not.toContain('Sam Leaving');
    const listed = structured(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId }));
    expect(listed.events[0].author).toMatchObject({ name: 'a former member', uid: '' });
  });

  it('when the primary caregiver asks to delete their account, then they are told to hand the workspace over first', async () => {
    const me = await caregiver('entries.lastcare@example.com');
    expect(textOf((await get(me.cookie, '/settings/delete-account')).html)).toContain('You cannot delete your account yet');
    expect((await post(me.cookie, '/settings/delete-account')).status).toBe(409);
    expect((await callTool(me.apiKey, 'list_loved_ones', {})).status).toBe(200);
  });
});
