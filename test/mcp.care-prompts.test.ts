// The workspace's weekly care summary prompt and the loved ones' timeline resources, through the
// SDK v2 client in both eras: built from real events, scope-checked, and refused for foreign ids
// exactly as the tools refuse them.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendCareEvents, type CareEventRecord } from '../src/family/records.js';
import { caregiverWithKey } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { connectedApp } from './oauth.fixtures.js';

const MODERN = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const DAY = 86_400_000;

describe('the weekly care summary prompt and timeline resources', () => {
  let svc: TestService;
  let url: string;
  let rosa: { apiKey: string; lovedOneId: string };
  let other: { apiKey: string; lovedOneId: string };

  beforeAll(async () => {
    svc = await startTestService({ nats: true });
    url = `${svc.config.appUrl}/api/mcp`;
    rosa = await caregiverWithKey(svc, 'summary@example.com');
    other = await caregiverWithKey(svc, 'elsewhere@example.com', { firstName: 'Hugo', lastName: 'Stone' });
    const now = Date.now();
    const event = (id: string, ageMs: number, eventType: string, payload: Record<string, unknown>): CareEventRecord => ({
      _id: id,
      lovedOneId: rosa.lovedOneId,
      workspaceId: 'x',
      source: 'partner',
      institutionId: 'inst_test',
      eventType,
      occurredAt: new Date(now - ageMs),
      receivedAt: new Date(),
      payload,
    });
    await appendCareEvents(svc.timelines, [
      event('evt_sum_1', 1 * DAY, 'med_administered', { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'Ana' }),
      event('evt_sum_2', 2 * DAY, 'vital_recorded', { vital_type: 'blood_pressure', value: 131, secondary_value: 84, unit: 'mmHg', recorded_by: 'Ana' }),
      event('evt_sum_3', 3 * DAY, 'note_added', { caregiver_id: 'Ben', note_text: 'Walked to the garden and back.' }),
      event('evt_sum_old', 12 * DAY, 'note_added', { caregiver_id: 'Ben', note_text: 'An older note outside the week.' }),
    ]);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  async function connect(headers: Record<string, string>, modern: boolean): Promise<Client> {
    const client = new Client({ name: 'carecircle-summary-test', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return client;
  }

  for (const modern of [true, false]) {
    const era = modern ? '2026-07-28' : '2025-era';
    it(`when a ${era} client asks for the weekly summary, then the messages name the loved one and hold the last 7 days in plain words`, async () => {
      const client = await connect({ authorization: `Bearer ${rosa.apiKey}` }, modern);
      try {
        expect(client.getServerCapabilities()?.prompts, 'prompts capability').toBeDefined();
        const { prompts } = await client.listPrompts();
        expect(prompts).toEqual([
          expect.objectContaining({
            name: 'weekly_care_summary',
            title: 'Weekly care summary for a loved one',
            arguments: [expect.objectContaining({ name: 'lovedOneId', required: true })],
          }),
        ]);
        const got = await client.getPrompt({ name: 'weekly_care_summary', arguments: { lovedOneId: rosa.lovedOneId } });
        expect(got.messages).toHaveLength(1);
        const text = (got.messages[0]!.content as { type: 'text'; text: string }).text;
        expect(text).toContain('Rosa Rivera');
        expect(text).toContain('Metoprolol 25 mg given by Ana');
        expect(text).toContain('Blood pressure 131/84 mmHg, recorded by Ana');
        expect(text).toContain('Note from Ben: Walked to the garden and back.');
        expect(text).toContain('1 medication given, 1 vital-sign reading, 1 note');
        expect(text).not.toContain('An older note outside the week.');
        expect(text).not.toContain(rosa.lovedOneId);
      } finally {
        await client.close();
      }
    });

    it(`when a ${era} client lists, reads and templates the timeline resources, then each of its loved ones has one, newest first`, async () => {
      const client = await connect({ authorization: `Bearer ${rosa.apiKey}` }, modern);
      try {
        expect(client.getServerCapabilities()?.resources, 'resources capability').toBeDefined();
        const { resources } = await client.listResources();
        const uri = `carecircle://loved-ones/${rosa.lovedOneId}/timeline`;
        expect(resources).toEqual([expect.objectContaining({ uri, title: "Rosa Rivera's care timeline", mimeType: 'text/markdown' })]);
        const { resourceTemplates } = await client.listResourceTemplates();
        expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'carecircle://loved-ones/{lovedOneId}/timeline' })]);
        const read = await client.readResource({ uri });
        const text = (read.contents[0] as { text: string }).text;
        expect(text.indexOf('Metoprolol')).toBeLessThan(text.indexOf('An older note outside the week.'));
        expect(text).toContain("# Rosa Rivera's care timeline");
      } finally {
        await client.close();
      }
    });

    it(`when a ${era} client names another family's loved one, then the prompt, the resource and the tool refuse it alike`, async () => {
      const client = await connect({ authorization: `Bearer ${rosa.apiKey}` }, modern);
      try {
        const refusals = await Promise.all([
          client.getPrompt({ name: 'weekly_care_summary', arguments: { lovedOneId: other.lovedOneId } }).then(
            () => undefined,
            (e: { code: number; message: string }) => e,
          ),
          client.readResource({ uri: `carecircle://loved-ones/${other.lovedOneId}/timeline` }).then(
            () => undefined,
            (e: { code: number; message: string }) => e,
          ),
          client.readResource({ uri: 'carecircle://loved-ones/lo_does_not_exist/timeline' }).then(
            () => undefined,
            (e: { code: number; message: string }) => e,
          ),
          client.callTool({ name: 'list_care_events', arguments: { lovedOneId: other.lovedOneId } }).then(
            () => undefined,
            (e: { code: number; message: string }) => e,
          ),
        ]);
        for (const r of refusals) expect(r).toMatchObject({ code: -32003, message: expect.stringContaining('Not authorized for this lovedOneId') });
        const unknown = await client.readResource({ uri: 'carecircle://nothing-here' }).then(
          () => undefined,
          (e: { code: number }) => e,
        );
        expect(unknown).toMatchObject({ code: -32602 });
      } finally {
        await client.close();
      }
    });
  }

  it('when the person chose America/Chicago, then the summary and the timeline read in that zone, say so, and the summary names missed and refused doses', async () => {
    const chicago = await caregiverWithKey(svc, 'chicago@example.com', { firstName: 'Ines', lastName: 'Diaz' });
    const zone = await fetch(`${svc.config.appUrl}/settings/time-zone`, {
      method: 'POST',
      headers: { cookie: chicago.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ timeZone: 'America/Chicago' }),
      redirect: 'manual',
    });
    expect(zone.status).toBe(303);
    const now = Date.now();
    const event = (id: string, occurredAt: Date, eventType: string, payload: Record<string, unknown>): CareEventRecord => ({
      _id: id,
      lovedOneId: chicago.lovedOneId,
      workspaceId: 'x',
      source: 'partner',
      institutionId: 'inst_test',
      eventType,
      occurredAt,
      receivedAt: new Date(),
      payload,
    });
    await appendCareEvents(svc.timelines, [
      // Tuesday 6:20 pm in Chicago is already Wednesday in UTC.
      event('evt_chi_fall', new Date('2026-11-25T00:20:00Z'), 'fall_reported', { severity: 'minor' }),
      event('evt_chi_missed', new Date(now - 1 * DAY), 'med_missed', {
        medication_name: 'Metoprolol',
        dose_amount: 25,
        dose_unit: 'mg',
        reported_by: 'Ana',
        reason: 'asleep at the dose time',
      }),
      event('evt_chi_refused', new Date(now - 2 * DAY), 'med_refused', { medication_name: 'Lisinopril', dose_amount: 10, dose_unit: 'mg', reported_by: 'Ben' }),
    ]);
    const client = await connect({ authorization: `Bearer ${chicago.apiKey}` }, true);
    try {
      const read = await client.readResource({ uri: `carecircle://loved-ones/${chicago.lovedOneId}/timeline` });
      const timeline = (read.contents[0] as { text: string }).text;
      expect(timeline).toContain('newest first (times in America/Chicago):');
      expect(timeline).toContain('- Tue, Nov 24, 2026, 6:20 pm: Fall reported (Severity: minor)');
      expect(timeline).not.toContain('UTC');

      const got = await client.getPrompt({ name: 'weekly_care_summary', arguments: { lovedOneId: chicago.lovedOneId } });
      const text = (got.messages[0]!.content as { type: 'text'; text: string }).text;
      expect(text).toContain('(times in America/Chicago)');
      expect(text).not.toContain('UTC');
      expect(text).toContain('every dose missed or refused');
      expect(text).toMatch(/1 dose missed, 1 dose refused/);
      const listed = text.slice(text.indexOf('Doses missed or refused (2):'));
      expect(listed).toContain('Metoprolol 25 mg missed, reported by Ana: asleep at the dose time');
      expect(listed).toContain('Lisinopril 10 mg refused, reported by Ben');
    } finally {
      await client.close();
    }
  });

  it('when an OAuth app lacks care_circle:read, then it is shown no prompt or resource and reading one is refused with insufficient_scope', async () => {
    await caregiverWithKey(svc, 'profile-only@example.com');
    const { tokens } = await connectedApp(svc, 'profile-only@example.com', ['profile:read']);
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    const headers = (method: string) => ({ ...auth, 'mcp-protocol-version': MODERN, 'mcp-method': method });
    const meta = { _meta: { [PV]: MODERN, [CAPS]: {} } };
    const discover = await postJson(url, rpc('server/discover', meta), headers('server/discover'));
    expect(discover.json.result.capabilities).toEqual({ tools: { listChanged: false } });
    expect((await postJson(url, rpc('prompts/list', meta), headers('prompts/list'))).json.result.prompts).toEqual([]);
    expect((await postJson(url, rpc('resources/list', meta), headers('resources/list'))).json.result.resources).toEqual([]);
    const uri = `carecircle://loved-ones/${rosa.lovedOneId}/timeline`;
    const read = await postJson(url, rpc('resources/read', { uri, ...meta }), { ...headers('resources/read'), 'mcp-name': uri });
    expect(read.status).toBe(403);
    expect(read.headers.get('www-authenticate')).toContain('insufficient_scope');
    const legacy = await postJson(url, rpc('prompts/get', { name: 'weekly_care_summary', arguments: { lovedOneId: 'x' } }), {
      ...auth,
      'mcp-protocol-version': '2025-06-18',
    });
    expect(legacy.status).toBe(403);
    expect(legacy.json.error).toMatchObject({ code: -32001, data: { scope: 'care_circle:read' } });
  });

  it('when a 2026-07-28 list or read is answered, then it carries the caching hints the revision requires', async () => {
    const meta = { _meta: { [PV]: MODERN, [CAPS]: {} } };
    const auth = { authorization: `Bearer ${rosa.apiKey}` };
    for (const method of ['prompts/list', 'resources/list', 'resources/templates/list']) {
      const r = await postJson(url, rpc(method, meta), { ...auth, 'mcp-protocol-version': MODERN, 'mcp-method': method });
      expect(r.json.result, method).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'private' });
    }
    const uri = `carecircle://loved-ones/${rosa.lovedOneId}/timeline`;
    const read = await postJson(url, rpc('resources/read', { uri, ...meta }), {
      ...auth,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'resources/read',
      'mcp-name': uri,
    });
    expect(read.json.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private', contents: [{ uri }] });
  });
});
