// The community API's wire shapes: list queries, the four actions, and what each answers.
import { z } from 'zod';
import { DISPLAY_NAME_MAX, looksLikeEmail, normalName } from './names.js';

export { DISPLAY_NAME_MAX };

export const TITLE_MAX = 200;
export const THREAD_BODY_MAX = 10_000;
export const COMMENT_BODY_MAX = 5_000;
export const PAGE_LIMIT_MAX = 50;
export const PAGE_LIMIT_DEFAULT = 20;

/** Text as stored: line breaks normalised, control characters (other than newline and tab) removed. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
const cleanText = (s: string) => s.replace(/\r\n?/g, '\n').replace(CONTROL, '').trim();

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string of 1-${max} characters` })
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .transform(cleanText)
    .pipe(z.string().min(1, `${field} must not be empty`));

const channel = z
  .string({ error: 'channel must be a channel slug such as "dementia-and-alzheimers"' })
  .trim()
  .min(1, 'channel must not be empty')
  .max(100, 'channel must be at most 100 characters');
const threadId = z
  .string({ error: 'threadId must be a thread id from GET /api/community' })
  .trim()
  .min(1, 'threadId must not be empty')
  .max(64, 'threadId must be at most 64 characters');

/** The name shown to others: one line, never an email address (the sign-in name is not the
 *  default). Judged, and stored, after NFKC normalisation, so `ana＠example.com` is an address too. */
export const displayName = z
  .string({ error: `displayName must be a string of 1-${DISPLAY_NAME_MAX} characters` })
  .transform(normalName)
  .pipe(text('displayName', DISPLAY_NAME_MAX))
  .pipe(z.string().refine((s) => !s.includes('\n'), 'displayName must be one line'))
  .pipe(z.string().refine((s) => !looksLikeEmail(s), 'displayName must not be an email address: choose a name such as "Ana R." or "Daughter in Ohio"'));

/** On the API's writes: the name to be shown by, chosen once (the site's forms ask for it the same way). */
const chosenDisplayName = displayName
  .optional()
  .describe(
    `The name others see, chosen once and kept (1-${DISPLAY_NAME_MAX} characters, one line, not an email address); needed once when the name your sign-in gives is an email address.`,
  );

export const COMMUNITY_ACTIONS = ['join', 'leave', 'thread', 'comment'] as const;

/** The part every action shares, parsed first so a bad `action` gets a clear message. */
export const communityActionBase = z.object({
  channel,
  action: z.enum(COMMUNITY_ACTIONS, { error: `action must be one of: ${COMMUNITY_ACTIONS.join(', ')}` }),
});

export const communityAction = z.discriminatedUnion('action', [
  z.object({ channel, action: z.literal('join'), displayName: chosenDisplayName }).strict(),
  z.object({ channel, action: z.literal('leave') }).strict(),
  z
    .object({ channel, action: z.literal('thread'), title: text('title', TITLE_MAX), body: text('body', THREAD_BODY_MAX), displayName: chosenDisplayName })
    .strict(),
  z.object({ channel, action: z.literal('comment'), threadId, body: text('body', COMMENT_BODY_MAX), displayName: chosenDisplayName }).strict(),
]);
export type CommunityAction = z.infer<typeof communityAction>;

const limit = z.coerce
  .number({ error: `limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}` })
  .int(`limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}`)
  .min(1, `limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}`)
  .max(PAGE_LIMIT_MAX, `limit must be a whole number from 1 to ${PAGE_LIMIT_MAX}`)
  .default(PAGE_LIMIT_DEFAULT);

export const communityQuery = z.object({
  channel: z
    .string({ error: 'channel is required: a channel slug such as "dementia-and-alzheimers"' })
    .trim()
    .min(1, 'channel is required: a channel slug such as "dementia-and-alzheimers"')
    .max(100, 'channel must be at most 100 characters'),
  threadId: threadId.optional(),
  limit,
  cursor: z.string().max(200, 'cursor must be at most 200 characters').optional(),
});

// ---------------------------------------------------------------------------
// Responses (documented in openapi.json from these same schemas)
// ---------------------------------------------------------------------------

export const threadSummary = z.object({
  id: z.string(),
  channel: z.string(),
  title: z.string(),
  excerpt: z.string().describe('The start of the body, on one line, at most 200 characters.'),
  authorName: z.string().describe("The author's display name."),
  createdAt: z.string().describe('ISO 8601.'),
  commentCount: z.number().int(),
  lastActivityAt: z.string().describe('ISO 8601: creation or the newest comment.'),
});

export const threadDetail = threadSummary.extend({ body: z.string().describe('Plain text as written; render it escaped.') });

export const commentView = z.object({
  id: z.string(),
  threadId: z.string(),
  body: z.string().describe('Plain text as written; render it escaped.'),
  authorName: z.string(),
  createdAt: z.string().describe('ISO 8601.'),
});

const channelRef = z.object({ slug: z.string(), name: z.string(), url: z.string() });

export const threadList = z.object({
  channel: channelRef,
  memberCount: z.number().int(),
  threads: z.array(threadSummary),
  nextCursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page.'),
});

export const threadWithComments = z.object({
  channel: channelRef,
  thread: threadDetail,
  comments: z.array(commentView),
  nextCursor: z.string().nullable().describe('Pass as cursor (with threadId) for more comments; null on the last page.'),
});

export const communityActionResult = z.object({
  ok: z.literal(true),
  action: z.enum(COMMUNITY_ACTIONS),
  channel: z.string(),
  member: z.boolean().describe('Whether the caller is a member of the channel after the action.'),
  status: z.enum(['joined', 'already_member', 'left', 'not_member', 'created']),
  thread: threadDetail.optional(),
  comment: commentView.optional(),
});
export type CommunityActionResult = z.infer<typeof communityActionResult>;
