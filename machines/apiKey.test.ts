import { createActor, initialTransition, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { apiKeyMachine } from './apiKey.js';

const input = { keyId: 'key_1', uid: 'u1' };

describe('apiKey machine', () => {
  it('when minted, then it is active and can be revoked by its owner only', () => {
    const [s] = initialTransition(apiKeyMachine, input);
    expect(s.matches('active')).toBe(true);
    expect(s.can({ type: 'REVOKE', at: 't', by: 'u1' })).toBe(true);
    expect(s.can({ type: 'REVOKE', at: 't', by: 'someone-else' })).toBe(false);
  });

  it('when revoked, then it is final and records when and by whom', () => {
    const [s0] = initialTransition(apiKeyMachine, input);
    const [s1] = transition(apiKeyMachine, s0, { type: 'REVOKE', at: '2026-11-22T00:00:00Z', by: 'u1' });
    expect(s1.matches('revoked')).toBe(true);
    expect(s1.status).toBe('done');
    expect(s1.context).toMatchObject({ revokedAt: '2026-11-22T00:00:00Z', revokedBy: 'u1' });
    expect(s1.can({ type: 'REVOKE', at: 'later', by: 'u1' })).toBe(false);
  });

  it('when persisted as JSON and restored, then the next event still applies', () => {
    const [s0] = initialTransition(apiKeyMachine, input);
    const stored = JSON.parse(JSON.stringify(apiKeyMachine.getPersistedSnapshot(s0)));
    const restored = createActor(apiKeyMachine, { snapshot: stored, input }).getSnapshot();
    expect(restored.context).toEqual({ keyId: 'key_1', uid: 'u1' });
    const [s1] = transition(apiKeyMachine, restored, { type: 'REVOKE', at: 't', by: 'u1' });
    expect(s1.value).toBe('revoked');
  });
});
