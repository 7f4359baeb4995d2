// The family circle over real HTTP: inviting by email through a real SMTP server, accepting only
// as the invited email, roles checked on the server, and members and former members across the
// app, API keys and OAuth (the cross-tenant rules for people who join and leave).
import { passThroughCredentials } from '../src/auth/credentials.js';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../src/auth/sessions.js';
import { FamilyCircle } from '../src/family/circle.js';
import { InviteStore } from '../src/family/invites.js';
import { WorkspaceStore } from '../src/family/records.js';
import { RPC } from '../src/rpc/codes.js';
import { databaseName } from '../src/store/mongo.js';
import { appCall, caregiverWithKey, signIn } from './harness/identity.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from './harness/smtpSink.js';
import { startTestService, type TestService } from './harness/service.js';
import { callTool, connectedApp } from './oauth.fixtures.js';

let svc: TestService;
let mongo: MongoClient;
let db: Db;
let sink: SmtpSink;
let mailbox: ReceivedMail[] = [];

beforeAll(async () => {
  sink = await startSmtpSink();
  mailbox = sink.received;
  svc = await startTestService({ nats: true, env: { SMTP_URL: sink.url } });
  mongo = await new MongoClient(svc.mongoUrl).connect();
  db = mongo.db(databaseName(svc.mongoUrl));
});
afterAll(async () => {
  await mongo?.close();
  await svc?.stop();
  await sink?.close();
});

const origin = () => new URL(svc.config.appUrl).origin;
const get = async (cookie: string | null, path: string) => {
  const res = await fetch(`${svc.urls.app}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
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
const linkIn = (text: string) => new RegExp(`${svc.config.appUrl}/join/[A-Za-z0-9._%-]+`).exec(text)?.[0];
const pathOf = (link: string) => new URL(link).pathname;
const toolJson = (res: { json: any }) => JSON.parse(res.json.result.content.at(-1).text);

/** A caregiver's invitation for `email`: the link shown on the page. */
async function invite(cookie: string, email: string): Promise<string> {
  const res = await post(cookie, '/family/invites', { email });
  expect(res.status, res.html).toBe(200);
  return linkIn(res.html)!;
}

/** Someone signs in as `email` and accepts the invitation behind `link`. */
async function join(link: string, email: string, name = 'Sam Sibling'): Promise<string> {
  const cookie = await signIn(svc, email, name);
  const res = await post(cookie, pathOf(link));
  expect(res.status, res.html).toBe(303);
  return cookie;
}

describe('inviting and accepting', () => {
  it('when a caregiver invites by email, then the link arrives by mail and works once, only for that email in any case', async () => {
    const lopez = await caregiverWithKey(svc, 'lucia.lopez@example.com', { firstName: 'Rosa', lastName: 'Lopez' });
    const sent = await post(lopez.cookie, '/family/invites', { email: 'Sam.Lopez@Example.com' });
    expect(sent.status).toBe(200);
    expect(sent.html).toContain('We emailed sam.lopez@example.com a link');
    const link = linkIn(sent.html)!;
    expect(link).toBeDefined();
    const mail = mailbox.find((m) => m.to.includes('sam.lopez@example.com'))!;
    expect(mail.data).toContain("Subject: You're invited to Family of lucia.lopez@example.com on carecircle");
    expect(mail.data.replace(/=\r?\n/g, '')).toContain(link);
    expect(await db.collection('family_invites').countDocuments({ secretHash: { $exists: true }, email: 'sam.lopez@example.com' })).toBe(1);
    expect(JSON.stringify(await db.collection('family_invites').findOne({ email: 'sam.lopez@example.com' }))).not.toContain(link.split('.').at(-1));

    // Signed out: whose workspace, which loved one, which email.
    const open = await get(null, pathOf(link));
    expect(open.status).toBe(200);
    expect(open.html).toContain('Family of lucia.lopez@example.com');
    expect(open.html).toContain('Rosa Lopez');
    expect(open.html).toContain('sam.lopez@example.com');
    expect(open.html).toContain('id="signin"');

    // Another account cannot use it, by page or by form.
    const other = await signIn(svc, 'cousin@example.com');
    expect((await get(other, pathOf(link))).html).toContain('this invitation is for sam.lopez@example.com');
    expect((await post(other, pathOf(link))).status).toBe(403);
    expect((await appCall(svc, other, 'GET', '/api/workspace')).json).toEqual({ workspace: null });

    const sam = await signIn(svc, 'SAM.LOPEZ@example.com');
    expect((await get(sam, pathOf(link))).html).toContain('id="accept"');
    expect(await post(sam, pathOf(link))).toMatchObject({ status: 303, location: '/' });
    expect((await appCall(svc, sam, 'GET', '/api/workspace')).json.workspace).toMatchObject({
      id: lopez.workspaceId,
      role: 'family_member',
      familyMemberCount: 2,
    });
    const again = await get(sam, pathOf(link));
    expect(again.status).toBe(404);
    expect(again.html).toContain('already used');
  });

  it('when an invitation is withdrawn, expired or reissued, then its link no longer opens the workspace', async () => {
    const cg = await caregiverWithKey(svc, 'withdraws@example.com');
    const first = await invite(cg.cookie, 'tia@example.com');
    const second = await invite(cg.cookie, 'tia@example.com'); // a resend withdraws the first link
    expect((await get(null, pathOf(first))).html).toContain('withdrawn');
    const family = await get(cg.cookie, '/family');
    expect(family.html).toContain('Withdraw the invitation for tia@example.com');
    const revokePath = /action="(\/family\/invites\/[^"]+\/revoke)"/.exec(family.html)![1]!;
    expect((await post(cg.cookie, revokePath)).status).toBe(303);
    expect((await get(null, pathOf(second))).html).toContain('withdrawn');
    expect((await get(cg.cookie, '/family')).html).not.toContain('Withdraw the invitation for tia@example.com');

    const third = await invite(cg.cookie, 'tia@example.com');
    await db
      .collection('family_invites')
      .updateOne({ _id: pathOf(third).split('/').at(-1)!.split('.')[0] as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const tia = await signIn(svc, 'tia@example.com');
    const expired = await post(tia, pathOf(third));
    expect(expired.status).toBe(404);
    expect(expired.html).toContain('expired');
    expect((await get(null, '/join/inv_nothing.here')).status).toBe(404);
  });

  it('when the invited person already has a workspace, then they are told so and not moved', async () => {
    const a = await caregiverWithKey(svc, 'first-family@example.com');
    const b = await caregiverWithKey(svc, 'second-family@example.com');
    const link = await invite(a.cookie, 'second-family@example.com');
    const page = await get(b.cookie, pathOf(link));
    expect(page.status).toBe(409);
    expect(page.html).toContain('You already belong to a family workspace');
    expect((await post(b.cookie, pathOf(link))).status).toBe(409);
    expect((await appCall(svc, b.cookie, 'GET', '/api/workspace')).json.workspace).toMatchObject({ id: b.workspaceId, role: 'caregiver' });
    // The invitation stays usable for when they are free.
    expect((await get(null, pathOf(link))).status).toBe(200);
  });

  it('when one person accepts invitations to two workspaces at the same moment, then they join exactly one', async () => {
    const a = await caregiverWithKey(svc, 'race-a@example.com');
    const b = await caregiverWithKey(svc, 'race-b@example.com');
    const [la, lb] = [await invite(a.cookie, 'racer@example.com'), await invite(b.cookie, 'racer@example.com')];
    const racer = await signIn(svc, 'racer@example.com');
    const answers = await Promise.all([post(racer, pathOf(la)), post(racer, pathOf(lb))]);
    expect(answers.map((r) => r.status).sort()).toEqual([303, 409]);
    const counts = await Promise.all([a, b].map(async (c) => (await appCall(svc, c.cookie, 'GET', '/api/workspace')).json.workspace.familyMemberCount));
    expect(counts.sort()).toEqual([1, 2]);
  });

  it('when the form is wrong or names a member, then a clear message and no invitation', async () => {
    const cg = await caregiverWithKey(svc, 'form-errors@example.com');
    const bad = await post(cg.cookie, '/family/invites', { email: 'not an email' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('Enter the email address of the person to invite');
    const self = await post(cg.cookie, '/family/invites', { email: 'Form-Errors@example.com' });
    expect(self.status).toBe(409);
    expect(self.html).toContain('already in the family circle');
  });
});

describe('roles, members and former members', () => {
  it('when a family member acts, then they read everything but cannot manage', async () => {
    const cg = await caregiverWithKey(svc, 'manager@example.com');
    const memberCookie = await join(await invite(cg.cookie, 'reader@example.com'), 'reader@example.com');
    const family = await get(memberCookie, '/family');
    expect(family.html).toContain('manager@example.com');
    expect(family.html).toContain('Primary caregiver');
    expect(family.html).not.toContain('id="invite"');
    expect((await post(memberCookie, '/family/invites', { email: 'x@example.com' })).status).toBe(403);
    expect((await post(memberCookie, '/workspace/loved-ones', { firstName: 'New', lastName: 'Person' })).status).toBe(403);
    expect((await appCall(svc, memberCookie, 'POST', '/api/workspace/loved-ones', { firstName: 'New', lastName: 'Person' })).status).toBe(403);
    const link = await appCall(svc, memberCookie, 'POST', '/api/family-share/link', { code: 'ABCD-EFGH', lovedOneId: cg.lovedOneId });
    expect(link.status).toBe(403);
    expect(link.json.message).toContain('Only the primary caregiver');
    const me = (await appCall(svc, memberCookie, 'GET', '/api/family')).json;
    expect(me.invitations).toBeUndefined();
    const managerUid = (await appCall(svc, cg.cookie, 'GET', '/api/auth/me')).json.uid;
    expect((await get(memberCookie, `/family/members/${managerUid}/remove`)).status).toBe(403);
    expect((await post(memberCookie, `/family/members/${managerUid}/remove`)).status).toBe(403);
    expect((await post(memberCookie, `/family/members/${managerUid}/hand-over`)).status).toBe(403);
    expect((await appCall(svc, cg.cookie, 'GET', '/api/workspace')).json.workspace.familyMemberCount).toBe(2);
    expect((await get(memberCookie, '/')).html).not.toContain('action="/workspace/loved-ones"');
  });

  it('when a member reads through the app, a key and OAuth, then they see the workspace and never another', async () => {
    const a = await caregiverWithKey(svc, 'circle-a@example.com', { firstName: 'Ana', lastName: 'Alpha' });
    const b = await caregiverWithKey(svc, 'circle-b@example.com', { firstName: 'Bea', lastName: 'Beta' });
    const sib = await join(await invite(a.cookie, 'sibling-a@example.com'), 'sibling-a@example.com');
    const key = (await appCall(svc, sib, 'POST', '/api/keys', { name: 'sibling' })).json.apiKey as string;
    const oauthToken = (await connectedApp(svc, 'sibling-a@example.com')).tokens.access_token;

    expect((await get(sib, `/care/${a.lovedOneId}`)).html).toContain('Ana Alpha');
    expect((await get(sib, `/care/${b.lovedOneId}`)).status).toBe(404);
    for (const credential of [key, oauthToken]) {
      expect(toolJson(await callTool(svc, credential, 'list_loved_ones')).lovedOnes.map((l: { id: string }) => l.id)).toEqual([a.lovedOneId]);
      expect((await callTool(svc, credential, 'list_care_events', { lovedOneId: a.lovedOneId })).json.result.isError).toBeFalsy();
      expect((await callTool(svc, credential, 'list_care_events', { lovedOneId: b.lovedOneId })).json.error.code).toBe(RPC.NOT_AUTHORIZED);
      expect(toolJson(await callTool(svc, credential, 'get_user_profile')).workspace).toMatchObject({
        id: a.workspaceId,
        role: 'family_member',
        familyMemberCount: 2,
      });
    }
    // And the caregiver of B, whose workspace the sibling is not in, sees one member.
    expect(toolJson(await callTool(svc, b.apiKey, 'get_user_profile')).workspace.familyMemberCount).toBe(1);
  });

  it('when a member is removed, then at once their session shows no workspace and their key and OAuth grant stop', async () => {
    const cg = await caregiverWithKey(svc, 'remover@example.com', { firstName: 'Ruth', lastName: 'Remo' });
    const gone = await join(await invite(cg.cookie, 'removed@example.com'), 'removed@example.com', 'Remy Removed');
    const key = (await appCall(svc, gone, 'POST', '/api/keys', {})).json.apiKey as string;
    const oauthToken = (await connectedApp(svc, 'removed@example.com')).tokens.access_token;
    expect((await callTool(svc, key, 'list_loved_ones')).status).toBe(200);
    const uid = (await appCall(svc, gone, 'GET', '/api/auth/me')).json.uid as string;

    const confirm = await get(cg.cookie, `/family/members/${uid}/remove`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Remove Remy Removed from');
    expect(confirm.html).toContain('Remy Removed signs in as removed@example.com.');
    expect(confirm.html).toContain('Ruth Remo');
    expect(await post(cg.cookie, `/family/members/${uid}/remove`)).toMatchObject({ status: 303, location: '/family' });

    expect((await appCall(svc, gone, 'GET', '/api/auth/me')).json).toMatchObject({ authenticated: true, workspace: null });
    expect((await appCall(svc, gone, 'GET', '/api/workspace')).json).toEqual({ workspace: null });
    expect((await get(gone, `/care/${cg.lovedOneId}`)).location).toBe('/onboarding');
    expect((await get(gone, `/inbox/${cg.lovedOneId}`)).status).toBe(404);
    expect((await callTool(svc, key, 'list_loved_ones')).status).toBe(403); // a revoked key (SPEC: 403, -32001)
    expect((await callTool(svc, oauthToken, 'list_loved_ones')).status).toBe(401);
    expect((await appCall(svc, gone, 'GET', '/api/keys')).json.keys.every((k: { status: string }) => k.status === 'revoked')).toBe(true);
    expect((await appCall(svc, gone, 'GET', '/api/oauth/apps')).json.apps ?? []).toEqual([]);
    expect(toolJson(await callTool(svc, cg.apiKey, 'get_user_profile')).workspace.familyMemberCount).toBe(1);
    expect((await get(cg.cookie, `/family/members/${uid}/remove`)).status).toBe(404);
  });

  it('when people leave or hand over, then the last primary caregiver cannot leave until someone takes over', async () => {
    const cg = await caregiverWithKey(svc, 'leaver@example.com');
    const tom = await join(await invite(cg.cookie, 'tom.leaves@example.com'), 'tom.leaves@example.com');
    expect((await get(tom, '/family/leave')).html).toContain('id="confirm-leave"');
    expect((await post(tom, '/family/leave')).html).toContain('You left');
    expect((await appCall(svc, tom, 'GET', '/api/workspace')).json.workspace).toBeNull();

    const alone = await get(cg.cookie, '/family/leave');
    expect(alone.status).toBe(409);
    expect(alone.html).toContain('only person here');
    expect((await post(cg.cookie, '/family/leave')).status).toBe(409);

    const uma = await join(await invite(cg.cookie, 'uma.takes.over@example.com'), 'uma.takes.over@example.com', 'Uma Okafor');
    expect((await get(cg.cookie, '/family/leave')).html).toContain('make another member the primary caregiver');
    const umaUid = (await appCall(svc, uma, 'GET', '/api/auth/me')).json.uid as string;
    expect((await get(cg.cookie, `/family/members/${umaUid}/hand-over`)).html).toContain('Make Uma Okafor the primary caregiver');
    expect((await post(cg.cookie, `/family/members/${umaUid}/hand-over`)).status).toBe(303);
    expect((await appCall(svc, uma, 'GET', '/api/workspace')).json.workspace.role).toBe('caregiver');
    expect((await appCall(svc, cg.cookie, 'GET', '/api/workspace')).json.workspace.role).toBe('family_member');
    expect((await post(cg.cookie, '/family/invites', { email: 'x@example.com' })).status).toBe(403);
    expect((await post(cg.cookie, '/family/leave')).status).toBe(200);
    expect((await callTool(svc, cg.apiKey, 'list_loved_ones')).status).toBe(403);
    expect((await appCall(svc, uma, 'GET', '/api/family')).json.members).toHaveLength(1);
  });
});

describe('markup - the family pages print what people typed as text', () => {
  const EVIL = '<script>alert(1)</script> "><img src=x onerror=alert(2)>';
  it('when names of people, the workspace and loved ones carry payloads, then every family page shows them inert', async () => {
    // The test's own handle keeps nothing; what it changes still reaches the service in this process.
    const credentials = passThroughCredentials(db);
    const store = new WorkspaceStore(db, credentials, svc.config.inboxDomain, svc.timelines);
    const owner = await store.upsertUser({ uid: 'u-evil-owner', email: 'evil.owner@example.com', name: EVIL });
    const member = await store.upsertUser({ uid: 'u-evil-member', email: 'evil.member@example.com', name: EVIL });
    const ws = await store.createWorkspace({ name: EVIL, owner: { uid: owner._id, email: owner.email }, sandbox: false });
    await store.addLovedOne(ws._id, { firstName: EVIL, lastName: EVIL }, false);
    await new FamilyCircle(db, credentials).join(ws._id, { uid: member._id, email: member.email });
    const { token } = await new InviteStore(db).create(ws._id, 'evil.invitee@example.com', { uid: owner._id, email: owner.email, name: EVIL });
    const sessions = new SessionStore(db, credentials);
    const ownerCookie = `cc_session=${(await sessions.create({ uid: owner._id, email: owner.email, tenant: 'family' })).token}`;
    const memberCookie = `cc_session=${(await sessions.create({ uid: member._id, email: member.email, tenant: 'family' })).token}`;
    const pages = [
      await get(ownerCookie, '/family'),
      await get(ownerCookie, `/family/members/${member._id}/remove`),
      await get(ownerCookie, `/family/members/${member._id}/hand-over`),
      await get(memberCookie, '/family'),
      await get(memberCookie, '/family/leave'),
      await get(null, `/join/${token}`),
    ];
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.html).not.toMatch(/<script>alert|<img src=x/);
      expect(page.html).toContain('&lt;script>alert(1)&lt;/script>');
    }
    expect((await post(ownerCookie, '/family/invites', { email: 'evil.second@example.com' })).html).not.toMatch(/<script>alert|<img src=x/);
  });
});
