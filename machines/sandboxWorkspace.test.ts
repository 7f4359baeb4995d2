import { createActor, initialTransition, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { sandboxWorkspaceMachine } from './sandboxWorkspace.js';

const input = { workspaceId: 'ws_1', primaryCaregiverEmail: 'Ana@Example.com', createdAt: '2026-11-01T00:00:00Z' };
const claim = (email: string) => ({ type: 'CLAIM' as const, uid: 'u1', email, at: '2026-11-02T00:00:00Z' });

describe('sandboxWorkspace machine', () => {
  it('when the same email claims it (any case), then claimed and final', () => {
    const [s0] = initialTransition(sandboxWorkspaceMachine, input);
    expect(s0.value).toBe('sandbox');
    const [s1] = transition(sandboxWorkspaceMachine, s0, claim('ana@EXAMPLE.com'));
    expect(s1.value).toBe('claimed');
    expect(s1.context.claimedBy).toBe('u1');
    expect(s1.can({ type: 'EXPIRE', at: 'x' })).toBe(false);
  });

  it('when a different email claims it, then orphaned: never claimable, purged on expiry', () => {
    const [s0] = initialTransition(sandboxWorkspaceMachine, input);
    const [s1] = transition(sandboxWorkspaceMachine, s0, claim('someone@else.com'));
    expect(s1.value).toBe('orphaned');
    expect(s1.can(claim('ana@example.com'))).toBe(false);
    const [s2] = transition(sandboxWorkspaceMachine, s1, { type: 'EXPIRE', at: '2026-11-09T00:00:00Z' });
    expect(s2.value).toBe('purged');
  });

  it('when no caregiver email was given, then any claim orphans it', () => {
    const [s0] = initialTransition(sandboxWorkspaceMachine, { workspaceId: 'ws_2', createdAt: 'x' });
    expect(transition(sandboxWorkspaceMachine, s0, claim('ana@example.com'))[0].value).toBe('orphaned');
  });

  it('when unclaimed past its time-out, then purged', () => {
    const [s0] = initialTransition(sandboxWorkspaceMachine, input);
    expect(transition(sandboxWorkspaceMachine, s0, { type: 'EXPIRE', at: 'later' })[0].value).toBe('purged');
  });

  it('when persisted as JSON and restored, then the next event still applies', () => {
    const [s0] = initialTransition(sandboxWorkspaceMachine, input);
    const stored = JSON.parse(JSON.stringify(sandboxWorkspaceMachine.getPersistedSnapshot(s0)));
    const restored = createActor(sandboxWorkspaceMachine, { snapshot: stored, input }).getSnapshot();
    expect(restored.context.primaryCaregiverEmail).toBe('ana@example.com');
    expect(transition(sandboxWorkspaceMachine, restored, claim('ana@example.com'))[0].value).toBe('claimed');
  });
});
