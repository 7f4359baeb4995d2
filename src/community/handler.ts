// The community slice's worker handler: GET lists a channel's threads (or one thread with its
// comments); POST, with an identity-provider ID token, joins, leaves, starts a thread or comments.
import type { Db } from 'mongodb';
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import { identityProvider, type Config } from '../config.js';
import type { Channel } from '../directory/data.js';
import { loadDirectoryData } from '../directory/data.js';
import { createIdTokenVerifier, IdTokenError, type IdTokenVerifier, type VerifiedIdentity } from '../identity/verify.js';
import { describeIssues, parseOr400 } from '../http/problems.js';
import { perMinute, type Limiter } from '../limits/limiter.js';
import { ApiProblem, json } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { COMMUNITY_ROUTES } from './routes.js';
import { communityAction, communityActionBase, communityQuery, displayName, type CommunityActionResult } from './schema.js';
import { DISPLAY_NAME_MAX, looksLikeEmail, normalName, pseudonymOf } from './names.js';
import { CommunityStore, CursorError } from './store.js';
import { DIRECTORY_TOOLS } from '../directory/tools.js';
import { performCommunityAction, takeCommunityWrite, threadIn } from './actions.js';

export interface CommunityDeps {
  config: Config;
  store: CommunityStore;
  limiter: Limiter;
  verify: IdTokenVerifier;
  channels: readonly Channel[];
}

const POST_HINT =
  'Send JSON {"channel": "<slug>", "action": "join" | "leave" | "thread" | "comment"}; "thread" also needs "title" and "body", "comment" needs "threadId" and "body"; "displayName" (join, thread, comment) chooses once the name others see.';
const BEARER = { 'www-authenticate': 'Bearer realm="carecircle", error="invalid_token"' };

/** The identity provider's name as others would see it: NFKC, one line, cut to length (never
 *  mid-character); undefined when there is none. The caller still checks it is no email address. */
function providerName(identity: VerifiedIdentity): string | undefined {
  const name = identity.name === undefined ? '' : normalName(identity.name).replace(/\s+/g, ' ').trim();
  return name ? name.slice(0, DISPLAY_NAME_MAX).replace(/[\ud800-\udbff]$/, '') : undefined;
}

export function communityRoutes(deps: CommunityDeps): RouteHandlers {
  const { config, store, channels } = deps;
  const writePolicy = perMinute(config.rateCommunityWritesPerMin);
  const bySlug = new Map(channels.map((c) => [c.slug, c]));
  const channelRef = (c: Channel) => ({ slug: c.slug, name: c.name, url: `${config.siteUrl}/channels/${c.slug}` });

  function channelOr404(slug: string): Channel {
    const channel = bySlug.get(slug.toLowerCase());
    if (!channel)
      throw new ApiProblem(
        404,
        'NOT_FOUND',
        `Unknown channel "${slug}"`,
        `Channel slugs are listed at ${config.siteUrl}/channels (or the MCP tool ${DIRECTORY_TOOLS.search.name} with category "channel").`,
      );
    return channel;
  }

  const threadOr404 = (id: string, channel: Channel) => threadIn(store, id, channel);

  const cursorProblem = () =>
    new ApiProblem(
      400,
      'VALIDATION_FAILED',
      'cursor: not a cursor this API returned',
      'Pass nextCursor from the previous page as it is, or omit cursor for the first page.',
    );

  async function authenticate(req: HttpRequestEnvelope): Promise<VerifiedIdentity> {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1])
      throw new ApiProblem(
        401,
        'UNAUTHORIZED',
        header ? 'The Authorization header must be "Bearer <ID token>"' : 'Sign-in required: no Authorization header',
        'Send Authorization: Bearer <ID token> from the identity provider.',
        { 'www-authenticate': 'Bearer realm="carecircle"' },
      );
    try {
      return await deps.verify(match[1]);
    } catch (err) {
      if (err instanceof IdTokenError) throw new ApiProblem(401, 'UNAUTHORIZED', err.message, 'Sign in again and send a fresh ID token.', BEARER);
      throw err;
    }
  }

  /**
   * Who a write is shown as: the name chosen once (on the site's forms, or with `displayName` on a write),
   * else the identity provider's name under the same rule as a chosen one, else a pseudonym. A
   * provider name that is an email address is never published: the person is asked to choose a
   * name, once, as the site's forms ask.
   */
  async function authorName(identity: VerifiedIdentity, channel: Channel, chosen: string | undefined): Promise<string> {
    const stored = await store.chosenName(identity.uid);
    if (stored !== null) return stored;
    if (chosen !== undefined) return store.chooseName(identity.uid, chosen);
    const fromProvider = providerName(identity);
    if (fromProvider === undefined) return pseudonymOf(identity.uid);
    if (looksLikeEmail(identity.name ?? ''))
      throw new ApiProblem(
        400,
        'VALIDATION_FAILED',
        'displayName is required: the name your sign-in gives is an email address, and an email address is never shown to others',
        `Send "displayName" once (1-${DISPLAY_NAME_MAX} characters, one line, not an email address, such as "Ana R.") with this request, or choose it on ${config.siteUrl}/channels/${channel.slug}; it is kept for your later writes.`,
      );
    const shown = displayName.safeParse(fromProvider);
    return shown.success ? shown.data : pseudonymOf(identity.uid);
  }

  return handlers(COMMUNITY_ROUTES)
    .on('apiCommunity', 'GET', async (req) => {
      const q = parseOr400(communityQuery, req.query, 'Pass ?channel=<slug>, and optionally threadId, limit (1-50) and cursor.');
      const channel = channelOr404(q.channel);
      try {
        if (q.threadId) {
          const thread = await threadOr404(q.threadId, channel);
          const [detail, comments] = await Promise.all([
            store.threadDetail(thread),
            store.listComments(thread._id, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) }),
          ]);
          return json(
            200,
            { channel: channelRef(channel), thread: detail, comments: comments.items, nextCursor: comments.nextCursor },
            { 'cache-control': 'no-cache' },
          );
        }
        const [page, memberCount] = await Promise.all([
          store.listThreads(channel.slug, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) }),
          store.memberCount(channel.slug),
        ]);
        return json(200, { channel: channelRef(channel), memberCount, threads: page.items, nextCursor: page.nextCursor }, { 'cache-control': 'no-cache' });
      } catch (err) {
        if (err instanceof CursorError) throw cursorProblem();
        throw err;
      }
    })
    .on('apiCommunity', 'POST', async (req) => {
      const identity = await authenticate(req);
      await takeCommunityWrite(deps.limiter, identity.uid, writePolicy, config.rateCommunityWritesPerMin);
      const body = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new ApiProblem(400, 'BAD_REQUEST', 'the body must be a JSON object', POST_HINT);
      const base = parseOr400(communityActionBase, body, POST_HINT);
      const channel = channelOr404(base.channel);
      const parsed = communityAction.safeParse(body);
      if (!parsed.success) throw new ApiProblem(400, 'VALIDATION_FAILED', describeIssues(parsed.error), POST_HINT);
      const name = parsed.data.action === 'leave' ? '' : await authorName(identity, channel, parsed.data.displayName);
      const result: CommunityActionResult = await performCommunityAction(store, channel, identity.uid, name, parsed.data);
      return json(200, result, { 'cache-control': 'no-store' });
    })
    .done();
}

export function communityHandlers(
  config: Config,
  db: Db,
  limiter: Limiter,
  verify: IdTokenVerifier = createIdTokenVerifier(identityProvider(config)),
): RouteHandlers {
  return communityRoutes({ config, store: new CommunityStore(db), limiter, verify, channels: loadDirectoryData().channels });
}
