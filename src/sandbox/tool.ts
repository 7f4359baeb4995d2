// The sandbox endpoint's one tool: start_family_care_workspace (SPEC §B2).
import { z } from 'zod';
import type { Bus } from '../bus/types.js';
import { sentence } from '../http/prose.js';
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import { implementTool, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import type { BucketPolicy, Limiter } from '../limits/limiter.js';
import type { SandboxService } from './service.js';
import { countRateLimited } from '../metrics/index.js';

export function sandboxInput(appUrl: string) {
  const name = (field: string) =>
    z
      .string({ error: `${field} is required (1-60 characters)` })
      .trim()
      .min(1, 'must be 1-60 characters')
      .max(60, 'must be 1-60 characters');
  return z
    .object({
      lovedOneFirstName: name('lovedOneFirstName').describe("The loved one's first name (1-60 characters)."),
      lovedOneLastName: name('lovedOneLastName').describe("The loved one's last name (1-60 characters)."),
      sandbox: z
        .literal(true, {
          error: `must be true: this endpoint only creates sandbox workspaces. To create a real family workspace, a person signs in at ${appUrl}/onboarding`,
        })
        .describe('Must be true.'),
      familyName: z
        .string()
        .trim()
        .min(1, 'must not be empty')
        .max(120, 'must be at most 120 characters')
        .optional()
        .describe('Defaults to "The <lastName> Family (sandbox)".'),
      primaryCaregiverEmail: z
        .email('must be an email address')
        .max(254)
        .transform((e) => e.toLowerCase())
        .optional()
        .describe('Strongly recommended: the email the caregiver must sign in with to claim this workspace.'),
      careContext: z
        .string()
        .max(2000, 'must be at most 2000 characters')
        .optional()
        .describe('Free-text context about the care situation (up to 2000 characters). Stored, never echoed in notifications.'),
      familyMemberEmails: z
        .array(z.email('must be an email address').max(254))
        .max(64, 'must list at most 8 distinct emails')
        .optional()
        .transform((list) => [...new Set((list ?? []).map((e) => e.trim().toLowerCase()))])
        .refine((list) => list.length <= 8, { message: 'must list at most 8 distinct emails' })
        .describe('Family members to invite later (at most 8 after removing duplicates). Returned as drafts; never emailed from a sandbox.'),
    })
    .strict();
}

export interface SandboxToolDeps {
  service: SandboxService;
  limiter: Limiter;
  policy: BucketPolicy;
  appUrl: string;
  bus: Bus;
  opsSubject: string;
  opsNotify: boolean;
}

export const NOTHING_SENT = 'Draft only: nothing was sent. Invitations can be sent after a person claims the workspace.';

/** The sandbox endpoint's one tool, as clients and discovery documents see it. */
export const START_WORKSPACE_TOOL: ToolDeclaration = {
  name: 'start_family_care_workspace',
  title: 'Start a sandbox family care workspace',
  description:
    'Create a sandbox family workspace for a loved one, with no sign-in: a loved-one record, a live private inbox address that accepts forwarded provider mail at once, and invitation drafts (never sent). A person claims it later by signing in with primaryCaregiverEmail at the link in the result. Unclaimed sandboxes are deleted after a week.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  output: z.object({
    workspaceId: z.string(),
    lovedOneId: z.string(),
    inboxAddress: z.string(),
    familyName: z.string(),
    inviteDrafts: z.array(z.object({ email: z.string(), role: z.string(), status: z.literal('draft'), note: z.string() })),
    sandbox: z.literal(true),
    primaryCaregiverEmail: z.string().nullable(),
  }),
};

export function sandboxTools(deps: SandboxToolDeps): ToolDefinition[] {
  return [
    implementTool(START_WORKSPACE_TOOL, {
      input: sandboxInput(deps.appUrl),
      handler: async (args, ctx) => {
        const taken = await deps.limiter.take(`sandbox:ip:${ctx.clientIp}`, deps.policy);
        if (!taken.allowed) countRateLimited('sandbox');
        if (!taken.allowed)
          throw new RpcError(
            RPC.RATE_LIMITED,
            'Rate limit exceeded: too many sandbox workspaces from this address',
            { hint: `Wait ${taken.retryAfterSec} s, then retry once.`, retryAfterSec: taken.retryAfterSec },
            429,
          );
        const created = await deps.service.create({
          lovedOneFirstName: args.lovedOneFirstName,
          lovedOneLastName: args.lovedOneLastName,
          familyMemberEmails: args.familyMemberEmails,
          ...(args.familyName ? { familyName: args.familyName } : {}),
          ...(args.primaryCaregiverEmail ? { primaryCaregiverEmail: args.primaryCaregiverEmail } : {}),
          ...(args.careContext ? { careContext: args.careContext } : {}),
        });
        const result = {
          workspaceId: created.workspace._id,
          lovedOneId: created.lovedOne._id,
          inboxAddress: created.lovedOne.inboxAddress,
          familyName: created.workspace.name,
          inviteDrafts: created.drafts.map((d) => ({ email: d.email, role: d.role, status: 'draft' as const, note: NOTHING_SENT })),
          sandbox: true as const,
          primaryCaregiverEmail: args.primaryCaregiverEmail ?? null,
        };
        if (deps.opsNotify) {
          // Best effort, ids and counts only: never names, emails or careContext.
          try {
            deps.bus.publish(deps.opsSubject, {
              event: 'sandbox.created',
              workspaceId: result.workspaceId,
              lovedOneId: result.lovedOneId,
              inviteDraftCount: result.inviteDrafts.length,
              hasPrimaryCaregiverEmail: !!args.primaryCaregiverEmail,
              at: new Date().toISOString(),
            });
          } catch {
            /* never fails the call */
          }
        }
        const claimUrl = `${deps.appUrl}/onboarding?workspace=${encodeURIComponent(result.workspaceId)}`;
        const summary = [
          sentence(`Created sandbox workspace "${result.familyName}" for ${args.lovedOneFirstName} ${args.lovedOneLastName}`),
          `Private inbox (live now): ${result.inboxAddress} — forward provider mail here.`,
          result.inviteDrafts.length ? `${result.inviteDrafts.length} invitation draft(s) saved; nothing was emailed.` : 'No invitation drafts.',
          args.primaryCaregiverEmail
            ? `To keep it, ${args.primaryCaregiverEmail} signs in at ${claimUrl} with that same email.`
            : `No primaryCaregiverEmail was given, so nobody can claim it; it will be deleted after it times out. Create another with primaryCaregiverEmail to keep one.`,
          'Unclaimed sandboxes are deleted after 7 days.',
        ].join('\n');
        return { summary, structured: result };
      },
    }),
  ];
}
