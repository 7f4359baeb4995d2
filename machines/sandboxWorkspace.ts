// Sandbox workspace lifecycle (SPEC "States and transitions"): sandbox → claimed, or
// sandbox → orphaned when a different account tries to claim it; unclaimed and orphaned
// sandboxes are purged after their time-out. Pure: no I/O.
import { assign, setup } from 'xstate';

export interface SandboxContext {
  workspaceId: string;
  /** Lower-cased; absent means nobody can claim it. */
  primaryCaregiverEmail?: string;
  createdAt: string;
  claimedBy?: string;
  claimedAt?: string;
  orphanedAt?: string;
  purgedAt?: string;
}

export type SandboxEvent =
  /** A signed-in human with a verified email opened the claim link and confirmed. */
  | { type: 'CLAIM'; uid: string; email: string; at: string }
  /** The sweeper found it past its time-out. */
  | { type: 'EXPIRE'; at: string };

export const sandboxWorkspaceMachine = setup({
  types: {
    context: {} as SandboxContext,
    events: {} as SandboxEvent,
    input: {} as { workspaceId: string; primaryCaregiverEmail?: string; createdAt: string },
  },
  guards: {
    sameEmail: ({ context, event }) =>
      event.type === 'CLAIM' && !!context.primaryCaregiverEmail && event.email.trim().toLowerCase() === context.primaryCaregiverEmail,
  },
}).createMachine({
  id: 'sandboxWorkspace',
  context: ({ input }) => ({
    workspaceId: input.workspaceId,
    createdAt: input.createdAt,
    ...(input.primaryCaregiverEmail ? { primaryCaregiverEmail: input.primaryCaregiverEmail.trim().toLowerCase() } : {}),
  }),
  initial: 'sandbox',
  states: {
    sandbox: {
      on: {
        CLAIM: [
          {
            guard: 'sameEmail',
            target: 'claimed',
            actions: assign({ claimedBy: ({ event }) => (event.type === 'CLAIM' ? event.uid : undefined), claimedAt: ({ event }) => event.at }),
          },
          { target: 'orphaned', actions: assign({ orphanedAt: ({ event }) => event.at }) },
        ],
        EXPIRE: { target: 'purged', actions: assign({ purgedAt: ({ event }) => event.at }) },
      },
    },
    orphaned: {
      on: { EXPIRE: { target: 'purged', actions: assign({ purgedAt: ({ event }) => event.at }) } },
    },
    claimed: { type: 'final' },
    purged: { type: 'final' },
  },
});

export const SANDBOX_WORKSPACE_MACHINE = { name: 'sandboxWorkspace', version: 1, machine: sandboxWorkspaceMachine } as const;
