// A change sent again after its answer was lost (a 503 from a gateway that stopped waiting while
// the worker finished, a closed tab, a double click) lands on the first attempt's result: creating
// a workspace and removing a member, over real HTTP, NATS and FerretDB.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_COLLECTIONS, type WorkspaceRecord } from '../src/family/records.js';
import { databaseName } from '../src/store/mongo.js';
import { appCall, caregiverWithKey, signIn } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';

let svc: TestService;
let mongo: MongoClient;
let db: Db;

beforeAll(async () => {
  svc = await startTestService({ nats: true });
  mongo = await new MongoClient(svc.mongoUrl).connect();
  db = mongo.db(databaseName(svc.mongoUrl));
});
afterAll(async () => {
  await mongo?.close();
  await svc?.stop();
});

const origin = () => new URL(svc.config.appUrl).origin;
const get = async (cookie: string, path: string) => {
  const res = await fetch(`${svc.urls.app}${path}`, { redirect: 'manual', headers: { cookie } });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};
const post = async (cookie: string, path: string, body: Record<string, string> = {}) => {
  const res = await fetch(`${svc.urls.app}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};
const createWorkspace = async (cookie: string, body: Record<string, string>, key?: string) => {
  const res = await fetch(`${svc.urls.app}/api/workspace`, {
    method: 'POST',
    headers: { cookie, origin: origin(), 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};
const uidOf = async (cookie: string) => (await appCall(svc, cookie, 'GET', '/api/auth/me')).json.uid as string;
const workspacesOf = (uid: string) => db.collection<WorkspaceRecord>(WORKSPACE_COLLECTIONS.workspaces).find({ ownerUid: uid }).toArray();
const lovedOnesIn = (workspaceId: string) => db.collection(WORKSPACE_COLLECTIONS.lovedOnes).countDocuments({ workspaceId });

describe('retries - creating a workspace', () => {
  it('when POST /api/workspace is sent again with its Idempotency-Key, then the same 201 and one workspace; a new key with the same names still gets 409', async () => {
    const cookie = await signIn(svc, 'api.retry@example.com');
    const names = { familyName: 'The Retry Family', firstName: 'Rosa', lastName: 'Retry' };
    const first = await createWorkspace(cookie, names, 'create-ws-1');
    expect(first.status).toBe(201);
    const again = await createWorkspace(cookie, names, 'create-ws-1');
    expect(again).toEqual(first);

    const uid = await uidOf(cookie);
    expect((await workspacesOf(uid)).map((w) => w._id)).toEqual([first.json.workspace.id]);
    expect(await lovedOnesIn(first.json.workspace.id)).toBe(1);
    // A new submission, or the same key with other names, is not a retry: as without a key.
    expect((await createWorkspace(cookie, names, 'create-ws-2')).status).toBe(409);
    expect((await createWorkspace(cookie, { ...names, firstName: 'Walt' }, 'create-ws-1')).status).toBe(409);
    expect((await createWorkspace(cookie, names)).status).toBe(409);
    expect(await workspacesOf(uid)).toHaveLength(1);
    expect((await createWorkspace(cookie, names, 'has space')).json).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringMatching(/^Idempotency-Key: /),
    });
  });

  it('when the onboarding form is sent several times at once and again later, then each goes home and one workspace with one loved one exists', async () => {
    const cookie = await signIn(svc, 'form.retry@example.com');
    const form = await get(cookie, '/onboarding');
    const formToken = /name="formToken" value="([^"]+)"/.exec(form.html)?.[1];
    expect(formToken).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const fields = { formToken: formToken!, familyName: 'The Double Click Family', firstName: 'Ada', lastName: 'Click' };

    const sent = await Promise.all(Array.from({ length: 4 }, () => post(cookie, '/onboarding', fields)));
    expect(sent.map((r) => [r.status, r.location])).toEqual(Array(4).fill([303, '/']));
    expect(await post(cookie, '/onboarding', fields)).toMatchObject({ status: 303, location: '/' });

    const workspaces = await workspacesOf(await uidOf(cookie));
    expect(workspaces).toHaveLength(1);
    expect(await lovedOnesIn(workspaces[0]!._id)).toBe(1);
    expect((await appCall(svc, cookie, 'GET', '/api/workspace')).json.workspace).toMatchObject({
      id: workspaces[0]!._id,
      name: 'The Double Click Family',
      role: 'caregiver',
    });
    // With the workspace made, the form is not offered again.
    expect((await get(cookie, '/onboarding')).location).toBe('/');
  });
});

describe('retries - removing a member', () => {
  it('when a removal is sent again after it was done, then the same redirect, and the member and their credentials were changed once', async () => {
    const cg = await caregiverWithKey(svc, 'remove.retry@example.com');
    const sent = await post(cg.cookie, '/family/invites', { email: 'gone.twice@example.com' });
    const link = new RegExp(`${svc.config.appUrl}/join/[A-Za-z0-9._%-]+`).exec(sent.html)![0];
    const member = await signIn(svc, 'gone.twice@example.com', 'Gina Gone');
    expect((await post(member, new URL(link).pathname)).status).toBe(303);
    const key = (await appCall(svc, member, 'POST', '/api/keys', {})).json.key.id as string;
    const uid = await uidOf(member);

    const first = await post(cg.cookie, `/family/members/${uid}/remove`);
    expect(first).toMatchObject({ status: 303, location: '/family' });
    const revokedAt = (await appCall(svc, member, 'GET', '/api/keys')).json.keys.find((k: { id: string }) => k.id === key).revokedAt;
    expect(revokedAt).toEqual(expect.any(String));

    const again = await post(cg.cookie, `/family/members/${uid}/remove`);
    expect(again).toEqual(first);
    expect((await appCall(svc, cg.cookie, 'GET', '/api/family')).json.members).toHaveLength(1);
    expect((await appCall(svc, member, 'GET', '/api/workspace')).json).toEqual({ workspace: null });
    expect((await appCall(svc, member, 'GET', '/api/keys')).json.keys.find((k: { id: string }) => k.id === key).revokedAt).toBe(revokedAt);

    // Someone this workspace never had, and the caregiver themself, are still not in the circle.
    const stranger = await uidOf(await signIn(svc, 'never.here@example.com'));
    expect((await post(cg.cookie, `/family/members/${stranger}/remove`)).status).toBe(404);
    expect((await post(cg.cookie, `/family/members/${await uidOf(cg.cookie)}/remove`)).status).toBe(404);
    // Another workspace's caregiver cannot pass off this removal as theirs.
    const other = await caregiverWithKey(svc, 'other.caregiver@example.com');
    expect((await post(other.cookie, `/family/members/${uid}/remove`)).status).toBe(404);
  });
});
