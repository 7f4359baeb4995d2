// MCP API key lifecycle: active → revoked. Revocation is final. Pure: no I/O.
import { assign, setup } from 'xstate';

export interface ApiKeyContext {
  keyId: string;
  uid: string;
  revokedAt?: string;
  revokedBy?: string;
}

export type ApiKeyEvent = { type: 'REVOKE'; at: string; by: string };

export const apiKeyMachine = setup({
  types: {
    context: {} as ApiKeyContext,
    events: {} as ApiKeyEvent,
    input: {} as { keyId: string; uid: string },
  },
  guards: {
    /** Only the key's owner may revoke it. */
    byOwner: ({ context, event }) => event.by === context.uid,
  },
}).createMachine({
  id: 'apiKey',
  context: ({ input }) => ({ keyId: input.keyId, uid: input.uid }),
  initial: 'active',
  states: {
    active: {
      on: {
        REVOKE: { guard: 'byOwner', target: 'revoked', actions: assign({ revokedAt: ({ event }) => event.at, revokedBy: ({ event }) => event.by }) },
      },
    },
    revoked: { type: 'final' },
  },
});

export const API_KEY_MACHINE = { name: 'apiKey', version: 1, machine: apiKeyMachine } as const;
