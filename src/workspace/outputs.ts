// What each workspace tool returns as `structuredContent`: the tools' declared output schemas.
import { z } from 'zod';

const tenant = z.string();
const via = z.string();

export const pingOutput = z.object({ pong: z.literal(true), platform: z.string(), uid: z.string(), tenant, via });

export const profileOutput = z.object({
  uid: z.string(),
  email: z.string(),
  tenant,
  workspace: z.object({ id: z.string(), name: z.string(), role: z.string(), familyMemberCount: z.number().int() }).nullable().optional(),
});

export const lovedOnesOutput = z.object({
  workspaceId: z.string().nullable(),
  lovedOnes: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      firstName: z.string(),
      lastName: z.string(),
      inboxAddress: z.string(),
      /** Their IANA zone: new medications, appointments and tasks are meant in it unless they name another. */
      timeZone: z.string().optional(),
    }),
  ),
});

const event = z.object({
  id: z.string(),
  lovedOneId: z.string(),
  source: z.string(),
  eventType: z.string(),
  occurredAt: z.string(),
  receivedAt: z.string(),
  institutionId: z.string().optional(),
  payload: z.record(z.string(), z.unknown()),
  /** Who wrote a family entry, and how (their own name; through an assistant, its app or key name). */
  author: z.object({ uid: z.string(), name: z.string(), via: z.string(), client: z.string().optional() }).optional(),
  /** The entry this one corrects or withdraws. */
  supersedes: z.string().optional(),
});

export const careEventsOutput = z.object({
  lovedOneId: z.string().optional(),
  count: z.number().int(),
  events: z.array(event),
  byLovedOne: z.array(z.object({ lovedOneId: z.string(), name: z.string(), events: z.array(event), nextCursor: z.string().optional() })).optional(),
  /** Where the next page starts, when there is one. */
  nextCursor: z.string().optional(),
});
