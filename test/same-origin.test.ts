// Same-origin protection is a property of a route: every cookie-authenticated change declares it,
// and the gateway refuses a foreign Origin on each declared route before a worker sees it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathsOf, sameOriginsOf, type RouteSpec } from '../src/slice/contract.js';
import { SLICES } from '../src/slices.js';
import { startTestService, type TestService } from './harness/service.js';

const routes: [string, RouteSpec][] = SLICES.flatMap((s) => Object.entries(s.routes ?? {}).map(([name, r]) => [`${s.name}.${name}`, r] as [string, RouteSpec]));
const changes = (r: RouteSpec) => r.methods.some((m) => m !== 'GET');
/** A concrete path of a route, its parameters filled in. */
const concrete = (r: RouteSpec) => pathsOf(r)[0]!.replace(/:([A-Za-z]+)/g, 'x1');

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

describe('same-origin protection, declared per route', () => {
  it('when a site or app API route or page takes changes with the session cookie, then it declares same-origin protection', () => {
    // MCP endpoints have the MCP Origin rule of their edge (MCP_ALLOWED_ORIGINS) instead.
    const undeclared = routes
      .filter(
        ([, r]) =>
          (r.edge ?? 'api') === 'api' &&
          changes(r) &&
          r.forwardHeaders?.includes('cookie') &&
          r.hosts.some((h) => h === 'site' || h === 'app') &&
          !r.sameOrigin,
      )
      .map(([n]) => n);
    expect(undeclared).toEqual([]);
  });

  it("when another site's page posts to any route that declares it, then the gateway answers 403 FORBIDDEN with the route's hint", async () => {
    const flagged = routes.filter(([, r]) => r.sameOrigin && changes(r));
    expect(flagged.length).toBeGreaterThan(20);
    for (const [name, r] of flagged) {
      const host = r.hosts.includes('app') ? 'app' : 'site';
      const origins = sameOriginsOf(r.sameOrigin!, svc.config).join(' or ');
      for (const origin of ['https://evil.example', 'null']) {
        const res = await fetch(`${svc.urls[host]}${concrete(r)}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { origin, cookie: 'cc_session=whatever', 'content-type': 'application/json' },
          body: '{}',
        });
        expect(res.status, `${name} ${origin}`).toBe(403);
        expect(await res.json(), name).toEqual({
          error: { code: 'FORBIDDEN', message: 'Cross-origin request refused', hint: r.sameOrigin!.hint(origins) },
          code: 'FORBIDDEN',
          message: 'Cross-origin request refused',
          hint: r.sameOrigin!.hint(origins),
        });
      }
    }
  });

  it('when a declared route is posted without Origin, then only a route that lets servers call it passes the edge', async () => {
    for (const [name, r] of routes.filter(([, x]) => x.sameOrigin && changes(x))) {
      const host = r.hosts.includes('app') ? 'app' : 'site';
      const res = await fetch(`${svc.urls[host]}${concrete(r)}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      if (r.sameOrigin!.allowMissing) expect(res.status, name).not.toBe(403);
      else expect(res.status, name).toBe(403);
      await res.body?.cancel();
    }
  });
});
