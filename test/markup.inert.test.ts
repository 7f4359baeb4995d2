// Script and attribute payloads fed through the data each page shows (workspace and loved-one
// names, key names, mail, sandbox drafts, OAuth client names and errors, the site's titles) come
// out as inert text.
import { h } from 'preact';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderMarkup } from '../src/http/html.js';
import { renderShell } from '../src/http/page.js';
import { connectedAppsSection } from '../src/app/connectedApps.js';
import { clockIn } from '../src/app/time.js';
import { consentPage, errorPage } from '../src/oauth/pages.js';
import { renderHtml } from '../src/site/layout.js';
import { WorkspaceStore } from '../src/family/records.js';
import { KeyStore } from '../src/keys/keys.js';
import { storeInboxItem } from '../src/inbox/records.js';
import { SessionStore } from '../src/auth/sessions.js';
import { startTestService, type TestService } from './harness/service.js';

const PAYLOADS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>', "' onmouseover='alert(3)", '<svg onload=alert(4)>', 'javascript:alert(5)'];
const EVIL = PAYLOADS.join(' ');

/** No payload opened a tag, and none broke out of an attribute into an event handler. */
function expectInert(html: string, where: string) {
  expect(html, where).not.toMatch(/<script>alert|<img src=x|<svg onload/i);
  expect(html, where).not.toMatch(/<[^>]*\son(mouseover|error|load)=/i);
  expect(html, where).not.toMatch(/href="javascript:/i);
}

describe('markup - payloads in page data are inert', () => {
  it('when the shell, OAuth pages, Connected apps and site pages show payloads, then they are text', () => {
    expectInert(renderShell({ title: EVIL, description: EVIL, canonical: EVIL, header: h('p', null, EVIL), main: h('p', { title: EVIL }, EVIL) }), 'shell');
    const consent = renderMarkup(
      consentPage({
        uid: EVIL,
        clientName: EVIL,
        clientUri: 'https://x.example/"><script>alert(1)</script>',
        redirectUri: EVIL,
        email: EVIL,
        requested: ['profile:read'],
        approved: [],
        settingsUrl: EVIL,
        problem: EVIL,
      }),
    );
    expectInert(consent, 'consent');
    expect(consent).toContain('&lt;script>alert(1)&lt;/script>');
    expectInert(renderMarkup(errorPage(EVIL, EVIL, EVIL)), 'oauth error');
    const app = { grantId: EVIL, clientId: EVIL, clientName: EVIL, redirectHosts: [EVIL], scope: 'profile:read', createdAt: new Date() };
    expectInert(renderMarkup(connectedAppsSection([app], clockIn('UTC'))), 'connected apps');
    expectInert(
      renderHtml({ path: '/x"><script>alert(1)</script>', title: EVIL, description: EVIL, blocks: [] } as never, {
        siteUrl: 'https://site.example',
        appUrl: 'https://app.example',
      }),
      'site layout',
    );
  });
});

describe('markup - app pages served by real servers', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('when a workspace, its loved one, a key and inbox mail carry payloads, then home, Settings, care pages and the inbox print them inert', async () => {
    const store = new WorkspaceStore(svc.store.db, svc.credentials, svc.config.inboxDomain, svc.timelines);
    const uid = 'u-evil-markup';
    const email = 'evil"markup@example.com';
    await store.upsertUser({ uid, email, name: EVIL });
    const ws = await store.createWorkspace({ name: EVIL, owner: { uid, email }, sandbox: false });
    const lovedOne = await store.addLovedOne(ws._id, { firstName: PAYLOADS[0]!, lastName: PAYLOADS[1]! }, false);
    await new KeyStore(svc.store.db, svc.credentials).mint(uid, EVIL);
    await storeInboxItem(svc.timelines, {
      _id: 'mail-evil',
      lovedOneId: lovedOne._id,
      workspaceId: ws._id,
      from: EVIL,
      subject: EVIL,
      receivedAt: new Date(),
      excerpt: `${EVIL}\n${EVIL}`,
      attachmentNames: [EVIL],
    });
    const { token } = await new SessionStore(svc.store.db, svc.credentials).create({ uid, email, tenant: 'family' });
    const id = encodeURIComponent(lovedOne._id);
    for (const path of [
      '/',
      '/settings',
      `/inbox/${id}`,
      `/care/${id}`,
      `/care/${id}/medications`,
      `/care/${id}/vitals`,
      '/workspace/invites',
      '/workspace/name',
      `/workspace/loved-ones/${id}/edit`,
      `/workspace/loved-ones/${id}/remove`,
    ]) {
      const res = await fetch(`${svc.config.appUrl}${path}`, {
        headers: { cookie: `cc_session=${token}; tz=${encodeURIComponent('"><script>alert(1)</script>')}` },
      });
      expect(res.status, path).toBe(200);
      const html = await res.text();
      expectInert(html, path);
      if (path !== '/settings' && path !== '/workspace/invites') expect(html, path).toContain('&lt;script>alert(1)&lt;/script>');
    }
  });
});
