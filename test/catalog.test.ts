// What the site advertises about the app host's MCP endpoints must be what they serve.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_MCP_TOOLS } from '../src/site/catalog.js';
import { caregiverWithKey } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

describe('discovery catalog - app host tools', () => {
  it("when the workspace endpoint lists its tools, then they are the catalog's, in order", async () => {
    const { apiKey } = await caregiverWithKey(svc, 'catalog@example.com');
    const res = await postJson(`${svc.urls.app}/api/mcp`, rpc('tools/list'), { authorization: `Bearer ${apiKey}` });
    expect(res.json.result.tools.map((t: { name: string }) => t.name)).toEqual(APP_MCP_TOOLS.workspace.map((t) => t.name));
  });

  it("when the sandbox endpoint lists its tools, then they are the catalog's", async () => {
    const res = await postJson(`${svc.urls.app}/api/mcp/public`, rpc('tools/list'));
    expect(res.json.result.tools.map((t: { name: string }) => t.name)).toEqual(APP_MCP_TOOLS.sandbox.map((t) => t.name));
  });
});
