// The OpenAPI document states the constraints the server enforces: for each constrained input, a
// value the document's schema accepts is not refused as invalid by the server, and a value it
// rejects is answered 400 naming the field.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';
import { MODERN_PROTOCOL_VERSIONS } from '../src/rpc/versions.js';
import { family, onboard, postEvent, shareWith, TEST_DATA_KEY } from './ingest.fixtures.js';

type Json = Record<string, any>;
const MODERN = MODERN_PROTOCOL_VERSIONS[0];

describe('openapi.json and the server agree on what is valid', () => {
  let svc: TestService;
  let doc: Json;
  const ajv = new Ajv({ strict: false });

  beforeAll(async () => {
    svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
    doc = (await (await fetch(`${svc.urls.site}/openapi.json`)).json()) as Json;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const deref = (schema: Json): Json =>
    schema.$ref
      ? deref(
          schema.$ref
            .split('/')
            .slice(1)
            .reduce((o: Json, k: string) => o[k], doc),
        )
      : schema;
  /** The schema with every reference replaced by what it names, for a validator that has only it. */
  const inline = (schema: unknown): unknown =>
    Array.isArray(schema)
      ? schema.map(inline)
      : schema && typeof schema === 'object'
        ? Object.fromEntries(Object.entries(deref(schema as Json)).map(([k, v]) => [k, inline(v)]))
        : schema;
  const parameter = (path: string, method: string, name: string): Json => deref(doc.paths[path][method].parameters.find((p: Json) => p.name === name).schema);
  /** A property of the request body; of its first alternative when the body is one of several shapes. */
  const bodyProperty = (path: string, method: string, property: string): Json => {
    const body = deref(doc.paths[path][method].requestBody.content['application/json'].schema);
    return deref(deref(body.oneOf ? body.oneOf[0] : body).properties[property]);
  };

  /** The whole request body's schema. */
  const body = (path: string, method: string): Json => deref(doc.paths[path][method].requestBody.content['application/json'].schema);

  /** Whether the document accepts `value`, and whether the server answers it without a 400 (whose text must match `named`). */
  async function agree(
    schema: Json,
    values: unknown[],
    send: (v: unknown) => Promise<{ status: number; text: string }>,
    field: string,
    named = new RegExp(field),
  ) {
    for (const value of values) {
      const documented = ajv.validate(inline(schema) as Json, value);
      const res = await send(value);
      expect(
        res.status !== 400,
        `${field}=${JSON.stringify(value)}: the document says ${documented ? 'valid' : 'invalid'}, the server answered ${res.status} ${res.text.slice(0, 200)}`,
      ).toBe(documented);
      if (!documented) expect(res.text, field).toMatch(named);
    }
  }

  const mcp = async (payload: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${svc.urls.site}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(payload),
    });
    return { status: res.status, text: await res.text() };
  };
  /** A 2026-07-28 request, its headers equal to the body except those given. */
  const modern = (method: string, params: Json = {}) => ({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } },
  });

  it('when threadId is empty, blank or a thread id, then the community API and the document agree', async () => {
    const send = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/community?channel=dementia-and-alzheimers&threadId=${encodeURIComponent(String(v))}`);
      return { status: res.status, text: await res.text() };
    };
    await agree(parameter('/api/community', 'get', 'threadId'), ['', '   ', 'thr_unknown', 'x'.repeat(65)], send, 'threadId');
  });

  it('when path does not start with / or names another site, then /api/md and the document agree', async () => {
    const send = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/md?path=${encodeURIComponent(String(v))}`);
      return { status: res.status, text: await res.text() };
    };
    await agree(
      parameter('/api/md', 'get', 'path'),
      ['', 'calculator', '/calculator', `${svc.config.siteUrl}/calculator`, 'http://elsewhere.example/calculator', `/${'a'.repeat(2048)}`],
      send,
      'path',
    );
  });

  it('when a care event names its aide blank, too long, not as text or by name, then the partner ingest and the document agree', async () => {
    const partner = await onboard(svc.store.db, svc.credentials, 'Evergreen Home Care');
    await shareWith(svc, partner, 'client-1', await family(svc.store.db, svc.credentials, svc.config));
    let n = 0;
    const sendAs = (payload: (v: unknown) => Json) => async (v: unknown) => {
      const event = {
        institution_id: partner.institutionId,
        subject_ref: 'client-1',
        event_type: 'med_administered',
        occurred_at: new Date().toISOString(),
        payload: payload(v),
        source_event_id: `openapi-${n++}`,
      };
      const r = await postEvent(svc.urls.pipe!, partner, event);
      return { status: r.status, text: JSON.stringify(r.json) };
    };
    const dose = { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'cg-2210' };
    const schema = doc.components.schemas.MedAdministeredPayload;
    const name = sendAs((v) => ({ ...dose, caregiver_name: v }));
    await agree(schema.properties.caregiver_name, ['', '   ', 'Ana Souza', ' Ana ', 'x'.repeat(200), 'x'.repeat(201), 5, null], name, 'payload.caregiver_name');
    // The aide's internal id stays required, and is checked as the document says.
    await agree(
      schema.properties.administered_by,
      ['', ' ', 'cg-2210', 'x'.repeat(201)],
      sendAs((v) => ({ ...dose, administered_by: v })),
      'payload.administered_by',
    );
    expect(schema.required).toContain('administered_by');
    expect(schema.required).not.toContain('caregiver_name');
    for (const type of ['VisitStarted', 'VisitEnded', 'NoteAdded', 'VitalRecorded'])
      expect(doc.components.schemas[`${type}Payload`].properties.caregiver_name).toEqual(schema.properties.caregiver_name);
  });

  it('when idToken is empty, too long or present, then the session API and the document agree', async () => {
    const send = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: svc.config.siteUrl },
        body: JSON.stringify({ idToken: v }),
      });
      return { status: res.status, text: await res.text() };
    };
    await agree(bodyProperty('/api/auth/session', 'post', 'idToken'), ['', 'not-a-token', 'x'.repeat(8193)], send, 'idToken');
  });

  it('when a JSON-RPC method is empty, then the directory MCP endpoint and the document agree', async () => {
    const send = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: v }),
      });
      return { status: res.status, text: await res.text() };
    };
    await agree(bodyProperty('/api/mcp', 'post', 'method'), ['', 'ping'], send, 'method', /method|Invalid Request/);
  });

  it('when a JSON-RPC batch is empty, then the directory MCP endpoint and the document agree', async () => {
    const send = (v: unknown) => mcp(v, { 'mcp-protocol-version': '2025-03-26' });
    await agree(body('/api/mcp', 'post'), [[], [{ jsonrpc: '2.0', id: 1, method: 'ping' }]], send, 'batch');
  });

  it('when path or x-md-original-path leads off the site, has a backslash or a control character, then /api/md and the document agree', async () => {
    const offSite = [
      '//2p',
      '//elsewhere.example/calculator',
      '/\\elsewhere.example',
      '/\\2p',
      '/\t/2p',
      '/\n/elsewhere.example',
      '/calc\rulator',
      '/calculator\u007f',
      '/calculator',
      '/calculator?careType=assisted_living',
      '/resources/x//y',
    ];
    const query = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/md?path=${encodeURIComponent(String(v))}`);
      return { status: res.status, text: await res.text() };
    };
    await agree(parameter('/api/md', 'get', 'path'), offSite, query, 'path');
    // HTTP lets a header carry no control character but the tab: the values a header can carry.
    const header = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/md`, { headers: { 'x-md-original-path': String(v) } });
      return { status: res.status, text: await res.text() };
    };
    await agree(
      parameter('/api/md', 'get', 'x-md-original-path'),
      offSite.filter((v) => [...v].every((c) => c === '\t' || (c >= ' ' && c !== '\u007f'))),
      header,
      'x-md-original-path',
    );
  });

  it('when x-md-original-path, Mcp-Method, Mcp-Name or MCP-Protocol-Version is empty, then the server reads it as absent and the document allows it', async () => {
    const md = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/md`, { headers: { 'x-md-original-path': String(v) } });
      return { status: res.status, text: await res.text() };
    };
    await agree(parameter('/api/md', 'get', 'x-md-original-path'), ['', '/calculator'], md, 'x-md-original-path');
    // tools/list carries no name: an empty Mcp-Name is no Mcp-Name, which that method does not need.
    await agree(
      parameter('/api/mcp', 'post', 'Mcp-Name'),
      ['', 'search_care_resources'],
      (v) => mcp(modern('tools/list'), { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list', 'mcp-name': String(v) }),
      'Mcp-Name',
    );
    // A 2025 request does not need Mcp-Method: empty is the same as leaving it out.
    await agree(
      parameter('/api/mcp', 'post', 'Mcp-Method'),
      ['', 'ping'],
      (v) => mcp({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-method': String(v) }),
      'Mcp-Method',
    );
    await agree(
      parameter('/api/mcp', 'post', 'MCP-Protocol-Version'),
      ['', '2025-03-26', '1999-01-01'],
      (v) => mcp({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': String(v) }),
      'MCP-Protocol-Version',
    );
    // Where the header is required, empty is refused as missing: the description says so.
    const call = modern('tools/call', { name: 'search_care_resources', arguments: { query: 'respite' } });
    const missing = await mcp(call, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': '' });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.text).toMatch(/Mcp-Name header is missing/);
    expect(doc.paths['/api/mcp'].post.parameters.find((p: Json) => p.name === 'Mcp-Name').description).toMatch(/empty value counts as absent/);
  });

  it('when the URL is longer than the HTTP server reads, then the answer is the 431 every operation lists', async () => {
    const res = await fetch(`${svc.urls.site}/api/md?path=/${'a'.repeat(20_000)}`);
    expect(res.status).toBe(431);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>))
      for (const [method, operation] of Object.entries(item))
        expect(operation.responses['431'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/HeaderFieldsTooLarge' });
    expect(doc.components.responses.HeaderFieldsTooLarge.description).toMatch(/16 KB/);
  });
});
