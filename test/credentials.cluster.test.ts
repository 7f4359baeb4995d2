// Credentials served from memory in every worker, and revocation that still holds on the very next
// request everywhere: two gateways and two worker processes over NATS, a stream of requests on
// gateway B while the credential is revoked through gateway A.
import * as oauth from 'oauth4webapi';
import { describe, expect, it, vi } from 'vitest';
import { appCall, caregiverWithKey } from './harness/identity.js';
import type { TestService } from './harness/service.js';
import { twoGatewaysForFile } from './harness/twoGateways.js';
import { connectedApp, insecure } from './oauth.fixtures.js';

const deployment = twoGatewaysForFile('creds');

interface Outcome {
  startedAt: number;
  status: number;
}

/** Requests on gateway B from `clients` callers at once, each sending the next when its last is answered, until `stop()`. */
function streamOn(gateway: TestService, credential: string, clients: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const call = () =>
    fetch(`${gateway.urls.app}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } }),
    });
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      const startedAt = performance.now();
      const res = await call();
      await res.arrayBuffer();
      outcomes.push({ startedAt, status: res.status });
    }
  });
  return {
    outcomes,
    served: () => outcomes.filter((o) => o.status === 200).length,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Until `check` holds: under load each call of the stream may wait for the bus (see the timeout below). */
const until = (check: () => boolean) => vi.waitFor(() => expect(check()).toBe(true), { timeout: 60_000, interval: 10 });

// Under load a call may wait up to the deployment's 20 s bus budget (test/harness/twoGateways.ts).
describe('credentials - revocation across gateways and workers under load', { timeout: 90_000 }, () => {
  it('when a key is revoked on gateway A while gateway B serves a stream with it, then every request on B that starts after the revoke returned is refused', async () => {
    const { apiKey, keyId, cookie } = await caregiverWithKey(deployment().a, 'stream-key@example.com');
    const stream = streamOn(deployment().b, apiKey, 6);
    // Both workers have served the key (and so hold it in memory) before it is revoked.
    await until(() => stream.served() >= 40);
    const revoked = await appCall(deployment().a, cookie, 'POST', `/api/keys/${keyId}/revoke`);
    const returnedAt = performance.now();
    expect(revoked.json.key.status).toBe('revoked');
    await until(() => stream.outcomes.filter((o) => o.startedAt > returnedAt).length >= 40);
    await stream.stop();

    const after = stream.outcomes.filter((o) => o.startedAt > returnedAt);
    expect(after.map((o) => o.status)).toEqual(after.map(() => 403));
    expect(stream.outcomes.filter((o) => o.startedAt < returnedAt && o.status === 200).length).toBeGreaterThanOrEqual(40);
  });

  it('when an OAuth access token is revoked at /oauth/revoke on gateway A while gateway B serves a stream with it, then every request on B that starts after the revoke returned is 401', async () => {
    const { as, reg, tokens } = await connectedApp(deployment().a, 'stream-token@example.com');
    const stream = streamOn(deployment().b, tokens.access_token, 6);
    await until(() => stream.served() >= 40);
    const res = await oauth.revocationRequest(as, reg.client, oauth.None(), tokens.access_token, {
      additionalParameters: { token_type_hint: 'access_token' },
      ...insecure,
    });
    const returnedAt = performance.now();
    expect(res.status).toBe(200);
    await until(() => stream.outcomes.filter((o) => o.startedAt > returnedAt).length >= 40);
    await stream.stop();

    const after = stream.outcomes.filter((o) => o.startedAt > returnedAt);
    expect(after.map((o) => o.status)).toEqual(after.map(() => 401));
    expect(stream.outcomes.filter((o) => o.startedAt < returnedAt && o.status === 200).length).toBeGreaterThanOrEqual(40);
  });
});
