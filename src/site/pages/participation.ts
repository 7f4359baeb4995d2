// The "Take part" part of a channel or thread page: what a visitor can do there, as plain forms
// that post to the site, for the person signed in (or a sign-in link for a visitor who is not).
import type { Config } from '../../config.js';
import type { Channel } from '../../directory/data.js';
import { COMMENT_BODY_MAX, DISPLAY_NAME_MAX, THREAD_BODY_MAX, TITLE_MAX } from '../../community/schema.js';
import type { Block, FormField, FormSpec, Inline } from '../doc.js';

/** Who is reading: nobody signed in, or a person with their chosen name (if any) and membership. */
export type CommunityViewer =
  | { signedIn: false; signInUrl: string }
  /** `timeZone`: the person's own, from the family app's settings; null when they have none. */
  | { signedIn: true; chosenName: string | null; member: boolean; timeZone: string | null };

/** A form that was refused: what went wrong, on which field, and what the person had typed. */
export interface FormProblem {
  action: string;
  message: string;
  field?: string;
  values: Record<string, string>;
}

export const actionsPath = (channel: Channel) => `/channels/${channel.slug}/actions`;

function apiWay(config: Config, channel: Channel, body: string): Inline[] {
  return [
    'Agents and apps: ',
    { code: `POST ${config.siteUrl}/api/community` },
    ' with ',
    { code: 'Authorization: Bearer <ID token>' },
    ' and ',
    { code: body.replace('<slug>', channel.slug) },
    '.',
  ];
}

function form(
  config: Config,
  channel: Channel,
  spec: { label: string; action: string; submit: string; fields: FormField[]; api: string; secondary?: boolean },
  problem: FormProblem | undefined,
): FormSpec {
  const mine = problem?.action === spec.action ? problem : undefined;
  const fields = spec.fields.map((f) => ({
    ...f,
    ...(mine && f.type !== 'hidden' && mine.values[f.name] !== undefined ? { value: mine.values[f.name] } : {}),
    ...(mine?.field === f.name ? { error: mine.message } : {}),
  }));
  return {
    action: actionsPath(channel),
    method: 'post',
    label: spec.label,
    fields: [...fields, { name: 'action', label: 'Action', type: 'hidden', value: spec.action }],
    submit: spec.submit,
    ...(spec.secondary ? { secondary: true } : {}),
    markdown: apiWay(config, channel, spec.api),
  };
}

const nameField = (chosen: string | null): FormField[] =>
  chosen === null
    ? [
        {
          name: 'displayName',
          label: 'Name shown to others',
          type: 'text',
          required: true,
          maxLength: DISPLAY_NAME_MAX,
          autocomplete: 'nickname',
          hint: 'You choose it once. Your sign-in name and email are never shown. For example "Ana R." or "Daughter in Ohio".',
        },
      ]
    : [];

export function takePartBlocks(
  config: Config,
  channel: Channel,
  viewer: CommunityViewer | undefined,
  opts: { threadId?: string; problem?: FormProblem } = {},
): Block[] {
  const blocks: Block[] = [{ kind: 'heading', level: 2, text: 'Take part', id: 'take-part' }];
  const { problem, threadId } = opts;
  // A problem with no field of its own (not a member any more, too many posts) is said above the forms.
  if (problem && !problem.field) blocks.push({ kind: 'notice', tone: 'error', content: [problem.message] });
  if (!viewer || !viewer.signedIn) {
    blocks.push({
      kind: 'para',
      content: [
        'Reading is open to everyone. ',
        ...(viewer
          ? [{ text: 'Sign in', href: viewer.signInUrl }, ' to join this channel, start threads and reply.']
          : ['Sign in on the site to join this channel, start threads and reply.']),
        ' You choose the name others see; your sign-in name and email are never shown.',
      ],
    });
    // A post refused because the sign-in ended: its text is shown to copy, so nothing is lost.
    const typed = [problem?.values.title, problem?.values.body].filter((v): v is string => !!v?.trim());
    if (typed.length)
      blocks.push(
        { kind: 'para', content: ['What you wrote, to copy before you sign in:'] },
        { kind: 'card', blocks: typed.map((text) => ({ kind: 'text', text })) },
      );
    // How agents do it, in the markdown only: a person's page shows no raw requests.
    blocks.push({
      kind: 'agents',
      content: apiWay(config, channel, '{"channel": "<slug>", "action": "join"}, then "thread" (title, body) or "comment" (threadId, body)'),
    });
    return blocks;
  }
  if (!viewer.member) {
    blocks.push({ kind: 'para', content: [threadId ? 'Join the channel to reply.' : 'Join the channel to start threads and reply.'] });
    blocks.push({
      kind: 'form',
      form: form(
        config,
        channel,
        {
          label: `Join ${channel.name}`,
          action: 'join',
          submit: 'Join this channel',
          fields: [...nameField(viewer.chosenName), ...(threadId ? [{ name: 'threadId', label: 'Thread', type: 'hidden' as const, value: threadId }] : [])],
          api: '{"channel": "<slug>", "action": "join"}',
        },
        problem,
      ),
    });
    return blocks;
  }
  if (viewer.chosenName) blocks.push({ kind: 'para', content: ["You're a member. Others see you as ", { strong: viewer.chosenName }, '.'] });
  else blocks.push({ kind: 'para', content: ["You're a member. Choose the name others see when you first post."] });
  if (threadId)
    blocks.push({
      kind: 'form',
      form: form(
        config,
        channel,
        {
          label: 'Reply to this thread',
          action: 'comment',
          submit: 'Post reply',
          fields: [
            ...nameField(viewer.chosenName),
            { name: 'body', label: 'Your reply', type: 'textarea', required: true, maxLength: COMMENT_BODY_MAX },
            { name: 'threadId', label: 'Thread', type: 'hidden', value: threadId },
          ],
          api: `{"channel": "<slug>", "action": "comment", "threadId": "${threadId}", "body": "…"}`,
        },
        problem,
      ),
    });
  else
    blocks.push({
      kind: 'form',
      form: form(
        config,
        channel,
        {
          label: 'Start a thread',
          action: 'thread',
          submit: 'Start thread',
          fields: [
            ...nameField(viewer.chosenName),
            { name: 'title', label: 'Title', type: 'text', required: true, maxLength: TITLE_MAX },
            { name: 'body', label: 'What would you like to ask or share?', type: 'textarea', required: true, maxLength: THREAD_BODY_MAX },
          ],
          api: '{"channel": "<slug>", "action": "thread", "title": "…", "body": "…"}',
        },
        problem,
      ),
    });
  blocks.push({
    kind: 'form',
    form: form(
      config,
      channel,
      {
        label: `Leave ${channel.name}`,
        action: 'leave',
        submit: 'Leave this channel',
        fields: [],
        api: '{"channel": "<slug>", "action": "leave"}',
        secondary: true,
      },
      problem,
    ),
  });
  return blocks;
}
