// The auth host answers exactly the routes its slices declare: the routers it mounts hold nothing
// else, every declared route is live, and every endpoint the metadata advertises is declared.
import type Router from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthHostApp } from '../src/gateway/hosts.js';
import { listenerBasics } from '../src/gateway/middleware.js';
import { openLimiter } from '../src/limits/index.js';
import { createLogger } from '../src/log.js';
import { compilePath, type SliceContext } from '../src/slice/contract.js';
import { SLICES } from '../src/slices.js';
import { authEndpointsOf } from './fuzz.inputs.js';
import { startTestService, type TestService } from './harness/service.js';

const declared = authEndpointsOf(SLICES);
const isDeclared = (method: string, path: string) => declared.some((e) => e.path === path && e.methods.includes(method as never));
/** The declared route a concrete path and method fall under. */
const declaredFor = (method: string, path: string) => declared.some((e) => compilePath(e.path).pattern.test(path) && e.methods.includes(method as never));

describe('auth routes - the auth host answers what its slices declare', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  it('when the auth host is built, then its only middleware past the listener basics are routers of declared routes', () => {
    const log = createLogger('silent');
    const limiter = openLimiter(svc.bus, svc.config.busNamespace, log);
    const deps = { config: svc.config, log, bus: svc.bus, store: svc.store, limiter };
    const ctx: SliceContext = { ...deps, db: svc.store.db, timelines: svc.timelines, credentials: svc.credentials, clock: Date.now, slices: SLICES };
    const app = createAuthHostApp(deps, SLICES, ctx);
    const mounted = app.middleware.slice(listenerBasics(deps, 'auth').length, -1) as unknown as { router?: Router }[];
    const routers = mounted.flatMap((m) => (m.router ? [m.router] : []));
    const withAllowedMethods = SLICES.flatMap((s) => s.listeners ?? []).filter((l) => l.allowedMethods).length;
    // Nothing but the routers (and the 405 answer behind a listener that asks for one) sits between the basics and the 404.
    expect(mounted.length).toBe(routers.length + withAllowedMethods);
    const layers = routers.flatMap((r) => r.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path)}`)));
    expect(layers.filter((l) => !isDeclared(l.split(' ')[0]!, l.split(' ')[1]!))).toEqual([]);
    expect(layers.length).toBe(declared.reduce((n, e) => n + e.methods.length, 0));
  });

  it('when each declared route is called, then its slice answers it, not the host 404', async () => {
    const unanswered: string[] = [];
    for (const e of declared)
      for (const method of e.methods) {
        const res = await fetch(`${svc.urls.auth}${e.path.replace(/:[A-Za-z]+/g, 'x')}`, {
          method,
          redirect: 'manual',
          ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' } : {}),
        });
        const text = await res.text();
        if (res.status === 404 && text.includes('This host serves sign-in and OAuth.')) unanswered.push(`${method} ${e.path}`);
      }
    expect(unanswered).toEqual([]);
  });

  it('when the authorization server metadata is read, then every endpoint it advertises is a declared route', async () => {
    const meta = (await (await fetch(`${svc.urls.auth}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    const endpoints = Object.entries(meta).filter(([k, v]) => (k.endsWith('_endpoint') || k === 'jwks_uri') && typeof v === 'string');
    expect(endpoints.length).toBeGreaterThanOrEqual(4);
    for (const [key, url] of endpoints) {
      const path = new URL(url as string).pathname;
      const method = key === 'authorization_endpoint' || key === 'jwks_uri' ? 'GET' : 'POST';
      expect({ key, declared: declaredFor(method, path) }).toEqual({ key, declared: true });
    }
  });

  it('when the pages of the authorization server link their stylesheet and script, then both are declared', () => {
    expect(isDeclared('GET', '/oauth/assets/oauth.css')).toBe(true);
    expect(isDeclared('GET', '/oauth/assets/oauth.js')).toBe(true);
  });
});
