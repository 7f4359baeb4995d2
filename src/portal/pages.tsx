// The portal pages' handlers: each re-derives the caller's workspace and loved one from the session;
// connecting, confirming the patient and disconnecting are the primary caregiver's, a sync any writer's.
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import { appPageCsp } from '../app/page.js';
import type { SessionCaller } from '../auth/sessions.js';
import type { Config } from '../config.js';
import { canManage, canWrite } from '../family/circle.js';
import type { LovedOneRecord, MemberRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { json } from '../http/reply.js';
import type { Logger } from '../log.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import type { Timelines } from '../store/timeline/port.js';
import { connectionKey, type ConnectionRecord, type PortalStore } from './connections.js';
import { disconnect, issuerOf as issuerFor, portalJwks } from './issuers.js';
import { PORTAL_ROUTES } from './routes.js';
import { authorizationUrl, checkBaseUrl, checkPublicHost, discover, exchangeCode, launchSecrets, PortalError, type PortalIssuer } from './smart.js';
import { notSharedWords, readPatient, syncConnection, syncing, syncWords, type PortalContext } from './sync.js';

export interface PortalParts {
  config: Config;
  log: Logger;
  store: PortalStore;
  timelines: Timelines;
  clock: () => number;
}

const STATUS_WORDS = { confirming: 'Waiting for you to confirm the patient', active: 'Connected', needs_sign_in: 'Needs you to sign in again' } as const;

export function portalPages(h: AppHelpers, parts: PortalParts): RouteHandlers {
  const { config, store, log } = parts;
  const redirectUri = `${config.appUrl}/portal/callback`;
  const issuerOf = issuerFor(config);
  const ctx: PortalContext = { store, timelines: parts.timelines, issuerOf, clock: parts.clock };
  const answerWithinMs = Math.max(1_000, config.busTimeoutMs - 1_500);
  const home = (id: string) => `/care/${encodeURIComponent(id)}/portal`;

  // Connect (and sign in again) answers with a redirect to the portal's sign-in, which Chromium
  // checks against the form's page's form-action: any https origin may be a portal's (and, as
  // checkBaseUrl allows, http ones outside production).
  const csp = appPageCsp(config.nodeEnv === 'production' ? ['https:'] : ['https:', 'http:']);
  // A portal that is busy or away is worth asking again in a minute.
  const page = (caller: SessionCaller, status: number, title: string, body: Markup) =>
    h.pageFor(status, title, body, caller, { 'content-security-policy': csp, ...(status === 503 ? { 'retry-after': '60' } : {}) });
  const problem = (caller: SessionCaller, status: number, message: string, lovedOneId?: string, heading = 'The portal could not be connected') =>
    page(
      caller,
      status,
      'Portal',
      <>
        <h1>{heading}</h1>
        <section class="card" role="alert" id="portal-problem">
          <p>{message}</p>
          {lovedOneId ? <a href={home(lovedOneId)}>Back to the portal page</a> : <a href="/">Back to your workspace</a>}
        </section>
      </>,
    );

  type Scope = { caller: SessionCaller; member: MemberRecord; lovedOne: LovedOneRecord };
  /** The caller, their membership and the loved one named in the path, or the page that says why not. */
  const scoped =
    (need: 'read' | 'write' | 'manage', fn: (s: Scope, req: HttpRequestEnvelope, params: Record<string, string>) => Promise<HttpReplyEnvelope>) =>
    async (req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> => {
      const id = params.lovedOneId ?? '';
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage(home(id));
      const membership = await h.store.workspaceOf(caller.uid);
      if (!membership) return redirect('/onboarding');
      const lovedOne = await h.store.lovedOneIn(membership.workspace._id, id);
      if (!lovedOne) return problem(caller, 404, 'There is no such loved one in your workspace.');
      const allowed = need === 'read' || (need === 'write' ? canWrite(membership.member) : canManage(membership.member));
      if (!allowed) return problem(caller, 403, 'Only the primary caregiver can connect, confirm or disconnect a portal.', id);
      return fn({ caller, member: membership.member, lovedOne }, req, params);
    };

  const failed = (s: Scope, err: unknown, heading?: string): HttpReplyEnvelope => {
    if (!(err instanceof PortalError)) throw err;
    return problem(s.caller, err.transient ? 503 : 400, err.message, s.lovedOne._id, heading);
  };

  const show = scoped('read', async ({ caller, member, lovedOne }) => {
    const connections = await store.of(lovedOne._id);
    const manage = canManage(member);
    return page(
      caller,
      200,
      `${lovedOne.displayName}: health portals`,
      <>
        <h1>{lovedOne.displayName}: health-system portals</h1>
        <p>
          <a href={`/care/${encodeURIComponent(lovedOne._id)}`}>Back to the timeline</a>
        </p>
        {connections.map((c) => (
          <section class="card portal" id={`portal-${c.key}`} aria-label={c.name}>
            <h2>{c.name}</h2>
            <p class="portal-status">
              <strong>{STATUS_WORDS[c.status]}</strong>
              {c.lastSync ? ` · last synced ${c.lastSync.at.toISOString().slice(0, 16).replace('T', ' ')} UTC` : ''}
            </p>
            {syncing(c, parts.clock()) ? (
              <p class="portal-outcome" role="status">
                Syncing now (started {c.lastTriedAt!.toISOString().slice(11, 16)} UTC); reload this page for the outcome.
              </p>
            ) : c.lastSync && !c.lastError ? (
              <p class="portal-outcome">Last sync: {syncWords(c.lastSync)}</p>
            ) : null}
            {notSharedWords(c) ? <p class="portal-not-shared">{notSharedWords(c)}</p> : null}
            {c.lastError ? (
              <p role="alert" class="portal-error">
                {c.lastError}
              </p>
            ) : null}
            {c.status === 'confirming' ? (
              <>
                <p>Is the portal's patient {lovedOne.displayName}? Nothing is imported until you confirm.</p>
                <table class="portal-confirm">
                  <caption>The loved one and the portal's patient, side by side</caption>
                  <tr>
                    <td></td>
                    <th scope="col">In carecircle</th>
                    <th scope="col">In the portal</th>
                  </tr>
                  <tr>
                    <th scope="row">Name</th>
                    <td>{lovedOne.displayName}</td>
                    <td id="portal-patient-name">{c.patient.name}</td>
                  </tr>
                  <tr>
                    <th scope="row">Birth date</th>
                    <td>not recorded</td>
                    <td id="portal-patient-birth">{c.patient.birthDate ?? 'not given'}</td>
                  </tr>
                </table>
                {manage ? (
                  <form method="post" action={`${home(lovedOne._id)}/${c.key}/confirm`}>
                    <button type="submit">Yes, this is {lovedOne.displayName}: import</button>
                  </form>
                ) : (
                  <p class="muted">The primary caregiver confirms the patient.</p>
                )}
              </>
            ) : (
              <form method="post" action={`${home(lovedOne._id)}/${c.key}/sync`}>
                <button type="submit">Sync now</button>
              </form>
            )}
            {c.status === 'needs_sign_in' && manage ? (
              <ConnectForm action={`${home(lovedOne._id)}/connect`} issuers={[]} url={c.base} label="Sign in again" />
            ) : null}
            {manage ? (
              <form method="post" action={`${home(lovedOne._id)}/${c.key}/disconnect`}>
                <button type="submit">Disconnect</button>
              </form>
            ) : null}
          </section>
        ))}
        {manage ? (
          <section class="card" aria-labelledby="portal-connect-title">
            <h2 id="portal-connect-title">Connect a portal</h2>
            <p>
              Sign in at {lovedOne.displayName}'s health system with their portal account, or your own proxy account for them. The results and medication list
              the clinicians keep then appear on the timeline, marked with the portal they came from.
            </p>
            <ConnectForm action={`${home(lovedOne._id)}/connect`} issuers={config.fhirIssuers.map((i) => i.name)} label="Connect" />
          </section>
        ) : null}
      </>,
    );
  });

  const connect = scoped('manage', async (s, req) => {
    const body = (req.body ?? {}) as { issuer?: unknown; url?: unknown };
    const picked = typeof body.issuer === 'string' && body.issuer !== '' ? config.fhirIssuers[Number(body.issuer)] : undefined;
    if (typeof body.issuer === 'string' && body.issuer !== '' && !picked)
      return problem(s.caller, 400, 'issuer: pick a health system from the list', s.lovedOne._id);
    try {
      let issuer: PortalIssuer;
      if (picked) issuer = issuerOf({ name: picked.name, base: picked.url });
      else {
        if (typeof body.url !== 'string' || !body.url.trim()) throw new PortalError('NOT_FHIR', 'url: pick a health system or enter its FHIR base URL');
        const base = checkBaseUrl(body.url);
        await checkPublicHost(base, config.nodeEnv !== 'production');
        issuer = issuerOf({ name: new URL(base).host, base });
        if (!issuer.clientId)
          throw new PortalError('NOT_FHIR', `url: carecircle has no client id for ${new URL(base).host} (this service's FHIR_CLIENT_ID is unset)`);
      }
      const smart = await discover(issuer.url);
      const { verifier, state } = launchSecrets();
      await store.startLaunch(
        state,
        verifier,
        { uid: s.caller.uid, lovedOneId: s.lovedOne._id, workspaceId: s.lovedOne.workspaceId, name: issuer.name, base: issuer.url, smart },
        parts.clock(),
      );
      return redirect(await authorizationUrl(smart, issuer, redirectUri, state, verifier));
    } catch (err) {
      return failed(s, err);
    }
  });

  /** The portal's return: the state must be one this caller started; the code becomes tokens, kept sealed until the patient is confirmed. */
  const callback = async (req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> => {
    const caller = await h.currentCaller(req);
    if (!caller) return h.signedOutPage('/');
    const state = req.query.state ?? '';
    const launch = state ? await store.takeLaunch(state, parts.clock()) : null;
    if (!launch || launch.uid !== caller.uid)
      return problem(caller, 400, 'This sign-in did not start here, or it took too long. Connect the portal again from the loved one’s page.');
    const s = { caller, lovedOne: { _id: launch.lovedOneId } } as Scope;
    if (req.query.error) return problem(caller, 400, `${launch.name} did not allow the connection (${req.query.error.slice(0, 100)}).`, launch.lovedOneId);
    try {
      const issuer = issuerOf({ name: launch.name, base: launch.base });
      const { tokens, patient } = await exchangeCode(launch.smart, issuer, new URL(`${redirectUri}?${new URLSearchParams(req.query).toString()}`), {
        verifier: launch.verifierPlain,
        state,
      });
      const key = connectionKey(launch.base);
      const _id = `${launch.lovedOneId}:${key}`;
      const c: ConnectionRecord = {
        _id,
        key,
        lovedOneId: launch.lovedOneId,
        workspaceId: launch.workspaceId,
        name: launch.name,
        base: launch.base,
        clientId: issuer.clientId,
        smart: launch.smart,
        status: 'confirming',
        patient: { id: patient, name: '' },
        tokens: store.sealTokens(_id, tokens),
        connectedBy: caller.uid,
        createdAt: new Date(parts.clock()),
      };
      const previous = await store.connections.findOne({ _id });
      // Signing in again to the same patient keeps the confirmation; another patient is confirmed anew.
      if (previous && previous.patient.id === patient && previous.status !== 'confirming') c.status = 'active';
      c.patient = await readPatient(ctx, c, patient);
      // The same patient keeps where the syncs got to; another starts over.
      const kept: ConnectionRecord =
        previous && previous.patient.id === patient
          ? {
              ...c,
              ...(previous.cursors ? { cursors: previous.cursors } : {}),
              ...(previous.capabilities ? { capabilities: previous.capabilities } : {}),
              ...(previous.notShared ? { notShared: previous.notShared } : {}),
            }
          : c;
      await store.save(previous ? { ...kept, createdAt: previous.createdAt, ...(previous.lastSync ? { lastSync: previous.lastSync } : {}) } : c);
      log.info({ lovedOneId: launch.lovedOneId, portal: launch.base }, 'portal connected');
      return redirect(`${home(launch.lovedOneId)}#portal-${key}`);
    } catch (err) {
      return failed(s, err);
    }
  };

  const withConnection = (need: 'write' | 'manage', fn: (s: Scope, c: ConnectionRecord) => Promise<HttpReplyEnvelope>) =>
    scoped(need, async (s, _req, params) => {
      const c = await store.get(s.lovedOne._id, params.key ?? '');
      if (!c) return problem(s.caller, 404, 'That portal is not connected to this loved one.', s.lovedOne._id);
      return fn(s, c);
    });

  const sync = async (s: Scope, c: ConnectionRecord) => {
    const back = redirect(`${home(s.lovedOne._id)}#portal-${c.key}`);
    const running = syncConnection(ctx, c);
    // The answer must reach the gateway before it stops waiting for a worker: a longer sync (a
    // first one of a long record, a slow portal) goes on here, and the page says it is running.
    let timer: NodeJS.Timeout | undefined;
    const later = new Promise<'later'>((resolve) => (timer = setTimeout(() => resolve('later'), answerWithinMs)));
    const first = await Promise.race([
      running.then(
        () => 'done' as const,
        (err: unknown) => ({ err }),
      ),
      later,
    ]);
    clearTimeout(timer);
    if (first === 'later') {
      running.catch((err: unknown) => {
        if (!(err instanceof PortalError)) log.error({ err, portal: c.base }, 'portal sync failed');
      });
      return back;
    }
    if (first !== 'done') return failed(s, first.err, 'The sync did not finish; the records from the last complete sync stay in place');
    return back;
  };

  const confirm = withConnection('manage', async (s, c) => {
    if (c.status === 'confirming') {
      await store.update(c._id, { status: 'active' });
      c.status = 'active';
    }
    return sync(s, c);
  });

  const syncNow = withConnection('write', async (s, c) => {
    if (c.status !== 'active') return problem(s.caller, 409, `${c.name}: ${STATUS_WORDS[c.status]}.`, s.lovedOne._id);
    // One already running is left to finish; the page shows it.
    if (syncing(c, parts.clock())) return redirect(`${home(s.lovedOne._id)}#portal-${c.key}`);
    return sync(s, c);
  });

  const disconnectNow = withConnection('manage', async (s, c) => {
    await disconnect(store, issuerOf(c), c, log);
    return redirect(home(s.lovedOne._id));
  });

  return handlers(PORTAL_ROUTES)
    .on('portalPage', 'GET', show)
    .on('portalConnect', 'POST', connect)
    .on('portalCallback', 'GET', callback)
    .on('portalConfirm', 'POST', confirm)
    .on('portalSync', 'POST', syncNow)
    .on('portalDisconnect', 'POST', disconnectNow)
    .on('portalJwks', 'GET', async () => json(200, portalJwks(config), { 'cache-control': 'public, max-age=300' }))
    .done();
}

/** Pick a listed health system, or enter a FHIR base URL. */
function ConnectForm({ action, issuers, url, label }: { action: string; issuers: string[]; url?: string; label: string }) {
  return (
    <form method="post" action={action} class="portal-connect">
      {issuers.length ? (
        <p>
          <label>
            Health system{' '}
            <select name="issuer">
              <option value="">(enter an address below)</option>
              {issuers.map((name, i) => (
                <option value={String(i)}>{name}</option>
              ))}
            </select>
          </label>
        </p>
      ) : null}
      <p>
        <label>
          FHIR base URL <input type="url" name="url" value={url ?? ''} placeholder="https://fhir.example.org/api/FHIR/R4" />
        </label>
      </p>
      <button type="submit">{label}</button>
    </form>
  );
}
