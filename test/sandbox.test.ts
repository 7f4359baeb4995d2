// Sandbox workspaces end to end: an agent creates one with the MCP SDK, mail reaches its inbox,
// a human claims it in a browser, the authenticated tools see it; orphaning and sweeping.
import { passThroughCredentials } from '../src/auth/credentials.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MongoClient, type Db } from 'mongodb';
import nodemailer from 'nodemailer';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { SandboxService } from '../src/sandbox/service.js';
import { sandboxSweepJob } from '../src/sandbox/sweep.js';
import { databaseName } from '../src/store/mongo.js';
import { launchBrowser, newPage, screenshot } from './harness/browser.js';
import { appCall, signIn } from './harness/identity.js';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from './harness/smtpSink.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
let mongo: MongoClient;
let db: Db;
let browser: Browser;
let sink: SmtpSink;
let sent: ReceivedMail[] = [];
let endpoint: string;

beforeAll(async () => {
  // A real SMTP server standing in for the outgoing relay, so invitations can be received.
  sink = await startSmtpSink();
  sent = sink.received;
  [svc, browser] = await Promise.all([startTestService({ nats: true, env: { SMTP_URL: sink.url, SANDBOX_RATE_CAPACITY: '1000' } }), launchBrowser()]);
  endpoint = `${svc.urls.app}/api/mcp/public`;
  mongo = await new MongoClient(svc.mongoUrl).connect();
  db = mongo.db(databaseName(svc.mongoUrl));
});
afterAll(async () => {
  await browser?.close();
  await mongo?.close();
  await svc?.stop();
  await sink?.close();
});

const start = (args: Record<string, unknown>, headers: Record<string, string> = {}) =>
  postJson(endpoint, rpc('tools/call', { name: 'start_family_care_workspace', arguments: args }), headers);
const resultOf = (res: { json: any }) => JSON.parse(res.json.result.content[1].text);
const smtpPort = () => Number(new URL(svc.urls.smtp!).port);
const mail = (to: string, subject: string, text: string, attachments: { filename: string; content: string }[] = []) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port: smtpPort(), secure: false, ignoreTLS: true })
    .sendMail({ from: 'Clinic <frontdesk@clinic.example>', to, subject, text, attachments });

describe('sandbox endpoint - descriptor and protocol', () => {
  it('when an agent reads the descriptor, then it has everything needed to create a sandbox', async () => {
    const res = await fetch(endpoint);
    expect(res.status).toBe(200);
    const d = (await res.json()) as any;
    expect(d).toMatchObject({ transport: 'streamable-http', protocolVersion: '2025-03-26', auth: 'none', endpoint });
    expect(d.tools.map((t: any) => t.name)).toEqual(['start_family_care_workspace']);
    expect(d.tools[0].inputSchema.required).toEqual(['lovedOneFirstName', 'lovedOneLastName', 'sandbox']);
    expect(d.rateLimit).toMatch(/429/);
    expect((await fetch(endpoint, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
  });

  it('when listing tools, then exactly start_family_care_workspace; notifications get 202', async () => {
    const list = await postJson(endpoint, rpc('tools/list'));
    expect(list.json.result.tools.map((t: any) => t.name)).toEqual(['start_family_care_workspace']);
    expect((await postJson(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    expect((await postJson(endpoint, rpc('ping'))).json.result).toEqual({});
  });
});

describe('sandbox endpoint - arguments', () => {
  it('when an argument breaks a rule, then isError names the field and the rule', async () => {
    const base = { lovedOneFirstName: 'Rosa', lovedOneLastName: 'Rivera', sandbox: true };
    for (const [args, pattern] of [
      [{ ...base, lovedOneFirstName: undefined }, /lovedOneFirstName/],
      [{ ...base, lovedOneLastName: '' }, /lovedOneLastName: must be 1-60 characters/],
      [{ ...base, lovedOneFirstName: 'x'.repeat(61) }, /lovedOneFirstName: must be 1-60 characters/],
      [{ ...base, familyName: 'x'.repeat(121) }, /familyName: must be at most 120 characters/],
      [{ ...base, primaryCaregiverEmail: 'not-an-email' }, /primaryCaregiverEmail: must be an email address/],
      [{ ...base, careContext: 'x'.repeat(2001) }, /careContext: must be at most 2000 characters/],
      [{ ...base, familyMemberEmails: ['ok@example.com', 'nope'] }, /familyMemberEmails\.1: must be an email address/],
      [{ ...base, extra: 1 }, /extra/],
    ] as const) {
      const res = await start(args as Record<string, unknown>);
      expect(res.status).toBe(200);
      expect(res.json.result.isError).toBe(true);
      expect(res.json.result.content[0].text).toMatch(pattern);
    }
  });

  it('when sandbox is not true, then the error says it must be and points to onboarding', async () => {
    for (const sandbox of [false, 'true', undefined]) {
      const res = await start({ lovedOneFirstName: 'Rosa', lovedOneLastName: 'Rivera', sandbox });
      expect(res.json.result.isError).toBe(true);
      expect(res.json.result.content[0].text).toContain('sandbox: must be true');
      expect(res.json.result.content[0].text).toContain(`${svc.config.appUrl}/onboarding`);
    }
  });

  it('when 9 distinct family emails are given, then refused; 8 plus case-duplicates are fine and de-duplicated', async () => {
    const nine = Array.from({ length: 9 }, (_, i) => `member${i}@example.com`);
    const refused = await start({ lovedOneFirstName: 'A', lovedOneLastName: 'B', sandbox: true, familyMemberEmails: nine });
    expect(refused.json.result.content[0].text).toMatch(/familyMemberEmails: must list at most 8 distinct emails/);
    const eight = [...nine.slice(0, 8), 'MEMBER0@example.com', 'Member1@Example.com'];
    const ok = await start({ lovedOneFirstName: 'A', lovedOneLastName: 'B', sandbox: true, familyMemberEmails: eight });
    const result = resultOf(ok);
    expect(result.inviteDrafts).toHaveLength(8);
    expect(result.inviteDrafts[0]).toEqual({
      email: 'member0@example.com',
      role: 'family_member',
      status: 'draft',
      note: expect.stringMatching(/nothing was sent/),
    });
  });

  it('when the body is over 64 KB, then 413', async () => {
    const res = await start({ lovedOneFirstName: 'A', lovedOneLastName: 'B', sandbox: true, careContext: 'x'.repeat(70 * 1024) });
    expect(res.status).toBe(413);
  });
});

describe('sandbox lifecycle', () => {
  it('when an agent creates a sandbox, mail arrives, and the same person claims it, then the authenticated tools see it all', async () => {
    const client = new Client({ name: 'evaluator', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
    const res = await client.callTool({
      name: 'start_family_care_workspace',
      arguments: {
        lovedOneFirstName: 'Eleanor',
        lovedOneLastName: 'Vance',
        sandbox: true,
        primaryCaregiverEmail: 'Claire.Vance@example.com',
        careContext: 'Mild dementia; lives alone.',
        familyMemberEmails: ['tom@example.com', 'TOM@example.com'],
      },
    });
    await client.close();
    const content = res.content as { type: string; text: string }[];
    expect(content).toHaveLength(2);
    expect(content[0]!.text).toContain(`${svc.config.appUrl}/onboarding?workspace=`);
    const result = JSON.parse(content[1]!.text);
    expect(result).toMatchObject({
      familyName: 'The Vance Family (sandbox)',
      sandbox: true,
      primaryCaregiverEmail: 'claire.vance@example.com',
      inviteDrafts: [{ email: 'tom@example.com', status: 'draft' }],
    });
    expect(result.inboxAddress).toMatch(new RegExp(`^eleanor-vance-[a-z2-7]{8}@${svc.config.inboxDomain.replace('.', '\\.')}$`));
    const ws = await db.collection('workspaces').findOne({ _id: result.workspaceId });
    expect(ws).toMatchObject({ sandbox: true, ownerUid: 'anonymous-mcp', careContext: 'Mild dementia; lives alone.' });

    await mail(result.inboxAddress, 'Visit summary', 'Blood pressure 128/82. Next visit Tuesday.', [{ filename: 'summary.pdf', content: 'pdf' }]);
    const stored = await db.collection('inbox_items').findOne({ lovedOneId: result.lovedOneId });
    expect(stored).toMatchObject({ subject: 'Visit summary', attachmentNames: ['summary.pdf'] });
    expect(stored!.excerpt).toContain('Blood pressure 128/82');
    expect(sent).toHaveLength(0); // nothing is ever emailed from a sandbox

    const { page, errors } = await newPage(browser);
    await page.goto(`${svc.config.appUrl}/onboarding?workspace=${result.workspaceId}`);
    await page.click('#signin');
    await page.fill('#email', 'claire.vance@example.com');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/onboarding\/claim/);
    await screenshot(page, 'sandbox-claim');
    await page.click('#claim');
    await page.waitForURL(/\/workspace\/invites$/);
    await page.click('#send-invites');
    await page.waitForURL(/\/workspace\/invites$/);
    expect(await page.textContent('#invites')).toContain('sent');
    expect(sent.map((m) => m.to)).toEqual([['tom@example.com']]);
    await page.goto(`${svc.config.appUrl}/inbox/${result.lovedOneId}`);
    expect(await page.textContent('#inbox')).toContain('Visit summary');
    await screenshot(page, 'family-inbox');
    expect(errors, errors.join('\n')).toEqual([]);

    const claimed = await db.collection('workspaces').findOne({ _id: result.workspaceId });
    expect(claimed).toMatchObject({ sandbox: false });
    expect(claimed!.ownerUid).not.toBe('anonymous-mcp');

    const cookie = await signIn(svc, 'claire.vance@example.com');
    const key = (await appCall(svc, cookie, 'POST', '/api/keys', { name: 'after claim' })).json.apiKey;
    const authed = new Client({ name: 'caregiver', version: '1.0.0' });
    await authed.connect(
      new StreamableHTTPClientTransport(new URL(`${svc.urls.app}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    const lovedOnes = JSON.parse(((await authed.callTool({ name: 'list_loved_ones', arguments: {} })).content as any)[0].text);
    expect(lovedOnes).toMatchObject({ workspaceId: result.workspaceId, lovedOnes: [{ id: result.lovedOneId, inboxAddress: result.inboxAddress }] });
    const events = JSON.parse(((await authed.callTool({ name: 'list_care_events', arguments: { lovedOneId: result.lovedOneId } })).content as any)[0].text);
    expect(events.events[0]).toMatchObject({
      source: 'inbox',
      eventType: 'inbox_message',
      payload: { subject: 'Visit summary', attachmentNames: ['summary.pdf'] },
    });
    await authed.close();
  });

  it('when someone with a different email tries to claim, then it is orphaned for good', async () => {
    const result = resultOf(await start({ lovedOneFirstName: 'Ada', lovedOneLastName: 'Orphan', sandbox: true, primaryCaregiverEmail: 'right@example.com' }));
    const wrong = await signIn(svc, 'wrong@example.com');
    const res = await fetch(`${svc.urls.app}/onboarding/claim`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: wrong, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `workspace=${result.workspaceId}`,
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('different email address');
    const right = await signIn(svc, 'right@example.com');
    const later = await fetch(`${svc.urls.app}/onboarding/claim`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: right, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `workspace=${result.workspaceId}`,
    });
    expect(later.status).toBe(404);
    expect(await db.collection('workspaces').findOne({ _id: result.workspaceId })).toMatchObject({ sandbox: true, ownerUid: 'anonymous-mcp' });
  });

  it('when a sandbox outlives SANDBOX_TTL, then the sweeper purges it with everything tagged to it, and its inbox rejects mail', async () => {
    const result = resultOf(await start({ lovedOneFirstName: 'Old', lovedOneLastName: 'Sandbox', sandbox: true, familyMemberEmails: ['x@example.com'] }));
    await mail(result.inboxAddress, 'before', 'kept until the sweep');
    const sweep = sandboxSweepJob(svc.config, db, passThroughCredentials(db), svc.timelines, () => Date.now() + svc.config.sandboxTtl + 60_000);
    const counts = await sweep.run();
    expect(counts.purged).toBeGreaterThanOrEqual(1);
    for (const [collection, filter] of [
      ['workspaces', { _id: result.workspaceId }],
      ['loved_ones', { _id: result.lovedOneId }],
      ['inbox_items', { lovedOneId: result.lovedOneId }],
      ['care_events', { lovedOneId: result.lovedOneId }],
      ['invite_drafts', { workspaceId: result.workspaceId }],
    ] as const) {
      expect(await db.collection(collection).countDocuments(filter as any)).toBe(0);
    }
    expect(await new SandboxService(db, passThroughCredentials(db), svc.config.inboxDomain, svc.timelines).state(result.workspaceId)).toBe('purged');
    await expect(mail(result.inboxAddress, 'after', 'nobody home')).rejects.toThrow(/550/);
  });

  it('when an address is not a family inbox, then 550 at RCPT: never a relay', async () => {
    await expect(mail('someone@gmail.example', 'relay?', 'no')).rejects.toThrow(/550/);
    await expect(mail(`nobody-here-aaaaaaaa@${svc.config.inboxDomain}`, 'unknown', 'no')).rejects.toThrow(/550/);
  });

  it('when two cron processes tick at once, then the sweep runs once', async () => {
    // A database of their own: this file's service runs cron too, and while its term lasts
    // neither of the two would lead.
    const a = await startTestService({ role: 'cron', nats: true });
    const b = await startTestService({ role: 'cron', nats: true, mongoUrl: a.mongoUrl });
    const leases = a.store.db.collection('leases');
    try {
      const before = await leases.countDocuments();
      await Promise.all([a.cron!.tick(), b.cron!.tick()]);
      const terms = await leases.find({ key: 'cron-leader' }).sort({ v: -1 }).limit(2).toArray();
      expect(await leases.countDocuments()).toBeGreaterThan(before);
      // Every term in the window belongs to one holder: the other never led.
      expect(new Set(terms.map((t) => t.state.holder)).size).toBe(1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe('sandbox endpoint - limits', () => {
  it('when one address makes a seventh sandbox across two gateways, then 429 with Retry-After and retryAfterSec', async () => {
    const env = { BUS_NAMESPACE: 'sandboxlimit' };
    const a = await startTestService({ nats: true, env });
    const b = await startTestService({ nats: true, role: 'gateway', mongoUrl: a.mongoUrl, env });
    try {
      const urls = [`${a.urls.app}/api/mcp/public`, `${b.urls.app}/api/mcp/public`];
      const body = rpc('tools/call', { name: 'start_family_care_workspace', arguments: { lovedOneFirstName: 'R', lovedOneLastName: 'L', sandbox: true } });
      // Reading the descriptor and listing tools spend nothing.
      expect((await fetch(urls[0]!)).status).toBe(200);
      expect((await postJson(urls[1]!, rpc('tools/list'))).status).toBe(200);
      for (let i = 0; i < 6; i++) expect((await postJson(urls[i % 2]!, body)).json.result.isError).toBeFalsy();
      const limited = await postJson(urls[0]!, body);
      expect(limited.status).toBe(429);
      const wait = Number(limited.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(600); // one token every 10 minutes
      expect(limited.json.error).toMatchObject({ code: RPC.RATE_LIMITED, data: { retryAfterSec: Number(limited.headers.get('retry-after')) } });
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it('when the deployment has no family tenant, then 503 and clients are told not to retry', async () => {
    const agencyOnly = await startTestService({ env: { TENANTS: 'agency' } });
    try {
      const res = await postJson(`${agencyOnly.urls.app}/api/mcp/public`, rpc('tools/list'));
      expect(res.status).toBe(503);
      expect(res.json.error.data.hint).toMatch(/Do not retry/);
    } finally {
      await agencyOnly.stop();
    }
  });

  it('when sandboxes are created, then an ops notification carries ids and counts only', async () => {
    const seen: unknown[] = [];
    const sub = svc.bus.subscribe(`${svc.config.busNamespace}.ops.sandbox.created`, (m) => seen.push(m.data));
    await svc.bus.flush(); // the server has the subscription before anything is published
    await start({
      lovedOneFirstName: 'Private',
      lovedOneLastName: 'Name',
      sandbox: true,
      primaryCaregiverEmail: 'secret@example.com',
      careContext: 'very private',
    });
    await vi.waitFor(() => expect(seen.length).toBeGreaterThan(0), { timeout: 1_000, interval: 20 });
    await sub.drain();
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0] as object).sort()).toEqual(['at', 'event', 'hasPrimaryCaregiverEmail', 'inviteDraftCount', 'lovedOneId', 'workspaceId']);
    expect(JSON.stringify(seen)).not.toMatch(/Private|secret@|very private/);
  });
});
