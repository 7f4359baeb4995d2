// A database outage is transient: every surface answers 503 with Retry-After in its own error
// format while the database is down, and serves again once it is back. A private FerretDB, so
// stopping it disturbs no other test.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { caregiverWithKey } from './harness/identity.js';
import { startPrivateFerretDb, type PrivateFerretDb } from './harness/privateFerretDb.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let db: PrivateFerretDb | undefined;
let svc: TestService;

beforeAll(async () => {
  db = await startPrivateFerretDb('outage');
  // A bus timeout above the driver's server-selection timeout (5 s): the worker's own answer arrives.
  svc = await startTestService({ nats: true, mongoUrl: db.url('carecircle_outage'), env: { BUS_TIMEOUT_MS: '15000', GATEWAY_RETRY_WINDOW_MS: '20000' } });
});
afterAll(async () => {
  await svc?.stop();
  await db?.remove();
});

describe('database outage', () => {
  it(
    'when the database is down, then the workspace MCP endpoint, the site API and the app answer 503 with Retry-After, and serve again once it is back',
    { timeout: 90_000 },
    async () => {
      const { apiKey, cookie } = await caregiverWithKey(svc, 'outage@example.com');
      const mcp = `${svc.urls.app}/api/mcp`;
      const calls = {
        workspaceKey: () => postJson(mcp, rpc('tools/call', { name: 'list_loved_ones', arguments: {} }, 'outage-1'), { authorization: `Bearer ${apiKey}` }),
        workspaceSession: () => postJson(mcp, rpc('tools/call', { name: 'list_loved_ones', arguments: {} }, 'outage-2'), { cookie }),
        siteApi: () =>
          fetch(`${svc.urls.site}/api/community?channel=respite-and-burnout`).then(async (r) => ({
            status: r.status,
            headers: r.headers,
            json: (await r.json()) as any,
          })),
        app: () =>
          fetch(`${svc.urls.app}/api/workspace`, { headers: { cookie } }).then(async (r) => ({
            status: r.status,
            headers: r.headers,
            json: (await r.json()) as any,
          })),
      };
      for (const call of Object.values(calls)) expect((await call()).status).toBe(200);

      await db!.stop();
      const [workspaceKey, workspaceSession, siteApi, app] = await Promise.all(Object.values(calls).map((c) => c()));
      for (const [name, res] of Object.entries({ workspaceKey, workspaceSession, siteApi, app })) {
        expect({ name, status: res!.status }).toEqual({ name, status: 503 });
        expect({ name, retryAfter: Number(res!.headers.get('retry-after')) > 0 }).toEqual({ name, retryAfter: true });
      }
      expect(workspaceKey!.json).toMatchObject({ id: 'outage-1', error: { code: RPC.UNAVAILABLE } });
      expect(workspaceSession!.json).toMatchObject({ id: 'outage-2', error: { code: RPC.UNAVAILABLE } });
      expect(siteApi!.json).toMatchObject({ code: 'UNAVAILABLE', error: { code: 'UNAVAILABLE' } });
      expect(app!.json).toMatchObject({ code: 'UNAVAILABLE', error: { code: 'UNAVAILABLE' } });

      await db!.start();
      for (const [name, call] of Object.entries(calls))
        await vi.waitFor(async () => expect({ name, status: (await call()).status }).toEqual({ name, status: 200 }), { timeout: 30_000, interval: 250 });
    },
  );
});
