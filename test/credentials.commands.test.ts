// What a steady-state workspace request costs the store: the driver's command monitoring on the
// service's own client shows that no credential is read once a process has seen it.
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_KEY_HASHES, API_KEYS } from '../src/keys/keys.js';
import { SESSIONS } from '../src/auth/sessions.js';
import { WORKSPACE_COLLECTIONS } from '../src/family/records.js';
import { OAUTH_REVOKED_ACCESS_TOKENS } from '../src/oauth/revokedTokens.js';
import { oauthCollection } from '../src/oauth/store.js';
import { caregiverWithKey } from './harness/identity.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import { connectedApp } from './oauth.fixtures.js';

const CREDENTIAL_COLLECTIONS = new Set([API_KEYS, API_KEY_HASHES, SESSIONS, OAUTH_REVOKED_ACCESS_TOKENS, oauthCollection('Grant')]);
/** The caller's account (email, tenant; the whole record) is kept a minute per process too (the
 *  look-up of the caller's workspace, when it misses, reads `users` with a projection). */
const ACCOUNT_READS = (c: { name: string; collection: string; projected: boolean }) =>
  c.collection === WORKSPACE_COLLECTIONS.users && c.name === 'find' && !c.projected;

let svc: TestService;
const commands: { name: string; collection: string; projected: boolean }[] = [];

beforeAll(async () => {
  const url = new URL(freshDatabaseUrl(inject('mongoUrl')));
  url.searchParams.set('monitorCommands', 'true');
  svc = await startTestService({ mongoUrl: url.toString(), env: { RATE_MCP_KEY_PER_MIN: '100000' } });
  // The minute run's sweeps (expired sessions among them) are not requests: none may tick inside
  // the window of commands the test counts.
  await svc.cron?.stop();
  svc.store.client.on('commandStarted', (e: CommandStartedEvent) =>
    commands.push({ name: e.commandName, collection: String(e.command[e.commandName]), projected: e.command.projection !== undefined }),
  );
});
afterAll(async () => {
  await svc?.stop();
});

const call = (credential: { authorization?: string; cookie?: string }) =>
  fetch(`${svc.urls.app}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credential },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_loved_ones', arguments: {} } }),
  });

/** The commands ten steady-state requests send, after one that fills the process's memory. */
async function steadyState(credential: { authorization?: string; cookie?: string }) {
  expect((await call(credential)).status).toBe(200);
  commands.length = 0;
  for (let i = 0; i < 10; i++) expect((await call(credential)).status).toBe(200);
  return commands.splice(0);
}

describe('credentials - no store read per request', () => {
  it('when a key, a session cookie or an OAuth access token calls again, then no command touches a credential collection', async () => {
    const { apiKey, cookie } = await caregiverWithKey(svc, 'steady@example.com');
    const { tokens } = await connectedApp(svc, 'steady-oauth@example.com');
    for (const credential of [{ authorization: `Bearer ${apiKey}` }, { cookie }, { authorization: `Bearer ${tokens.access_token}` }]) {
      const sent = await steadyState(credential);
      // The requests did reach the store (the tool reads the family), so monitoring saw them.
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.filter((c) => CREDENTIAL_COLLECTIONS.has(c.collection))).toEqual([]);
      expect(sent.filter(ACCOUNT_READS)).toEqual([]);
    }
  });
});
