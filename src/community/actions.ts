// The four community actions, shared by the API (ID token) and the site's forms (session cookie),
// so both follow the same membership rules and limits.
import type { Channel } from '../directory/data.js';
import type { BucketPolicy, Limiter } from '../limits/limiter.js';
import { ApiProblem } from '../http/reply.js';
import { countRateLimited } from '../metrics/index.js';
import type { CommunityAction, CommunityActionResult } from './schema.js';
import type { CommunityStore, ThreadRecord } from './store.js';

export async function threadIn(store: CommunityStore, id: string, channel: Channel): Promise<ThreadRecord> {
  const thread = await store.getThread(id);
  if (!thread || thread.channel !== channel.slug)
    throw new ApiProblem(
      404,
      'NOT_FOUND',
      `No thread "${id}" in channel "${channel.slug}"`,
      `Thread ids come from GET /api/community?channel=${channel.slug}.`,
    );
  return thread;
}

/** One write per call against the per-person write limit, whichever way the person writes. */
export async function takeCommunityWrite(limiter: Limiter, uid: string, policy: BucketPolicy, perMinute: number): Promise<void> {
  const taken = await limiter.take(`community-write:uid:${uid}`, policy);
  if (taken.allowed) return;
  countRateLimited('community-write');
  throw new ApiProblem(429, 'RATE_LIMITED', 'Too many community writes', `At most ${perMinute} a minute; wait ${taken.retryAfterSec} s.`, {
    'retry-after': String(taken.retryAfterSec),
  });
}

export async function performCommunityAction(
  store: CommunityStore,
  channel: Channel,
  uid: string,
  name: string,
  action: CommunityAction,
): Promise<CommunityActionResult> {
  switch (action.action) {
    case 'join':
      return { ok: true, action: 'join', channel: channel.slug, member: true, status: await store.join(channel.slug, uid, name) };
    case 'leave':
      return { ok: true, action: 'leave', channel: channel.slug, member: false, status: await store.leave(channel.slug, uid) };
    case 'thread': {
      await requireMember(store, channel, uid);
      const thread = await store.createThread({ channel: channel.slug, title: action.title, body: action.body, authorUid: uid, authorName: name });
      return { ok: true, action: 'thread', channel: channel.slug, member: true, status: 'created', thread };
    }
    case 'comment': {
      await requireMember(store, channel, uid);
      const thread = await threadIn(store, action.threadId, channel);
      const comment = await store.addComment(thread, { body: action.body, authorUid: uid, authorName: name });
      return { ok: true, action: 'comment', channel: channel.slug, member: true, status: 'created', comment };
    }
  }
}

async function requireMember(store: CommunityStore, channel: Channel, uid: string): Promise<void> {
  if (!(await store.isMember(channel.slug, uid)))
    throw new ApiProblem(403, 'FORBIDDEN', `Only members of "${channel.slug}" can post there`, `Join first: {"channel": "${channel.slug}", "action": "join"}.`);
}
