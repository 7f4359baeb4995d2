// Community threads end to end: a real identity-provider double (JWKS over HTTP), the site gateway,
// the bus and MongoDB. The error matrix, membership, pagination, escaping and the write limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMUNITY_COLLECTIONS, type CommentRecord, type ThreadRecord } from '../src/community/store.js';
import { startFakeIdp, type FakeIdp } from './harness/fakeIdp.js';
import { startTestService, type TestService } from './harness/service.js';

const CHANNEL = 'respite-and-burnout';
const OTHER = 'hospice-and-grief';

function expectApiError(body: any, code: string) {
  expect(body).toMatchObject({ code, message: expect.any(String), hint: expect.any(String), error: { code, message: body.message, hint: body.hint } });
}

describe('community API', () => {
  let idp: FakeIdp;
  let svc: TestService;
  let api: string;
  let users = 0;

  beforeAll(async () => {
    idp = await startFakeIdp();
    svc = await startTestService({ env: idp.env });
    api = `${svc.urls.site}/api/community`;
  });
  afterAll(async () => {
    await svc?.stop();
    await idp?.stop();
  });

  /** A fresh signed-in person, so each test has its own write budget. */
  async function person(name: string | null = `Caregiver ${users + 1}`) {
    const n = ++users;
    const uid = `uid-${n}-${Date.now()}`;
    const token = await idp.token({ sub: uid, email: `person${n}@example.com`, ...(name ? { name } : {}) });
    const post = async (body: unknown, extra: Record<string, string> = {}) => {
      const res = await fetch(api, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, headers: res.headers, json: (await res.json()) as any };
    };
    return { token, post, uid, email: `person${n}@example.com` };
  }

  const list = async (query: string) => {
    const res = await fetch(`${api}?${query}`);
    return { status: res.status, json: (await res.json()) as any };
  };

  it('when the channel is missing or unknown, then 400 or 404 as ApiError naming it', async () => {
    const missing = await list('');
    expect(missing.status).toBe(400);
    expectApiError(missing.json, 'VALIDATION_FAILED');
    expect(missing.json.message).toMatch(/channel is required/);
    const unknown = await list('channel=no-such-channel');
    expect(unknown.status).toBe(404);
    expectApiError(unknown.json, 'NOT_FOUND');
    expect(unknown.json.message).toContain('no-such-channel');
  });

  it('when a channel has no threads, then an empty first page', async () => {
    const res = await list(`channel=${OTHER}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ channel: { slug: OTHER, name: 'Hospice and Grief' }, threads: [], nextCursor: null, memberCount: 0 });
  });

  it('when posting without a valid ID token, then 401 with WWW-Authenticate for each kind of bad token', async () => {
    const body = JSON.stringify({ channel: CHANNEL, action: 'join' });
    const claims = { sub: 'u-bad', email: 'bad@example.com', name: 'Bad' };
    const bad: [string, Record<string, string>][] = [
      ['no header', {}],
      ['not bearer', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['not a JWT', { authorization: 'Bearer not-a-token' }],
      ['expired', { authorization: `Bearer ${await idp.token(claims, { exp: Math.floor(Date.now() / 1000) - 3600 })}` }],
      ['other audience', { authorization: `Bearer ${await idp.token(claims, { aud: 'someone-else' })}` }],
      ['other issuer', { authorization: `Bearer ${await idp.token(claims, { iss: 'https://evil.example' })}` }],
      ['unknown key', { authorization: `Bearer ${await idp.foreignToken(claims)}` }],
      ['unverified email', { authorization: `Bearer ${await idp.token({ ...claims, email_verified: false })}` }],
    ];
    for (const [label, headers] of bad) {
      const res = await fetch(api, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      expect(res.status, label).toBe(401);
      expect(res.headers.get('www-authenticate'), label).toMatch(/^Bearer realm="carecircle"/);
      expectApiError(await res.json(), 'UNAUTHORIZED');
    }
  });

  it('when joining and leaving twice, then both are idempotent and the member count follows', async () => {
    const a = await person();
    expect((await a.post({ channel: CHANNEL, action: 'join' })).json).toEqual({ ok: true, action: 'join', channel: CHANNEL, member: true, status: 'joined' });
    expect((await a.post({ channel: CHANNEL, action: 'join' })).json).toMatchObject({ member: true, status: 'already_member' });
    const before = (await list(`channel=${CHANNEL}`)).json.memberCount;
    expect((await a.post({ channel: CHANNEL, action: 'leave' })).json).toEqual({ ok: true, action: 'leave', channel: CHANNEL, member: false, status: 'left' });
    expect((await a.post({ channel: CHANNEL, action: 'leave' })).json).toMatchObject({ member: false, status: 'not_member' });
    expect((await list(`channel=${CHANNEL}`)).json.memberCount).toBe(before - 1);
  });

  it('when a non-member writes, then 403 naming the join action; after joining the thread is listed with its fields', async () => {
    const a = await person('Dana Reyes');
    const denied = await a.post({ channel: CHANNEL, action: 'thread', title: 'Finding respite', body: 'Where do you find respite?' });
    expect(denied.status).toBe(403);
    expectApiError(denied.json, 'FORBIDDEN');
    expect(denied.json.hint).toContain('"action": "join"');

    await a.post({ channel: CHANNEL, action: 'join' });
    const created = await a.post({
      channel: CHANNEL,
      action: 'thread',
      title: '  Finding respite  ',
      body: 'Where do you find respite in a small town?\r\n\r\nWe are in rural Ohio.',
    });
    expect(created.status).toBe(200);
    const thread = created.json.thread;
    expect(thread).toMatchObject({
      title: 'Finding respite',
      body: 'Where do you find respite in a small town?\n\nWe are in rural Ohio.',
      authorName: 'Dana Reyes',
      commentCount: 0,
      channel: CHANNEL,
    });

    const listed = await list(`channel=${CHANNEL}`);
    const item = listed.json.threads.find((t: any) => t.id === thread.id);
    expect(item).toEqual({
      id: thread.id,
      channel: CHANNEL,
      title: 'Finding respite',
      excerpt: 'Where do you find respite in a small town? We are in rural Ohio.',
      authorName: 'Dana Reyes',
      createdAt: thread.createdAt,
      commentCount: 0,
      lastActivityAt: thread.createdAt,
    });
  });

  it('when commenting, then membership and the thread are checked, and the count and last activity follow', async () => {
    const author = await person();
    const commenter = await person();
    await author.post({ channel: CHANNEL, action: 'join' });
    await author.post({ channel: OTHER, action: 'join' });
    const thread = (await author.post({ channel: CHANNEL, action: 'thread', title: 'Adult day programs', body: 'Any good ones?' })).json.thread;
    const elsewhere = (await author.post({ channel: OTHER, action: 'thread', title: 'Elsewhere', body: 'In another channel.' })).json.thread;

    expect((await commenter.post({ channel: CHANNEL, action: 'comment', threadId: thread.id, body: 'Hi' })).status).toBe(403);
    await commenter.post({ channel: CHANNEL, action: 'join' });
    const unknown = await commenter.post({ channel: CHANNEL, action: 'comment', threadId: 'thr_nope', body: 'Hi' });
    expect(unknown.status).toBe(404);
    expectApiError(unknown.json, 'NOT_FOUND');
    expect((await commenter.post({ channel: CHANNEL, action: 'comment', threadId: elsewhere.id, body: 'Wrong channel' })).status).toBe(404);

    const c1 = await commenter.post({ channel: CHANNEL, action: 'comment', threadId: thread.id, body: 'Ours has a sliding scale.' });
    expect(c1.status).toBe(200);
    expect(c1.json).toMatchObject({ ok: true, action: 'comment', status: 'created', comment: { threadId: thread.id, body: 'Ours has a sliding scale.' } });
    await author.post({ channel: CHANNEL, action: 'comment', threadId: thread.id, body: 'Thank you!' });

    const view = await list(`channel=${CHANNEL}&threadId=${thread.id}`);
    expect(view.status).toBe(200);
    expect(view.json.thread).toMatchObject({ id: thread.id, commentCount: 2, body: 'Any good ones?' });
    expect(view.json.comments.map((c: any) => c.body)).toEqual(['Ours has a sliding scale.', 'Thank you!']);
    expect(view.json.thread.lastActivityAt >= c1.json.comment.createdAt).toBe(true);
    const listed = (await list(`channel=${CHANNEL}`)).json.threads;
    expect(listed[0]).toMatchObject({ id: thread.id, commentCount: 2 });
    expect((await list(`channel=${CHANNEL}&threadId=${elsewhere.id}`)).status).toBe(404);
  });

  it('when the action or its fields are wrong, then 400 naming the field and what is allowed', async () => {
    const a = await person();
    await a.post({ channel: CHANNEL, action: 'join' });
    const cases: [unknown, number, RegExp][] = [
      [{ channel: CHANNEL, action: 'delete' }, 400, /action must be one of: join, leave, thread, comment/],
      [{ channel: CHANNEL }, 400, /action/],
      [{ action: 'join' }, 400, /channel/],
      [{ channel: CHANNEL, action: 'thread', body: 'no title' }, 400, /title/],
      [{ channel: CHANNEL, action: 'thread', title: '   ', body: 'blank title' }, 400, /title must not be empty/],
      [{ channel: CHANNEL, action: 'thread', title: 'x'.repeat(201), body: 'b' }, 400, /title must be at most 200 characters/],
      [{ channel: CHANNEL, action: 'thread', title: 't', body: 'b'.repeat(10_001) }, 400, /body must be at most 10000 characters/],
      [{ channel: CHANNEL, action: 'comment', body: 'no thread' }, 400, /threadId/],
      [{ channel: CHANNEL, action: 'join', extra: 1 }, 400, /unknown field "extra"/],
      [[1, 2], 400, /JSON object/],
      [{ channel: 'no-such-channel', action: 'join' }, 404, /no-such-channel/],
    ];
    for (const [body, status, message] of cases) {
      const res = await a.post(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.json.message, JSON.stringify(body).slice(0, 80)).toMatch(message);
      expect(res.json.error.code).toBe(status === 404 ? 'NOT_FOUND' : res.json.code);
    }
    const notJson = await a.post('{"channel": ');
    expect(notJson.status).toBe(400);
    expectApiError(notJson.json, 'BAD_REQUEST');
    const wrongType = await fetch(api, { method: 'POST', headers: { authorization: `Bearer ${a.token}`, 'content-type': 'text/plain' }, body: 'join' });
    expect(wrongType.status).toBe(415);
    const put = await fetch(api, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('POST');
  });

  it('when a channel has more threads than the limit, then cursor pages walk them all once, newest activity first', async () => {
    const a = await person();
    await a.post({ channel: OTHER, action: 'join' });
    for (let i = 1; i <= 5; i++) await a.post({ channel: OTHER, action: 'thread', title: `Page test ${i}`, body: `Body ${i}` });
    const seen: { title: string; lastActivityAt: string }[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (await list(`channel=${OTHER}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json;
      expect(page.threads.length).toBeLessThanOrEqual(2);
      seen.push(...page.threads);
      cursor = page.nextCursor;
    } while (cursor);
    const titles = seen.map((t) => t.title);
    expect(titles.filter((t) => t.startsWith('Page test')).sort()).toEqual(['Page test 1', 'Page test 2', 'Page test 3', 'Page test 4', 'Page test 5']);
    expect(new Set(titles).size).toBe(titles.length);
    const times = seen.map((t) => t.lastActivityAt);
    expect(times).toEqual([...times].sort().reverse());

    for (const q of ['limit=0', 'limit=51', 'limit=two', 'cursor=garbage']) {
      const res = await list(`channel=${OTHER}&${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.message, q).toMatch(q.startsWith('limit') ? /limit must be a whole number from 1 to 50/ : /cursor/);
    }
  });

  it('when a body holds markup, then it is stored as written and every rendering escapes it', async () => {
    const a = await person('<b>Mallory</b>');
    await a.post({ channel: CHANNEL, action: 'join' });
    const nasty = '<script>alert("x")</script> **bold** [click](javascript:alert(1)) & <img src=x onerror=alert(2)>';
    const thread = (await a.post({ channel: CHANNEL, action: 'thread', title: '<i>Title</i> & more', body: nasty })).json.thread;
    expect(thread.body).toBe(nasty);
    expect((await list(`channel=${CHANNEL}&threadId=${thread.id}`)).json.thread.body).toBe(nasty);

    const html = await (await fetch(`${svc.urls.site}/channels/${CHANNEL}/threads/${thread.id}`)).text();
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>Mallory</b>');
    // Escaped as text: `<` and `&` become entities (`>` and `"` in text need none).
    expect(html).toMatch(/&lt;script(&gt;|>)alert\((&quot;|")x(&quot;|")\)&lt;\/script(&gt;|>)/);
    expect(html).toMatch(/&lt;i(&gt;|>)Title&lt;\/i(&gt;|>) &amp; more/);
    expect(html).not.toContain('href="javascript');

    const md = await (await fetch(`${svc.urls.site}/api/md?path=/channels/${CHANNEL}/threads/${thread.id}`)).text();
    expect(md).toContain('\\<script\\>');
    expect(md).toContain('\\*\\*bold\\*\\*');
    expect(md).toContain('\\[click\\](javascript:alert(1))');
    expect(md).not.toMatch(/[^\\]\[click\]/);
  });

  it('when a person has no name, then others see a stable pseudonym, never the email address', async () => {
    const a = await person(null);
    await a.post({ channel: CHANNEL, action: 'join' });
    const thread = (await a.post({ channel: CHANNEL, action: 'thread', title: 'Anonymous', body: 'Hello' })).json.thread;
    expect(thread.authorName).toMatch(/^Member [0-9a-f]{6}$/);
    const raw = await (await fetch(`${api}?channel=${CHANNEL}&threadId=${thread.id}`)).text();
    expect(raw).not.toContain(a.email);
  });

  /** An email address as a sign-in name, plainly and in the disguises a plain pattern lets through. */
  const EMAIL_NAMES = ['ana@example.com', 'ana＠example.com', 'ana @ example.com', 'ana@example．com', 'ana@localhost', 'ana﹫example.com'];

  it('when the sign-in name is an email address, plain or disguised, then writes are refused naming displayName until a name is chosen once', async () => {
    for (const email of EMAIL_NAMES) {
      const a = await person(email);
      const refused = await a.post({ channel: CHANNEL, action: 'join' });
      expect(refused.status, email).toBe(400);
      expectApiError(refused.json, 'VALIDATION_FAILED');
      expect(refused.json.message, email).toMatch(/^displayName is required/);
      expect(refused.json.hint, email).toContain('"displayName"');
      // Leaving publishes no name, so it needs none.
      expect((await a.post({ channel: CHANNEL, action: 'leave' })).status, email).toBe(200);
    }
    const a = await person('ana＠example.com');
    expect((await a.post({ channel: CHANNEL, action: 'join', displayName: '  Ana R.  ' })).json).toMatchObject({ status: 'joined' });
    // Chosen once: later writes carry it without being told again, and a second choice is not taken.
    const thread = (await a.post({ channel: CHANNEL, action: 'thread', title: 'Chosen name', body: 'Shown by the name I chose.' })).json.thread;
    expect(thread.authorName).toBe('Ana R.');
    const comment = (await a.post({ channel: CHANNEL, action: 'comment', threadId: thread.id, body: 'Still me.', displayName: 'Someone Else' })).json.comment;
    expect(comment.authorName).toBe('Ana R.');
    const raw = await (await fetch(`${api}?channel=${CHANNEL}&limit=50`)).text();
    for (const email of EMAIL_NAMES) expect(raw).not.toContain(email);
  });

  it('when displayName is an email address, plain or disguised, then 400 naming displayName and nothing is written', async () => {
    const a = await person(null);
    for (const name of [...EMAIL_NAMES, 'ana@\u200bexample.com', 'ＡＮＡ＠ＥＸＡＭＰＬＥ．ＣＯＭ']) {
      const res = await a.post({ channel: OTHER, action: 'join', displayName: name });
      expect(res.status, name).toBe(400);
      expectApiError(res.json, 'VALIDATION_FAILED');
      expect(res.json.message, name).toMatch(/displayName must not be an email address/);
    }
    expect((await a.post({ channel: OTHER, action: 'leave' })).json.status).toBe('not_member');
    const tooLong = await a.post({ channel: OTHER, action: 'join', displayName: 'x'.repeat(61) });
    expect(tooLong.json.message).toMatch(/displayName must be at most 60 characters/);
    // Full-width letters are stored as the letters they show, so the rule and the reader agree.
    expect((await a.post({ channel: OTHER, action: 'join', displayName: 'Ａｎａ Ｒ.' })).status).toBe(200);
    const thread = (await a.post({ channel: OTHER, action: 'thread', title: 'Normalised', body: 'NFKC' })).json.thread;
    expect(thread.authorName).toBe('Ana R.');
  });

  it('when a stored author name looks like an email address, then every reading shows the pseudonym instead', async () => {
    const db = svc.store.db;
    const now = new Date();
    const uid = `legacy-${Date.now()}`;
    const threadId = `thr_legacy${Date.now()}`;
    await db.collection<ThreadRecord>(COMMUNITY_COLLECTIONS.threads).insertOne({
      _id: threadId,
      channel: CHANNEL,
      title: 'Stored long ago',
      body: 'Before the rule.',
      authorUid: uid,
      authorName: 'old@example.com',
      createdAt: now,
      lastActivityAt: now,
    });
    await db.collection<CommentRecord>(COMMUNITY_COLLECTIONS.comments).insertOne({
      _id: `cmt_legacy${Date.now()}`,
      threadId,
      channel: CHANNEL,
      body: 'Me again.',
      authorUid: uid,
      authorName: 'old＠example.com',
      createdAt: now,
    });
    const pseudonym = expect.stringMatching(/^Member [0-9a-f]{6}$/);

    const listed = (await list(`channel=${CHANNEL}&limit=50`)).json.threads.find((t: any) => t.id === threadId);
    expect(listed.authorName).toEqual(pseudonym);
    const view = (await list(`channel=${CHANNEL}&threadId=${threadId}`)).json;
    expect(view.thread.authorName).toBe(listed.authorName);
    expect(view.comments[0].authorName).toBe(listed.authorName);
    const html = await (await fetch(`${svc.urls.site}/channels/${CHANNEL}/threads/${threadId}`)).text();
    const md = await (await fetch(`${svc.urls.site}/api/md?path=/channels/${CHANNEL}/threads/${threadId}`)).text();
    for (const text of [JSON.stringify(view), html, md]) {
      expect(text).not.toMatch(/old(@|＠)example/);
      expect(text).toContain(listed.authorName);
    }
  });
});

describe('community write limit', () => {
  let idp: FakeIdp;
  let svc: TestService;
  beforeAll(async () => {
    idp = await startFakeIdp();
    svc = await startTestService({ env: { ...idp.env, RATE_COMMUNITY_WRITES_PER_MIN: '5' } });
  });
  afterAll(async () => {
    await svc?.stop();
    await idp?.stop();
  });

  it('when one person writes more than the limit in a minute, then 429 with Retry-After; another person is unaffected', async () => {
    const post = async (token: string) =>
      fetch(`${svc.urls.site}/api/community`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: CHANNEL, action: 'join' }),
      });
    const busy = await idp.token({ sub: 'busy', email: 'busy@example.com', name: 'Busy' });
    for (let i = 0; i < 5; i++) expect((await post(busy)).status).toBe(200);
    // A token is minted every 12 s on the clock: one may land between these writes, never two.
    let limited = await post(busy);
    if (limited.status === 200) limited = await post(busy);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expectApiError(await limited.json(), 'RATE_LIMITED');
    const calm = await idp.token({ sub: 'calm', email: 'calm@example.com', name: 'Calm' });
    expect((await post(calm)).status).toBe(200);
  });
});
