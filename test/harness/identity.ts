// Signing in through the development identity provider over real HTTP, as a browser would.
import type { TestService } from './service.js';

/** What these helpers use of a running service: its listener URLs and configuration. */
type Reachable = Pick<TestService, 'urls' | 'config'>;

/** An ID token from the development provider's sign-in form. */
export async function devIdToken(svc: Reachable, email: string, name = 'Test Caregiver'): Promise<string> {
  const returnTo = `${svc.config.appUrl}/auth/callback?next=/`;
  const res = await fetch(`${svc.urls.auth}/dev/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, name, return_to: returnTo }).toString(),
    redirect: 'manual',
  });
  if (res.status !== 303) throw new Error(`dev sign-in answered ${res.status}: ${await res.text()}`);
  const token = new URL(res.headers.get('location')!).hash.replace(/^#id_token=/, '');
  if (!token) throw new Error('dev sign-in returned no token');
  return token;
}

/** A `cc_session=…` cookie for `email`, from POST /api/auth/session on the app host. */
export async function signIn(svc: Reachable, email: string, name?: string): Promise<string> {
  const res = await fetch(`${svc.urls.app}/api/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ idToken: await devIdToken(svc, email, name) }),
  });
  const cookie = res.headers.get('set-cookie');
  if (res.status !== 200 || !cookie) throw new Error(`session answered ${res.status}: ${await res.text()}`);
  return cookie.split(';')[0]!;
}

/** A JSON call to the app host as a signed-in page would make it (cookie + same Origin). */
export async function appCall(svc: Reachable, cookie: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${svc.urls.app}${path}`, {
    method,
    headers: { cookie, origin: new URL(svc.config.appUrl).origin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as any) : undefined };
}

/** A signed-in caregiver with a workspace, a loved one and a minted API key. */
/** A caregiver with a workspace and an API key: read-and-write unless asked otherwise (the app mints read-only by default). */
export async function caregiverWithKey(
  svc: Reachable,
  email: string,
  lovedOne = { firstName: 'Rosa', lastName: 'Rivera' },
  access: 'read' | 'read-write' = 'read-write',
) {
  const cookie = await signIn(svc, email);
  const ws = await appCall(svc, cookie, 'POST', '/api/workspace', { familyName: `Family of ${email}`, ...lovedOne });
  if (ws.status !== 201) throw new Error(`workspace answered ${ws.status}: ${JSON.stringify(ws.json)}`);
  const key = await appCall(svc, cookie, 'POST', '/api/keys', { name: 'test', access });
  if (key.status !== 201) throw new Error(`key answered ${key.status}: ${JSON.stringify(key.json)}`);
  return {
    cookie,
    apiKey: key.json.apiKey as string,
    keyId: key.json.key.id as string,
    workspaceId: ws.json.workspace.id as string,
    lovedOneId: ws.json.lovedOne.id as string,
  };
}

/** Approves every change waiting for this person under Settings → Waiting for you, as the Approve
 *  button does; the number approved. */
export async function approveWaiting(svc: Reachable, cookie: string): Promise<number> {
  const page = await (await fetch(`${svc.urls.app}/settings`, { headers: { cookie } })).text();
  const actions = [...page.matchAll(/action="(\/settings\/waiting\/[^"]+\/approve)"/g)].map((m) => m[1]!);
  for (const action of actions) {
    const res = await fetch(`${svc.urls.app}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    if (res.status !== 303) throw new Error(`approving ${action} answered ${res.status}`);
  }
  return actions.length;
}

/** A write through the workspace MCP that the person confirms in the app when it asks: called,
 *  approved in Settings when it waits for them, and called again. */
export async function callApproved(svc: Reachable, cookie: string, call: () => Promise<{ status: number; json: any }>): Promise<{ status: number; json: any }> {
  const first = await call();
  const text = first.json?.result?.content?.[0]?.text;
  if (!(first.json?.result?.isError && typeof text === 'string' && text.startsWith('Waiting for the person to approve'))) return first;
  if ((await approveWaiting(svc, cookie)) === 0) throw new Error(`nothing was waiting to approve: ${text}`);
  return call();
}
