// The site's community forms: join, leave, start a thread and reply as the person signed in
// (session cookie), under the same rules and write limit as the community API. A refused form
// comes back as the same page with what was typed and the reason beside the field.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import { sessionCaller, type SessionCaller } from '../auth/sessions.js';
import { performCommunityAction, takeCommunityWrite } from '../community/actions.js';
import { COMMENT_BODY_MAX, communityAction, DISPLAY_NAME_MAX, displayName as displayNameSchema, THREAD_BODY_MAX, TITLE_MAX } from '../community/schema.js';
import type { Channel } from '../directory/data.js';
import { userTimeZone } from '../family/changes.js';
import { ApiProblem } from '../http/reply.js';
import { perMinute, type Limiter } from '../limits/limiter.js';
import type { Page } from './doc.js';
import type { PagesDeps } from './pages/common.js';
import { channelPage, threadPage, type PageViewer } from './pages/channels.js';
import type { CommunityViewer } from './pages/participation.js';

/** Plain words for people, by field; the API keeps its own precise messages. */
const n = (x: number) => x.toLocaleString('en-US');
const FRIENDLY: Record<string, string> = {
  title: `Please give your thread a title (up to ${n(TITLE_MAX)} characters).`,
  body: `Please write something before posting (threads up to ${n(THREAD_BODY_MAX)} characters, replies up to ${n(COMMENT_BODY_MAX)}).`,
  displayName: `Please choose the name others will see (up to ${n(DISPLAY_NAME_MAX)} characters, on one line).`,
};

export interface CommunityForms {
  viewerOf(req: HttpRequestEnvelope, channel: string, returnPath: string): Promise<CommunityViewer>;
  submit(req: HttpRequestEnvelope, slug: string): Promise<{ redirectTo: string } | { page: Page; headers: Record<string, string> } | null>;
}

export function communityForms(deps: PagesDeps, db: Db, credentials: Credentials, limiter: Limiter): CommunityForms {
  const { config, community: store } = deps;
  const writePolicy = perMinute(config.rateCommunityWritesPerMin);
  const signInUrl = (returnPath: string) => `${config.appUrl}/signin?next=${encodeURIComponent(`${config.siteUrl}${returnPath}`)}`;

  async function viewerFor(caller: SessionCaller | null, channel: string, returnPath: string): Promise<CommunityViewer> {
    if (!caller) return { signedIn: false, signInUrl: signInUrl(returnPath) };
    const [chosenName, member, timeZone] = await Promise.all([store.chosenName(caller.uid), store.isMember(channel, caller.uid), userTimeZone(db, caller.uid)]);
    return { signedIn: true, chosenName, member, timeZone };
  }

  async function pageAgain(channel: Channel, threadId: string | undefined, who: PageViewer): Promise<Page | null> {
    if (threadId) {
      const page = await threadPage(deps, channel.slug, threadId, new URLSearchParams(), who);
      if (page) return page;
    }
    return channelPage(deps, channel.slug, new URLSearchParams(), who);
  }

  return {
    viewerOf: async (req, channel, returnPath) => viewerFor(await sessionCaller(db, credentials, req.headers), channel, returnPath),

    async submit(req, slug) {
      const channel = deps.directory.data.channels.find((c) => c.slug === slug);
      if (!channel) return null;
      // A form from another site's page was refused at the gateway (the route's sameOrigin).
      const form = (typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) ? req.body : {}) as Record<string, unknown>;
      const values = Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => typeof e[1] === 'string'));
      const action = values.action ?? '';
      const threadId = values.threadId || undefined;
      const returnPath = threadId ? `/channels/${channel.slug}/threads/${encodeURIComponent(threadId)}#take-part` : `/channels/${channel.slug}#take-part`;
      const caller = await sessionCaller(db, credentials, req.headers);
      const again = async (status: number, message: string, field?: string, headers: Record<string, string> = {}) => {
        const viewer = await viewerFor(caller, channel.slug, returnPath);
        const page = await pageAgain(channel, threadId, { viewer, status, problem: { action, message, values, ...(field ? { field } : {}) } });
        return page ? { page, headers } : null;
      };
      if (!caller) return again(401, 'Your sign-in has ended. Sign in again to post; what you wrote is below.');

      try {
        await takeCommunityWrite(limiter, caller.uid, writePolicy, config.rateCommunityWritesPerMin);
        let name = await store.chosenName(caller.uid);
        if (name === null && action !== 'leave') {
          const chosen = displayNameSchema.safeParse(values.displayName ?? '');
          if (!chosen.success) {
            const message = chosen.error.issues[0]?.message ?? '';
            return again(
              400,
              message.includes('email') ? 'Please choose a name rather than an email address, such as "Ana R." or "Daughter in Ohio".' : FRIENDLY.displayName!,
              'displayName',
            );
          }
          name = await store.chooseName(caller.uid, chosen.data);
        }
        const input = {
          channel: channel.slug,
          action,
          ...(action === 'thread' ? { title: values.title ?? '', body: values.body ?? '' } : {}),
          ...(action === 'comment' ? { threadId: threadId ?? '', body: values.body ?? '' } : {}),
        };
        const parsed = communityAction.safeParse(input);
        if (!parsed.success) {
          const field = String(parsed.error.issues[0]?.path[0] ?? '');
          return again(400, FRIENDLY[field] ?? 'That form could not be read. Please reload the page and try again.', FRIENDLY[field] ? field : undefined);
        }
        const result = await performCommunityAction(store, channel, caller.uid, name ?? '', parsed.data);
        const to =
          result.action === 'thread' && result.thread
            ? `/channels/${channel.slug}/threads/${encodeURIComponent(result.thread.id)}`
            : result.action === 'comment'
              ? `/channels/${channel.slug}/threads/${encodeURIComponent(threadId ?? '')}#comments`
              : result.action === 'join' && threadId
                ? returnPath
                : `/channels/${channel.slug}${result.action === 'join' ? '#take-part' : ''}`;
        return { redirectTo: `${config.siteUrl}${to}` };
      } catch (err) {
        if (!(err instanceof ApiProblem)) throw err;
        if (err.status === 429)
          return again(
            429,
            `You have posted a lot in the last minute. Please wait ${err.headers['retry-after'] ?? 'a'} seconds and send again; what you wrote is below.`,
            undefined,
            err.headers,
          );
        if (err.status === 403) return again(403, 'Join the channel first; then you can post. What you wrote is below.');
        if (err.status === 404) return again(404, 'That thread is no longer here.');
        throw err;
      }
    },
  };
}
