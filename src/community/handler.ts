// The community slice's worker handler: GET lists a channel's threads (or one thread with its
// comments); POST, with an identity-provider ID token, joins, leaves, starts a thread or comments.
import { createHash } from 'node:crypto';
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
import { communityAction, communityActionBase, communityQuery, type CommunityActionResult } from './schema.js';
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

const DISPLAY_NAME_MAX = 80;
const POST_HINT =
  'Send JSON {"channel": "<slug>", "action": "join" | "leave" | "thread" | "comment"}; "thread" also needs "title" and "body", "comment" needs "threadId" and "body".';
const BEARER = { 'www-authenticate': 'Bearer realm="carecircle", error="invalid_token"' };

/** What other members see: the name from the identity provider, never the email address. */
export function displayNameOf(identity: VerifiedIdentity): string {
  const name = identity.name?.replace(/\s+/g, ' ').trim();
  if (name) return name.slice(0, DISPLAY_NAME_MAX);
  return `Member ${createHash('sha256').update(identity.uid).digest('hex').slice(0, 6)}`;
}

export function communityRoutes(deps: CommunityDeps): RouteHandlers {
  const { config, store, channels } = deps;
  const writePolicy = perMinute(config.rateCommunityWritesPerMin);
  const bySlug = new Map(channels.map((c) => [c.slug, c]));
  const channelRef = (c: Channel) => ({ slug: c.slug, name: c.name, url: `${config.siteUrl}/channels/${c.slug}` });

  function channelOr404(slug: string): Channel {
    const channel = bySlug.get(slug.toLowerCase());
    if (!channel) throw new ApiProblem(404, 'NOT_FOUND', `Unknown channel "${slug}"`, `Channel slugs are listed at ${config.siteUrl}/channels (or the MCP tool ${DIRECTORY_TOOLS.search.name} with category "channel").`);
    return channel;
  }

  const threadOr404 = (id: string, channel: Channel) => threadIn(store, id, channel);

  const cursorProblem = () => new ApiProblem(400, 'VALIDATION_FAILED', 'cursor: not a cursor this API returned', 'Pass nextCursor from the previous page as it is, or omit cursor for the first page.');

  async function authenticate(req: HttpRequestEnvelope): Promise<VerifiedIdentity> {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1])
      throw new ApiProblem(401, 'UNAUTHORIZED', header ? 'The Authorization header must be "Bearer <ID token>"' : 'Sign-in required: no Authorization header', 'Send Authorization: Bearer <ID token> from the identity provider.', { 'www-authenticate': 'Bearer realm="carecircle"' });
    try {
      return await deps.verify(match[1]);
    } catch (err) {
      if (err instanceof IdTokenError) throw new ApiProblem(401, 'UNAUTHORIZED', err.message, 'Sign in again and send a fresh ID token.', BEARER);
      throw err;
    }
  }

  return handlers(COMMUNITY_ROUTES)
    .on('apiCommunity', 'GET', async (req) => {
      const q = parseOr400(communityQuery, req.query, 'Pass ?channel=<slug>, and optionally threadId, limit (1-50) and cursor.');
      const channel = channelOr404(q.channel);
      try {
        if (q.threadId) {
          const thread = await threadOr404(q.threadId, channel);
          const [detail, comments] = await Promise.all([store.threadDetail(thread), store.listComments(thread._id, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) })]);
          return json(200, { channel: channelRef(channel), thread: detail, comments: comments.items, nextCursor: comments.nextCursor }, { 'cache-control': 'no-cache' });
        }
        const [page, memberCount] = await Promise.all([store.listThreads(channel.slug, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) }), store.memberCount(channel.slug)]);
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
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiProblem(400, 'BAD_REQUEST', 'the body must be a JSON object', POST_HINT);
      const base = parseOr400(communityActionBase, body, POST_HINT);
      const channel = channelOr404(base.channel);
      const parsed = communityAction.safeParse(body);
      if (!parsed.success) throw new ApiProblem(400, 'VALIDATION_FAILED', describeIssues(parsed.error), POST_HINT);
      // A name chosen on the site's forms is the name shown; without one, the identity provider's.
      const name = (await store.chosenName(identity.uid)) ?? displayNameOf(identity);
      const result: CommunityActionResult = await performCommunityAction(store, channel, identity.uid, name, parsed.data);
      return json(200, result, { 'cache-control': 'no-store' });
    })
    .done();
}

export function communityHandlers(config: Config, db: Db, limiter: Limiter, verify: IdTokenVerifier = createIdTokenVerifier(identityProvider(config))): RouteHandlers {
  return communityRoutes({ config, store: new CommunityStore(db), limiter, verify, channels: loadDirectoryData().channels });
}
