// The rule for where a sign-in may lead: every hostile return address in the table is refused,
// addresses of the app become paths, addresses of the site stay full URLs, and the development
// identity provider's return_to accepts only absolute addresses of our own hosts.
import { describe, expect, it } from 'vitest';
import { returnTarget } from '../src/http/returnTarget.js';
import { hostileNexts, keptNexts } from './returnTarget.fixtures.js';

const ORIGINS = { app: 'https://app.carecircle.example', site: 'https://carecircle.example', evil: 'evil.example' };
const LOCAL = { app: 'http://127.0.0.1:8081', site: 'http://127.0.0.1:8080', evil: '127.0.0.2:9' };

describe('return target - after sign-in', () => {
  for (const origins of [ORIGINS, LOCAL]) {
    it(`when a next is hostile (${origins.app}), then it is refused`, () => {
      for (const next of hostileNexts(origins)) expect(returnTarget(next, origins.app, [origins.site]), JSON.stringify(next)).toBeNull();
    });

    it(`when a next is on the app or the site (${origins.app}), then the app's is a path and the site's a full URL`, () => {
      for (const [next, expected] of keptNexts(origins)) expect(returnTarget(next, origins.app, [origins.site]), next).toBe(expected);
    });
  }

  it('when the candidate is not a string, then it is refused', () => {
    for (const value of [undefined, null, 42, ['/'], { href: '/' }]) expect(returnTarget(value, ORIGINS.app)).toBeNull();
  });

  it('when no other origin is allowed, then a site address is refused too', () => {
    expect(returnTarget(`${ORIGINS.site}/channels`, ORIGINS.app)).toBeNull();
    expect(returnTarget('/channels', ORIGINS.app)).toBe('/channels');
  });
});

describe('return target - absolute only (the identity provider return_to)', () => {
  const ours = [ORIGINS.site, ORIGINS.app, 'https://auth.carecircle.example'];

  it('when return_to is an absolute address of one of our hosts, then it is kept as a full URL', () => {
    expect(returnTarget(`${ORIGINS.app}/auth/callback?next=%2Fsettings`, null, ours)).toBe(`${ORIGINS.app}/auth/callback?next=%2Fsettings`);
    expect(returnTarget('https://auth.carecircle.example/oauth/interaction/abc/signed-in', null, ours)).toBe(
      'https://auth.carecircle.example/oauth/interaction/abc/signed-in',
    );
  });

  it('when return_to is relative or hostile, then it is refused', () => {
    for (const next of ['/auth/callback', 'auth/callback', ...hostileNexts(ORIGINS)]) expect(returnTarget(next, null, ours), JSON.stringify(next)).toBeNull();
  });
});
