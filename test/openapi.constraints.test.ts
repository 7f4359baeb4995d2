// The OpenAPI document states the constraints the server enforces: for each constrained input, a
// value the document's schema accepts is not refused as invalid by the server, and a value it
// rejects is answered 400 naming the field.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';

type Json = Record<string, any>;

describe('openapi.json and the server agree on what is valid', () => {
  let svc: TestService;
  let doc: Json;
  const ajv = new Ajv({ strict: false });

  beforeAll(async () => {
    svc = await startTestService();
    doc = (await (await fetch(`${svc.urls.site}/openapi.json`)).json()) as Json;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const deref = (schema: Json): Json => (schema.$ref ? deref(schema.$ref.split('/').slice(1).reduce((o: Json, k: string) => o[k], doc)) : schema);
  const parameter = (path: string, method: string, name: string): Json => deref(doc.paths[path][method].parameters.find((p: Json) => p.name === name).schema);
  /** A property of the request body; of its first alternative when the body is one of several shapes. */
  const bodyProperty = (path: string, method: string, property: string): Json => {
    const body = deref(doc.paths[path][method].requestBody.content['application/json'].schema);
    return deref(deref(body.oneOf ? body.oneOf[0] : body).properties[property]);
  };

  /** Whether the document accepts `value`, and whether the server answers it without a 400. */
  async function agree(schema: Json, values: unknown[], send: (v: unknown) => Promise<{ status: number; text: string }>, field: string) {
    for (const value of values) {
      const documented = ajv.validate(schema, value);
      const res = await send(value);
      expect(res.status !== 400, `${field}=${JSON.stringify(value)}: the document says ${documented ? 'valid' : 'invalid'}, the server answered ${res.status} ${res.text.slice(0, 200)}`).toBe(documented);
      if (!documented) expect(res.text, field).toMatch(new RegExp(field === 'method' ? 'method|Invalid Request' : field));
    }
  }

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
    await agree(parameter('/api/md', 'get', 'path'), ['', 'calculator', '/calculator', `${svc.config.siteUrl}/calculator`, 'http://elsewhere.example/calculator', `/${'a'.repeat(2048)}`], send, 'path');
  });

  it('when idToken is empty, too long or present, then the session API and the document agree', async () => {
    const send = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: svc.config.siteUrl }, body: JSON.stringify({ idToken: v }) });
      return { status: res.status, text: await res.text() };
    };
    await agree(bodyProperty('/api/auth/session', 'post', 'idToken'), ['', 'not-a-token', 'x'.repeat(8193)], send, 'idToken');
  });

  it('when a JSON-RPC method is empty, then the directory MCP endpoint and the document agree', async () => {
    const send = async (v: unknown) => {
      const res = await fetch(`${svc.urls.site}/api/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: v }) });
      return { status: res.status, text: await res.text() };
    };
    await agree(bodyProperty('/api/mcp', 'post', 'method'), ['', 'ping'], send, 'method');
  });
});
