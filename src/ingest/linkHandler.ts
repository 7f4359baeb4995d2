// The family's side of family-share, on the app host behind the session cookie: entering the link
// code an agency gave them binds that agency's client to one of their own loved ones. Scripts get
// JSON; a browser's plain form post gets a redirect to a confirmation page, or the refusal as a page.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Logger } from '../log.js';
import { institutionName } from '../partner/records.js';
import type { Limiter } from '../limits/limiter.js';
import { WorkspaceStore } from '../family/records.js';
import { canManage } from '../family/circle.js';
import { redirect } from '../http/page.js';
import { ApiProblem, json } from '../http/reply.js';
import { linkedPage, refusedPage, wantsPage } from './linkPages.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { describeIssues } from './envelope.js';
import type { FamilyShares } from './familyShare.js';
import { INGEST_ROUTES } from './routes.js';
import { countRateLimited } from '../metrics/index.js';
import type { Timelines } from '../store/timeline/port.js';

/** The signed-in caller, from the forwarded headers (the session's `sessionCaller`). */
export type CallerOf = (headers: Record<string, string>) => Promise<{ uid: string; email: string; tenant: string } | null>;

const linkBody = z.object({
  code: z.string().trim().min(1).max(40),
  lovedOneId: z.string().trim().min(1).max(64),
});

export interface LinkDeps {
  db: Db;
  credentials: Credentials;
  timelines: Timelines;
  inboxDomain: string;
  shares: FamilyShares;
  limiter: Limiter;
  /** Link codes a person may enter per hour (RATE_FAMILY_SHARE_LINK_PER_HOUR), refilled evenly. */
  linksPerHour: number;
  callerOf: CallerOf;
}

/** POST {code, lovedOneId}: the whole binding, so it can be tested without HTTP. */
export async function linkFamilyShare(deps: LinkDeps, req: HttpRequestEnvelope, log: Logger): Promise<HttpReplyEnvelope> {
  const caller = await deps.callerOf(req.headers);
  if (!caller) throw new ApiProblem(401, 'UNAUTHORIZED', 'Sign in first', 'Sign in to your family workspace, then enter the code again.');
  if (caller.tenant !== 'family') throw new ApiProblem(403, 'FORBIDDEN', 'Only family accounts can link a loved one', 'Sign in with your family account.');
  const parsed = linkBody.safeParse(req.body);
  if (!parsed.success)
    throw new ApiProblem(
      400,
      'VALIDATION_FAILED',
      describeIssues(parsed.error),
      'Send {"code": "<the code from the agency>", "lovedOneId": "<your loved one>"}.',
    );
  const taken = await deps.limiter.take(`family-share-link:uid:${caller.uid}`, {
    capacity: deps.linksPerHour,
    refillMs: Math.ceil(3_600_000 / deps.linksPerHour),
  });
  if (!taken.allowed) countRateLimited('family-share-link');
  if (!taken.allowed)
    throw new ApiProblem(429, 'RATE_LIMITED', 'Too many link attempts', `Wait ${taken.retryAfterSec} s and try again.`, {
      'retry-after': String(taken.retryAfterSec),
    });

  const workspaces = new WorkspaceStore(deps.db, deps.credentials, deps.inboxDomain, deps.timelines);
  const membership = await workspaces.workspaceOf(caller.uid);
  const lovedOne = membership ? await workspaces.lovedOneIn(membership.workspace._id, parsed.data.lovedOneId) : null;
  if (!membership || !lovedOne)
    throw new ApiProblem(403, 'FORBIDDEN', 'That loved one is not in your workspace', 'Choose one of the loved ones in your own family workspace.');
  if (!canManage(membership.member))
    throw new ApiProblem(
      403,
      'FORBIDDEN',
      'Only the primary caregiver can link an agency',
      'Ask the primary caregiver of your family workspace to enter the code.',
    );

  const linked = await deps.shares.link(parsed.data.code, { lovedOneId: lovedOne._id, workspaceId: membership.workspace._id, uid: caller.uid });
  if (!linked)
    throw new ApiProblem(
      400,
      'VALIDATION_FAILED',
      'code: that link code is not valid',
      'Check the code; each works once and for 14 days. Ask the agency for a new one if it expired.',
    );
  const name = await institutionName(deps.db, linked.institutionId);
  log.info({ uid: caller.uid, lovedOneId: lovedOne._id, institutionId: linked.institutionId, linkId: linked.link.linkId }, 'family-share linked');
  return json(200, {
    linked: true,
    linkId: linked.link.linkId,
    lovedOneId: lovedOne._id,
    lovedOneName: lovedOne.displayName,
    institutionId: linked.institutionId,
    institutionName: name ?? linked.institutionId,
    linkedAt: linked.link.linkedAt,
  });
}

/** The form post of a browser without script: a 303 to the confirmation page, or the refusal as a page. */
async function linkFromForm(deps: LinkDeps, req: HttpRequestEnvelope, log: Logger): Promise<HttpReplyEnvelope> {
  let reply: HttpReplyEnvelope;
  try {
    reply = await linkFamilyShare(deps, req, log);
  } catch (err) {
    if (!(err instanceof ApiProblem)) throw err;
    if (err.status === 401) return redirect(`/signin?next=${encodeURIComponent('/#family-share-form')}`);
    const unparsed = err.code === 'VALIDATION_FAILED' && !linkBody.safeParse(req.body).success;
    return unparsed
      ? refusedPage(400, 'Enter the link code the agency gave you, and choose the loved one it is for.', 'The code looks like 7KQ2-MX4D-9RTB.')
      : refusedPage(err.status, err.message, err.hint, err.headers);
  }
  const linked = reply.body as { linkId: string };
  return redirect(`/family-share/linked?link=${encodeURIComponent(linked.linkId)}`);
}

/** GET /family-share/linked?link=…: what a link made, for the family that made it. */
async function showLinked(deps: LinkDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const linkId = typeof req.query.link === 'string' ? req.query.link.slice(0, 64) : '';
  const caller = await deps.callerOf(req.headers);
  if (!caller) return redirect(`/signin?next=${encodeURIComponent(`/family-share/linked?link=${encodeURIComponent(linkId)}`)}`);
  const workspaces = new WorkspaceStore(deps.db, deps.credentials, deps.inboxDomain, deps.timelines);
  const membership = caller.tenant === 'family' ? await workspaces.workspaceOf(caller.uid) : null;
  const found = membership && linkId ? await deps.shares.linkIn(membership.workspace._id, linkId) : null;
  const lovedOne = found ? await workspaces.lovedOneIn(membership!.workspace._id, found.link.lovedOneId) : null;
  if (!found || !lovedOne)
    return refusedPage(404, 'There is no such agency link in your workspace.', 'Links show on the workspace page; enter a new code there if you have one.');
  return linkedPage((await institutionName(deps.db, found.institutionId)) ?? found.institutionId, lovedOne.displayName);
}

export function familyShareLinkHandlers(deps: LinkDeps): RouteHandlers {
  return handlers(INGEST_ROUTES)
    .on('familyShareLink', 'POST', (req, _params, log) => (wantsPage(req) ? linkFromForm(deps, req, log) : linkFamilyShare(deps, req, log)))
    .on('familyShareLinked', 'GET', (req) => showLinked(deps, req))
    .done();
}
