// Family-share of one partner client (institution + subject_ref): off → on (awaiting link → linked) → off.
// Pure: no I/O. The link code itself never enters the machine, only its hash.
import { assign, setup, type SnapshotFrom } from 'xstate';

export interface FamilyShareLink {
  /** Changes with every binding, so an event accepted under one binding never lands in another. */
  linkId: string;
  lovedOneId: string;
  workspaceId: string;
  linkedAt: string;
  linkedBy: string;
}

export interface FamilyShareContext {
  institutionId: string;
  subjectRef: string;
  /** Counts the times family-share was turned on; each time has its own link code. */
  generation: number;
  enabledAt?: string;
  disabledAt?: string;
  /** SHA-256 of the outstanding link code (only while awaiting the family). */
  linkCodeHash?: string;
  linkCodeExpiresAt?: string;
  link?: FamilyShareLink;
  /** Events received at or before this instant were purged on the agency's request. */
  purgedAt?: string;
}

export type FamilyShareEvent =
  | { type: 'ENABLE'; at: string; linkCodeHash: string; linkCodeExpiresAt: string }
  | { type: 'DISABLE'; at: string }
  | { type: 'LINK'; at: string; linkCodeHash: string; linkId: string; lovedOneId: string; workspaceId: string; uid: string }
  | { type: 'PURGE'; at: string };

export const familyShareMachine = setup({
  types: {
    context: {} as FamilyShareContext,
    events: {} as FamilyShareEvent,
    input: {} as { institutionId: string; subjectRef: string },
  },
  guards: {
    /** The family entered the code of this generation, before it expired. */
    codeMatches: ({ context, event }) =>
      event.type === 'LINK' &&
      context.linkCodeHash !== undefined &&
      event.linkCodeHash === context.linkCodeHash &&
      context.linkCodeExpiresAt !== undefined &&
      Date.parse(event.at) < Date.parse(context.linkCodeExpiresAt),
  },
  actions: {
    recordPurge: assign({ purgedAt: ({ event }) => event.at }),
  },
}).createMachine({
  id: 'familyShare',
  context: ({ input }) => ({ institutionId: input.institutionId, subjectRef: input.subjectRef, generation: 0 }),
  initial: 'off',
  on: {
    PURGE: { actions: 'recordPurge' },
  },
  states: {
    off: {
      on: {
        ENABLE: {
          target: 'on',
          actions: assign(({ context, event }) => ({
            generation: context.generation + 1,
            enabledAt: event.at,
            linkCodeHash: event.linkCodeHash,
            linkCodeExpiresAt: event.linkCodeExpiresAt,
            link: undefined,
          })),
        },
      },
    },
    on: {
      initial: 'awaitingLink',
      on: {
        DISABLE: {
          target: 'off',
          actions: assign({ disabledAt: ({ event }) => event.at, linkCodeHash: undefined, linkCodeExpiresAt: undefined, link: undefined }),
        },
      },
      states: {
        awaitingLink: {
          on: {
            LINK: {
              guard: 'codeMatches',
              target: 'linked',
              actions: assign(({ event }) =>
                event.type === 'LINK'
                  ? {
                      link: { linkId: event.linkId, lovedOneId: event.lovedOneId, workspaceId: event.workspaceId, linkedAt: event.at, linkedBy: event.uid },
                      linkCodeHash: undefined,
                      linkCodeExpiresAt: undefined,
                    }
                  : {},
              ),
            },
          },
        },
        linked: {},
      },
    },
  },
});

export const FAMILY_SHARE_MACHINE = { name: 'familyShare', version: 1, machine: familyShareMachine } as const;

/** The binding events flow along, or null when the subject has no mapping (off, or not linked yet). */
export function activeLink(snapshot: SnapshotFrom<typeof familyShareMachine>): FamilyShareLink | null {
  return snapshot.matches({ on: 'linked' }) && snapshot.context.link ? snapshot.context.link : null;
}
