// The community pages: the channel list, a channel's threads and a thread with its comments.
import type { Config } from '../../config.js';
import type { Channel } from '../../directory/data.js';
import { CursorError } from '../../community/store.js';
import { sentence } from '../../http/prose.js';
import type { Block, Page } from '../doc.js';
import { languageName, plural, withQuery, type PagesDeps } from './common.js';
import { takePartBlocks, type CommunityViewer, type FormProblem } from './participation.js';

/** The reader of a channel or thread page, and a form of theirs that was refused (shown again). */
export interface PageViewer {
  viewer?: CommunityViewer;
  problem?: FormProblem;
  status?: number;
}

const THREADS_PER_PAGE = 20;
const COMMENTS_PER_PAGE = 50;

/** "November 23, 2026": a date in words, on the reader's calendar when their zone is known, else on UTC's. */
function daysIn(viewer: CommunityViewer | undefined): (iso: string) => string {
  const zone = (viewer?.signedIn && viewer.timeZone) || 'UTC';
  const words = new Intl.DateTimeFormat('en-US', { timeZone: zone, month: 'long', day: 'numeric', year: 'numeric' });
  return (iso) => words.format(new Date(iso));
}

export function channelsPage(deps: PagesDeps): Page {
  return {
    status: 200,
    title: 'Community channels',
    description: 'Peer channels where family caregivers share what works, each about one situation.',
    path: '/channels',
    blocks: [
      {
        kind: 'list',
        items: deps.directory.data.channels.map((c) => [
          { text: c.name, href: `/channels/${c.slug}` },
          `${c.language === 'es' ? ' (en español)' : ''}: ${c.summary}`,
        ]),
      },
      ...participationHelp(deps.config),
    ],
  };
}

function participationHelp(config: Config, channel?: Channel): Block[] {
  const slug = channel?.slug ?? '<slug>';
  const people: Block = { kind: 'para', content: ['Reading is open to everyone. To post, open a channel and sign in; you choose the name others see.'] };
  return [
    people,
    {
      kind: 'agents',
      content: [
        'Agents and apps post through the site API: ',
        { code: `POST ${config.siteUrl}/api/community` },
        ' with ',
        { code: 'Authorization: Bearer <ID token>' },
        ' and ',
        { code: `{"channel": "${slug}", "action": "join"}` },
        ', then ',
        { code: '"thread"' },
        ' (title, body) or ',
        { code: '"comment"' },
        ' (threadId, body).',
      ],
    },
  ];
}

export async function channelPage(deps: PagesDeps, slug: string, query: URLSearchParams, who: PageViewer = {}): Promise<Page | null> {
  const channel = deps.directory.data.channels.find((c) => c.slug === slug);
  if (!channel) return null;
  const cursor = query.get('cursor') ?? undefined;
  const path = withQuery(`/channels/${channel.slug}`, { cursor });
  const base = { title: channel.name, description: channel.summary, path };
  let page;
  try {
    page = await deps.community.listThreads(channel.slug, { limit: THREADS_PER_PAGE, ...(cursor ? { cursor } : {}) });
  } catch (err) {
    if (!(err instanceof CursorError)) throw err;
    return {
      ...base,
      status: 400,
      errors: [{ field: 'cursor', message: 'cursor: not a cursor this site returned' }],
      blocks: [
        {
          kind: 'notice',
          tone: 'error',
          content: ['This page link is not valid. ', { text: 'Start from the newest threads', href: `/channels/${channel.slug}` }, '.'],
        },
      ],
    };
  }
  const memberCount = await deps.community.memberCount(channel.slug);
  const day = daysIn(who.viewer);
  const blocks: Block[] = [
    {
      kind: 'facts',
      items: [
        { term: 'Topics', value: [channel.topics.join(', ')] },
        { term: 'Language', value: [languageName(channel.language)] },
        { term: 'Members', value: [String(memberCount)] },
      ],
    },
    { kind: 'heading', level: 2, text: cursor ? 'Older threads' : 'Threads' },
  ];
  if (!page.items.length) blocks.push({ kind: 'para', content: [cursor ? 'No older threads.' : 'No threads yet. Be the first to start one.'] });
  else
    blocks.push({
      kind: 'list',
      items: page.items.map((t) => [
        { text: t.title, href: `/channels/${channel.slug}/threads/${t.id}` },
        `: ${t.excerpt} (by ${t.authorName}, started ${day(t.createdAt)}; ${plural(t.commentCount, 'comment')}; last activity ${day(t.lastActivityAt)})`,
      ]),
    });
  if (page.nextCursor)
    blocks.push({ kind: 'para', content: [{ text: 'Older threads', href: withQuery(`/channels/${channel.slug}`, { cursor: page.nextCursor }) }] });
  blocks.push(...takePartBlocks(deps.config, channel, who.viewer, who.problem ? { problem: who.problem } : {}), {
    kind: 'para',
    content: [{ text: 'All channels', href: '/channels' }],
  });
  return { ...base, status: who.status ?? 200, blocks };
}

export async function threadPage(deps: PagesDeps, slug: string, threadId: string, query: URLSearchParams, who: PageViewer = {}): Promise<Page | null> {
  const channel = deps.directory.data.channels.find((c) => c.slug === slug);
  if (!channel) return null;
  const thread = await deps.community.getThread(threadId);
  if (!thread || thread.channel !== channel.slug) return null;
  const cursor = query.get('cursor') ?? undefined;
  const path = withQuery(`/channels/${channel.slug}/threads/${thread._id}`, { cursor });
  let comments;
  try {
    comments = await deps.community.listComments(thread._id, { limit: COMMENTS_PER_PAGE, ...(cursor ? { cursor } : {}) });
  } catch (err) {
    if (!(err instanceof CursorError)) throw err;
    return {
      status: 400,
      title: thread.title,
      description: 'This page link is not valid.',
      path,
      errors: [{ field: 'cursor', message: 'cursor: not a cursor this site returned' }],
      blocks: [],
    };
  }
  const detail = await deps.community.threadDetail(thread);
  const day = daysIn(who.viewer);
  const blocks: Block[] = [
    {
      kind: 'para',
      content: [`Started by ${detail.authorName} on ${day(detail.createdAt)} in `, { text: channel.name, href: `/channels/${channel.slug}` }, '.'],
    },
    { kind: 'text', text: thread.body },
    { kind: 'heading', level: 2, text: `Comments (${detail.commentCount})`, id: 'comments' },
  ];
  if (!comments.items.length) blocks.push({ kind: 'para', content: [cursor ? 'No more comments.' : 'No comments yet.'] });
  for (const c of comments.items)
    blocks.push({
      kind: 'card',
      blocks: [
        { kind: 'para', content: [{ strong: c.authorName }, ` on ${day(c.createdAt)}`] },
        { kind: 'text', text: c.body },
      ],
    });
  if (comments.nextCursor)
    blocks.push({
      kind: 'para',
      content: [{ text: 'More comments', href: withQuery(`/channels/${channel.slug}/threads/${thread._id}`, { cursor: comments.nextCursor }) }],
    });
  blocks.push(...takePartBlocks(deps.config, channel, who.viewer, { threadId: thread._id, ...(who.problem ? { problem: who.problem } : {}) }));
  return {
    status: who.status ?? 200,
    title: thread.title,
    description: sentence(`A thread in ${channel.name}, started by ${detail.authorName}`),
    path,
    blocks,
  };
}
