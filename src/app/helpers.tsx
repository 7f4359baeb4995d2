// What every app-host page needs: the signed-in caller, the same-origin check for changes, and
// the page shell with its header (used by the app slice and by slices that add app pages).
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { sessionCaller, type SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { identityProvider, type Config } from '../config.js';
import { WorkspaceStore } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { ApiProblem } from '../http/reply.js';
import { page } from './page.js';
import { clockIn, viewerZone, type Clock } from './time.js';
import { currentZoneName } from './zones.js';
import type { Timelines } from '../store/timeline/port.js';

export interface AppHelpers {
  currentCaller(req: HttpRequestEnvelope): Promise<SessionCaller | null>;
  requireCaller(req: HttpRequestEnvelope): Promise<SessionCaller>;
  /** A page in the app's layout, signed-in header included. */
  pageFor(status: number, title: string, body: Markup, caller?: SessionCaller | null, headers?: Record<string, string>): HttpReplyEnvelope;
  /** A page of one card under a heading (the title, unless `card.heading`): the shape of every
   *  refusal, confirmation and small form, so they all read alike. */
  cardPage(status: number, title: string, body: Markup, caller?: SessionCaller | null, card?: { heading?: Markup; id?: string }): HttpReplyEnvelope;
  /** The page a signed-out visitor sees, with a sign-in link that comes back to `next`; `lead`
   *  replaces the general welcome (the sandbox claim link names its workspace). */
  signedOutPage(next: string, lead?: Markup): HttpReplyEnvelope;
  /** The clock of the caller's zone: theirs from Settings, else the browser's cookie, else UTC. */
  clockFor(caller: SessionCaller, req: HttpRequestEnvelope, now?: Date): Promise<Clock>;
  signInUrl(next: string): string;
  store: WorkspaceStore;
  timelines: Timelines;
}

/** The page shell and session checks every app-host page uses, for this slice and the ones that add pages. */
export function appHelpers(config: Config, db: Db, credentials: Credentials, timelines: Timelines): AppHelpers {
  const store = new WorkspaceStore(db, credentials, config.inboxDomain, timelines);
  const idp = identityProvider(config);
  const idpOrigin = new URL(idp.loginUrl).origin;
  const signInUrl = (next: string) => `${idp.loginUrl}?return_to=${encodeURIComponent(`${config.appUrl}/auth/callback?next=${encodeURIComponent(next)}`)}`;
  const currentCaller = (req: HttpRequestEnvelope) => sessionCaller(db, credentials, req.headers);
  const pageFor: AppHelpers['pageFor'] = (status, title, body, caller, headers = {}) =>
    page(status, { title, body, ...(caller ? { signedInAs: caller.email } : {}), formAction: idpOrigin, siteUrl: config.siteUrl }, headers);
  return {
    currentCaller,
    requireCaller: async (req) => {
      const caller = await currentCaller(req);
      if (!caller) throw new ApiProblem(401, 'UNAUTHORIZED', 'Sign in first', `Sign in at ${config.appUrl}/signin.`);
      return caller;
    },
    signInUrl,
    store,
    timelines,
    pageFor,
    cardPage: (status, title, body, caller, card = {}) =>
      pageFor(
        status,
        title,
        <>
          <h1>{card.heading ?? title}</h1>
          <section class="card" id={card.id}>
            {body}
          </section>
        </>,
        caller,
      ),
    clockFor: async (caller, req, now = new Date()) => {
      const zone = (await store.user(caller.uid))?.timeZone ?? viewerZone(req.headers.cookie);
      // Times are labelled with the zone's current name (Europe/Kyiv), whatever name it was stored under.
      return clockIn(currentZoneName(zone) ?? zone, now);
    },
    signedOutPage: (next, lead) =>
      pageFor(
        200,
        'Sign in',
        <>
          <h1>Welcome to carecircle</h1>
          <section class="card" id="about">
            {lead ?? (
              <>
                <p>
                  carecircle helps a family look after someone they love, together. Everyone in the family circle sees the same timeline: visits, medications
                  and vital signs sent by the home-care agency, and the mail from doctors and pharmacies forwarded to your loved one's private inbox address.
                </p>
                <p>You can also let an AI assistant read it for you, only with the access you choose, and take it away again at any time.</p>
              </>
            )}
            <p>
              <a href={signInUrl(next)} id="signin">
                Sign in
              </a>{' '}
              to see your family workspace, or to start one.
            </p>
          </section>
        </>,
      ),
  };
}
