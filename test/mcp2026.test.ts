// The official SDK v2 client drives all three MCP endpoints in both eras; every tool's real output
// validates against its declared outputSchema; OAuth callers are listed only what their scopes run.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlansStore } from '../src/family/plans.js';
import { appendCareEvents } from '../src/family/records.js';
import { approveWaiting, caregiverWithKey } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';
import { connectedApp } from './oauth.fixtures.js';

const MODERN = '2026-07-28';
const PV = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

/** Arguments that make each tool answer, by tool name. */
const CALLS: Record<string, Record<string, unknown>> = {
  search_care_resources: { query: 'respite care', limit: 3 },
  get_channel: { slug: 'long-distance-caregiving' },
  calculate_long_term_care_cost: { careType: 'home_health_aide', state: 'Ohio', years: 2 },
  start_family_care_workspace: { lovedOneFirstName: 'Rosa', lovedOneLastName: 'Rivera', sandbox: true, primaryCaregiverEmail: 'rosa.family@example.com' },
  ping: {},
  get_user_profile: {},
  list_loved_ones: {},
  // Only the two agency readings below, whatever the write tools add meanwhile.
  list_care_events: { limit: 5, types: ['vital_recorded'], until: '2026-11-02T00:00:00Z' },
};

describe('MCP 2026-07-28 and the 2025 era, through the SDK v2 client', () => {
  let svc: TestService;
  let endpoints: { name: string; url: string; headers: Record<string, string>; tools: number }[];
  /** The session cookie of the workspace key's owner, who approves what waits for them. */
  let owner: string;
  const ajv = new Ajv2020.default({ strict: false });

  beforeAll(async () => {
    svc = await startTestService({ nats: true });
    const { apiKey, lovedOneId, cookie } = await caregiverWithKey(svc, 'era@example.com');
    owner = cookie;
    // Real events, so list_care_events' output is validated with content and not only empty lists.
    await appendCareEvents(
      svc.timelines,
      [0, 1].map((i) => ({
        _id: `evt_era_${i}`,
        lovedOneId,
        workspaceId: 'x',
        source: 'partner' as const,
        institutionId: 'inst_test',
        eventType: 'vital_recorded',
        occurredAt: new Date(Date.UTC(2026, 10, 1, 10, i)),
        receivedAt: new Date(),
        payload: { vital_type: 'blood_pressure', systolic: 128 + i, diastolic: 82, unit: 'mmHg' },
      })),
    );
    CALLS.list_medications = { lovedOneId };
    CALLS.get_health_summary = { lovedOneId };
    CALLS.update_medication = { lovedOneId, action: 'add', medication: { name: 'Metformin', times: ['08:00'], timeZone: 'UTC' } };
    // The appointment and task tools need the loved one, and update_task a task to take.
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    const workspaceId = (await svc.store.db.collection('loved_ones').findOne<{ workspaceId: string }>({ _id: lovedOneId as never }))!.workspaceId;
    const task = await new PlansStore(svc.store.db, Date.now, svc.timelines).addTask(
      { workspaceId, lovedOneId },
      { title: 'Groceries', due: new Date(soon), timeZone: 'UTC' },
      { uid: 'x', name: 'x', via: 'app' },
    );
    Object.assign(CALLS, {
      add_appointment: { lovedOneId, title: 'Dentist', start: soon },
      list_appointments: { lovedOneId },
      add_task: { lovedOneId, title: 'Pharmacy', due: soon },
      update_task: { lovedOneId, taskId: task._id, action: 'take' },
      list_tasks: { lovedOneId },
      add_care_note: { lovedOneId, text: 'A quiet afternoon.' },
      log_medication_dose: { lovedOneId, medication: 'Metoprolol', status: 'given', amount: 25, unit: 'mg' },
      record_vital: { lovedOneId, kind: 'pulse', value: 72, unit: '/min' },
      retract_entry: { lovedOneId, entryId: '', reason: 'Written twice' },
    });
    endpoints = [
      { name: 'directory', url: `${svc.urls.site}/api/mcp`, headers: {}, tools: 3 },
      { name: 'sandbox', url: `${svc.config.appUrl}/api/mcp/public`, headers: {}, tools: 1 },
      { name: 'workspace', url: `${svc.config.appUrl}/api/mcp`, headers: { authorization: `Bearer ${apiKey}` }, tools: 16 },
    ];
  });
  afterAll(async () => {
    await svc?.stop();
  });

  async function connect(url: string, headers: Record<string, string>, modern: boolean): Promise<Client> {
    const client = new Client({ name: 'carecircle-era-test', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    return client;
  }

  for (const modern of [true, false]) {
    it(`when a ${modern ? '2026-07-28' : '2025-era'} client lists and calls every tool on each endpoint, then each answers with structured content that validates`, async () => {
      for (const e of endpoints) {
        const client = await connect(e.url, e.headers, modern);
        try {
          expect(client.getNegotiatedProtocolVersion(), e.name).toBe(modern ? MODERN : '2025-11-25');
          const { tools } = await client.listTools();
          expect(tools, e.name).toHaveLength(e.tools);
          for (const tool of tools) {
            expect(tool.outputSchema, tool.name).toBeDefined();
            let result = await client.callTool({ name: tool.name, arguments: CALLS[tool.name]! });
            // A consequential write waits for the person (this client cannot elicit): approved in Settings, then called again.
            if (result.isError && (result.content as { text?: string }[])[0]?.text?.startsWith('Waiting for the person to approve')) {
              expect(await approveWaiting(svc, owner)).toBe(1);
              result = await client.callTool({ name: tool.name, arguments: CALLS[tool.name]! });
            }
            expect(result.isError, `${tool.name}: ${JSON.stringify(result.content)}`).toBeFalsy();
            if (tool.name === 'list_care_events') expect((result.structuredContent as { count: number }).count).toBe(2);
            if (tool.name === 'add_care_note') CALLS.retract_entry!.entryId = (result.structuredContent as { entry: { id: string } }).entry.id;
            const validate = ajv.compile(tool.outputSchema!);
            expect(validate(result.structuredContent), `${tool.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
            expect((result.content as { type: string; text: string }[]).at(-1)!.text).toBe(JSON.stringify(result.structuredContent));
          }
        } finally {
          await client.close();
        }
      }
    });
  }

  describe('raw JSON errors of the 2026-07-28 revision', () => {
    const meta = (over: Record<string, unknown> = {}) => ({ [PV]: MODERN, [CAPS]: {}, ...over });
    const post = async (body: Record<string, unknown>, headers: Record<string, string>) => {
      const res = await fetch(endpoints[0]!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as any) : undefined };
    };
    const list = (m: Record<string, unknown> = meta()) => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: m } });
    const good = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' };

    it('when the request is well formed, then the result carries resultType, cache hints and serverInfo', async () => {
      const r = await post(list(), good);
      expect(r.status).toBe(200);
      expect(r.json.result).toMatchObject({
        resultType: 'complete',
        ttlMs: expect.any(Number),
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'carecircle-directory' } },
      });
      const d = await post({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: meta() } }, { ...good, 'mcp-method': 'server/discover' });
      expect(d.json.result).toMatchObject({
        resultType: 'complete',
        supportedVersions: expect.arrayContaining([MODERN, '2025-03-26']),
        capabilities: { tools: {} },
      });
    });

    it('when a header disagrees with the body or is missing, then 400 -32020', async () => {
      for (const headers of [
        { ...good, 'mcp-method': 'tools/call' },
        { 'mcp-method': 'tools/list' },
        { 'mcp-protocol-version': MODERN },
        { ...good, 'mcp-protocol-version': '2025-06-18' },
      ] as Record<string, string>[]) {
        const r = await post(list(), headers);
        expect(r.status, JSON.stringify(headers)).toBe(400);
        expect(r.json.error.code).toBe(-32020);
      }
      const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_channel', arguments: { slug: 'x' }, _meta: meta() } };
      for (const name of [undefined, 'search_care_resources', '=?base64?!!?=']) {
        const r = await post(call, { ...good, 'mcp-method': 'tools/call', ...(name ? { 'mcp-name': name } : {}) });
        expect(r.status).toBe(400);
        expect(r.json.error.code).toBe(-32020);
      }
      const encoded = await post(call, { ...good, 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('get_channel').toString('base64')}?=` });
      expect(encoded.status).toBe(200);
    });

    it('when the version is unknown, then 400 -32022 listing the supported ones', async () => {
      const r = await post(list(meta({ [PV]: '2099-01-01' })), { ...good, 'mcp-protocol-version': '2099-01-01' });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: -32022, data: { requested: '2099-01-01', supported: expect.arrayContaining([MODERN, '2025-11-25']) } });
    });

    it('when the envelope is incomplete, then 400 -32602', async () => {
      expect((await post(list({ [PV]: MODERN }), good)).json.error.code).toBe(-32602);
      const bare = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, good);
      expect(bare.status).toBe(400);
      expect(bare.json.error.code).toBe(-32602);
    });

    it('when the method is not part of the revision, then 404 -32601', async () => {
      for (const method of ['initialize', 'ping', 'resources/list']) {
        const r = await post({ jsonrpc: '2.0', id: 1, method, params: { _meta: meta() } }, { ...good, 'mcp-method': method });
        expect(r.status, method).toBe(404);
        expect(r.json.error.code).toBe(-32601);
      }
    });

    it('when the 2025 era asks initialize for an unknown version, then the newest it negotiates there', async () => {
      const r = await post(
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
        {},
      );
      expect(r.json.result.protocolVersion).toBe('2025-11-25');
    });
  });

  it('when an OAuth app holds only profile:read, then tools/list and server/discover show only what it can run, and calling the rest is refused with insufficient_scope', async () => {
    await caregiverWithKey(svc, 'scoped@example.com');
    const { tokens } = await connectedApp(svc, 'scoped@example.com', ['profile:read']);
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    for (const modern of [true, false]) {
      const client = await connect(endpoints[2]!.url, auth, modern);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(['get_user_profile', 'ping']);
      } finally {
        await client.close();
      }
    }
    const res = await fetch(endpoints[2]!.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover', ...auth },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { [PV]: MODERN, [CAPS]: {} } } }),
    });
    const discover = (await res.json()) as any;
    expect(discover.result).toMatchObject({ cacheScope: 'private', _meta: { 'dev.carecircle/tools': ['ping', 'get_user_profile'] } });
    // A tool it is not shown is refused by the server's call path, in the words every era gets.
    for (const name of ['list_loved_ones', 'list_care_events']) {
      const call = await fetch(endpoints[2]!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18', ...auth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: {} } }),
      });
      expect(call.status, name).toBe(403);
      expect(call.headers.get('www-authenticate'), name).toContain('error="insufficient_scope", scope="care_circle:read"');
      expect(((await call.json()) as any).error, name).toEqual({
        code: -32001,
        message: 'This tool needs the care_circle:read scope',
        data: { hint: 'Reconnect and approve care_circle:read.', scope: 'care_circle:read' },
      });
    }
  });
});
