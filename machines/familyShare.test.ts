import { createActor, initialTransition, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { activeLink, familyShareMachine, type FamilyShareEvent } from './familyShare.js';

const input = { institutionId: 'inst_a', subjectRef: 'client-7' };
const enable = (hash = 'h1', expires = '2026-12-01T00:00:00.000Z'): FamilyShareEvent => ({
  type: 'ENABLE',
  at: '2026-11-22T10:00:00.000Z',
  linkCodeHash: hash,
  linkCodeExpiresAt: expires,
});
const link = (hash = 'h1', at = '2026-11-22T11:00:00.000Z'): FamilyShareEvent => ({
  type: 'LINK',
  at,
  linkCodeHash: hash,
  linkId: 'lnk_1',
  lovedOneId: 'lo_1',
  workspaceId: 'ws_1',
  uid: 'u1',
});

describe('familyShare machine', () => {
  it('when created, then it is off, has no mapping, and only ENABLE or PURGE apply', () => {
    const [s] = initialTransition(familyShareMachine, input);
    expect(s.value).toBe('off');
    expect(activeLink(s)).toBeNull();
    expect(s.can(enable())).toBe(true);
    expect(s.can({ type: 'DISABLE', at: 't' })).toBe(false);
    expect(s.can(link())).toBe(false);
    expect(s.can({ type: 'PURGE', at: 't' })).toBe(true);
  });

  it('when turned on, then it awaits the family with the code hash of this generation and still has no mapping', () => {
    const [s0] = initialTransition(familyShareMachine, input);
    const [s1] = transition(familyShareMachine, s0, enable());
    expect(s1.matches({ on: 'awaitingLink' })).toBe(true);
    expect(s1.context).toMatchObject({ generation: 1, linkCodeHash: 'h1', enabledAt: '2026-11-22T10:00:00.000Z' });
    expect(activeLink(s1)).toBeNull();
    expect(s1.can(enable())).toBe(false);
  });

  it('when the family enters the right code in time, then the subject is linked to their loved one and the code is spent', () => {
    const [s0] = initialTransition(familyShareMachine, input);
    const [s1] = transition(familyShareMachine, s0, enable());
    const [s2] = transition(familyShareMachine, s1, link());
    expect(s2.matches({ on: 'linked' })).toBe(true);
    expect(activeLink(s2)).toEqual({ linkId: 'lnk_1', lovedOneId: 'lo_1', workspaceId: 'ws_1', linkedAt: '2026-11-22T11:00:00.000Z', linkedBy: 'u1' });
    expect(s2.context.linkCodeHash).toBeUndefined();
    expect(s2.can(link())).toBe(false);
  });

  it('when the code is wrong or expired, then LINK is refused', () => {
    const [s0] = initialTransition(familyShareMachine, input);
    const [s1] = transition(familyShareMachine, s0, enable('h1', '2026-11-23T00:00:00.000Z'));
    expect(s1.can(link('other'))).toBe(false);
    expect(s1.can(link('h1', '2026-11-23T00:00:00.000Z'))).toBe(false);
    expect(s1.can(link('h1', '2026-11-22T23:59:59.000Z'))).toBe(true);
  });

  it('when turned off, then the mapping and any outstanding code are gone; on again needs a new code', () => {
    const [s0] = initialTransition(familyShareMachine, input);
    const [s1] = transition(familyShareMachine, s0, enable('h1'));
    const [s2] = transition(familyShareMachine, s1, link('h1'));
    const [s3] = transition(familyShareMachine, s2, { type: 'DISABLE', at: '2026-11-23T00:00:00.000Z' });
    expect(s3.value).toBe('off');
    expect(activeLink(s3)).toBeNull();
    expect(s3.context.link).toBeUndefined();
    const [s4] = transition(familyShareMachine, s3, enable('h2'));
    expect(s4.context.generation).toBe(2);
    expect(activeLink(s4)).toBeNull();
    expect(s4.can(link('h1'))).toBe(false);
    expect(s4.can(link('h2'))).toBe(true);
  });

  it('when purged, then the instant is recorded in any state without changing the state', () => {
    const [s0] = initialTransition(familyShareMachine, input);
    const [s1] = transition(familyShareMachine, s0, enable());
    const [s2] = transition(familyShareMachine, s1, link());
    const [s3] = transition(familyShareMachine, s2, { type: 'PURGE', at: '2026-11-24T00:00:00.000Z' });
    expect(s3.matches({ on: 'linked' })).toBe(true);
    expect(s3.context.purgedAt).toBe('2026-11-24T00:00:00.000Z');
    const [off] = transition(familyShareMachine, s0, { type: 'PURGE', at: '2026-11-25T00:00:00.000Z' });
    expect(off.value).toBe('off');
    expect(off.context.purgedAt).toBe('2026-11-25T00:00:00.000Z');
  });

  it('when persisted as JSON and restored, then the next event still applies', () => {
    const [s0] = initialTransition(familyShareMachine, input);
    const [s1] = transition(familyShareMachine, s0, enable());
    const stored = JSON.parse(JSON.stringify(familyShareMachine.getPersistedSnapshot(s1)));
    const restored = createActor(familyShareMachine, { snapshot: stored, input }).getSnapshot();
    expect(restored.matches({ on: 'awaitingLink' })).toBe(true);
    const [s2] = transition(familyShareMachine, restored, link());
    expect(activeLink(s2)?.lovedOneId).toBe('lo_1');
  });
});
