// Settings on the app host: MCP API keys (minted by post/redirect/get and shown once, revoked
// after a confirmation that names the key, removed once revoked), connecting an assistant, the
// browsers that receive notifications, the person's time zone, connected apps and recent MCP activity. Everything acts for the caller only.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { setUserTimeZone } from '../family/changes.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { type KeyStore, MAX_KEYS_PER_USER, TooManyKeys } from '../keys/keys.js';
import { OAuthStore } from '../oauth/store.js';
import type { AuditLog } from '../workspace/audit.js';
import { PendingStore, type PendingRow } from '../workspace/writeStore.js';
import type { Approvals } from '../workspace/approvals.js';
import { friendlyIssues, keyInput, revokeKey } from './actions.js';
import { bridgeBundle } from './bridgeDownload.js';
import { RECENT_ACTIVITY_ROWS } from '../workspace/activity.js';
import { activityRows } from './activityRows.js';
import { connectBody } from './connect.js';
import { connectedAppsSection } from './connectedApps.js';
import { Flashes } from './flash.js';
import { pushDevicesFor, pushDevicesSection } from './pushDevices.js';
import type { AppHelpers } from './helpers.js';
import { keyLabel, keyRows } from './keyRows.js';
import type { AppRouteBuilder } from './routeTable.js';
import { stamp, zoneAside, type Clock } from './time.js';
import { currentZoneName, zoneGroups, zoneLabel } from './zones.js';

/** A form's problems, each as a sentence. */
export const errorBox = (messages: string[]) => (
  <div class="error" role="alert">
    {messages.map((m) => (
      <p>{m}</p>
    ))}
  </div>
);

/** The zone list: UTC, then each region's places; a choice not in it (an `Etc/GMT+5`) stays first. */
function zoneSelect(chosen: string, now: Date) {
  const groups = zoneGroups(now);
  const listed = chosen === 'UTC' || groups.some((g) => g.zones.some((z) => z.value === chosen));
  return (
    <select id="time-zone-select" name="timeZone">
      {listed ? null : (
        <option value={chosen} selected>
          {zoneLabel(chosen, now)}
        </option>
      )}
      <option value="UTC" selected={chosen === 'UTC'}>
        UTC
      </option>
      {groups.map((g) => (
        <optgroup label={g.region}>
          {g.zones.map((z) => (
            <option value={z.value} selected={z.value === chosen}>
              {z.label}
            </option>
          ))}
        </optgroup>
      ))}
    </select>
  );
}

const zoneSection = (clock: Clock, stored: boolean, error: Markup) => (
  <section class="card">
    <h2 id="time-zone">Time zone</h2>
    <p>
      Times on every page are shown in <strong id="current-zone">{clock.zone}</strong>
      {zoneAside(clock, new Date())}
      {stored ? '' : ', your browser’s zone until you choose one'}.
    </p>
    {error}
    <form method="post" action="/settings/time-zone">
      <label for="time-zone-select">Show times in</label>
      {zoneSelect(currentZoneName(clock.zone) ?? clock.zone, new Date())}
      <button type="submit">Save time zone</button>
    </form>
  </section>
);

/** On a person's first pages, their browser fills in its zone and sends it (see assets/app.js). */
export const zoneDetectForm = () => (
  <form id="zone-detect" method="post" action="/settings/time-zone" hidden>
    <input type="hidden" name="timeZone" value="" />
    <input type="hidden" name="detected" value="1" />
  </form>
);

/** Changes an assistant asked for that need the person's yes: each with approve and decline as plain form posts. */
const waitingSection = (rows: PendingRow[], clock: Clock, who: (r: PendingRow) => string) =>
  rows.length ? (
    <section class="card" id="waiting">
      <h2>Waiting for you</h2>
      <p>An assistant asked to make these changes. Nothing is changed until you approve; the assistant then makes it when it calls again.</p>
      <ul class="waiting">
        {rows.map((r) => (
          <li>
            <p>
              <strong>{r.question}</strong>{' '}
              <span class="muted">
                ({who(r)}, {stamp(clock, r.createdAt)})
              </span>
            </p>
            <form method="post" action={`/settings/waiting/${encodeURIComponent(r._id)}/approve`}>
              <button type="submit">Approve: {r.question}</button>
            </form>
            <form method="post" action={`/settings/waiting/${encodeURIComponent(r._id)}/decline`}>
              <button class="danger" type="submit">
                Decline: {r.question}
              </button>
            </form>
          </li>
        ))}
      </ul>
    </section>
  ) : null;

export function settingsRoutes(
  routes: AppRouteBuilder,
  h: AppHelpers,
  deps: { config: Config; db: Db; credentials: Credentials; keys: KeyStore; audit: AuditLog; vapidPublicKey: string; approvals?: Approvals },
): void {
  const { config, db, keys, audit } = deps;
  const oauthApps = new OAuthStore(db, deps.credentials);
  const flashes = new Flashes(db, config);
  const pending = new PendingStore(db);

  const settingsPage = async (caller: SessionCaller, req: HttpRequestEnvelope, errors: { keys?: Markup; zone?: Markup } = {}, status = 200) => {
    const [list, activity, apps, user, clock, waiting, push] = await Promise.all([
      keys.list(caller.uid),
      // More than are shown: protocol notifications among them are left out.
      audit.recent(caller.uid, RECENT_ACTIVITY_ROWS),
      oauthApps.connectedApps(caller.uid),
      h.store.user(caller.uid),
      h.clockFor(caller, req),
      pending.waiting(caller.uid, Date.now()),
      pushDevicesFor(db, caller, req),
    ]);
    const names = {
      keys: new Map(list.map((k) => [k.id, k])),
      apps: await oauthApps.clientNames([...activity, ...waiting].flatMap((a) => (a.clientId ? [a.clientId] : []))),
    };
    const askedBy = (r: PendingRow) => {
      const key = r.keyId ? names.keys.get(r.keyId) : undefined;
      if (key) return `asked with key ${keyLabel(key)}`;
      const app = r.clientId ? names.apps.get(r.clientId) : undefined;
      return app ? `asked by ${app}` : 'asked by an assistant';
    };
    return h.pageFor(
      status,
      'Settings',
      <>
        <h1>Settings</h1>
        {user?.timeZone ? null : zoneDetectForm()}
        {waitingSection(waiting, clock, askedBy)}
        <section class="card">
          <h2 id="mcp-api-keys">MCP API keys</h2>
          <p>
            An MCP API key lets an AI assistant read your family workspace at <code>{config.appUrl}/api/mcp</code>, and, if you choose, add to the care record
            in your name (changing a medication or withdrawing an entry still asks you first). Revoking a key stops it on its very next request.{' '}
            <a href="/settings/connect">How to connect an assistant</a>, with or without a key.
          </p>
          {errors.keys}
          <form method="post" action="/settings/keys">
            <label for="key-name">Name (optional)</label>
            <input id="key-name" name="name" type="text" maxLength={60} placeholder="Claude Desktop" />
            <fieldset>
              <legend>What the assistant may do</legend>
              <label>
                <input type="radio" name="access" value="read" checked /> Read only
              </label>
              <label>
                <input type="radio" name="access" value="read-write" /> Read and add to the care record
              </label>
            </fieldset>
            <button type="submit">Mint a new key</button>
          </form>
          {keyRows(list, clock)}
        </section>
        {pushDevicesSection(push.devices, push.thisDevice, deps.vapidPublicKey, clock)}
        {zoneSection(clock, !!user?.timeZone, errors.zone)}
        <section class="card">
          <h2 id="calendar">Calendar feed</h2>
          <p>
            See your loved ones' appointments in your own calendar app: <a href="/settings/calendar">your private calendar address</a>.
          </p>
        </section>
        <section class="card">
          <h2 id="alerts">Alerts by mail</h2>
          <p>
            Missed doses, falls and other news about each loved one, right away or in a daily or weekly digest:{' '}
            <a href="/settings/alerts">your alert settings</a>.
          </p>
        </section>
        {connectedAppsSection(apps, clock)}
        <section class="card">
          <h2>Recent MCP activity</h2>
          {activityRows(activity, names, clock)}
        </section>
        <section class="card" id="delete-account">
          <h2>Leave carecircle</h2>
          <p>
            Deleting your account removes your profile, keys, connected apps and notifications; what you added to a loved one's record stays with the family.{' '}
            <a href="/settings/delete-account">Delete my account</a>
          </p>
        </section>
      </>,
      caller,
    );
  };

  /** The caller's own key by id, or null: another person's key is simply not there. */
  const ownKey = async (caller: SessionCaller, id: string) => (await keys.list(caller.uid)).find((k) => k.id === id) ?? null;
  const noSuchKey = (caller: SessionCaller) =>
    h.pageFor(
      404,
      'No such key',
      <>
        <h1>No such key</h1>
        <section class="card">
          <p>
            That key is not on your account. See <a href="/settings#mcp-api-keys">your keys</a>.
          </p>
        </section>
      </>,
      caller,
    );

  routes
    .on('settings', 'GET', async (req) => {
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage('/settings');
      return settingsPage(caller, req);
    })
    .on('settingsKeys', 'POST', async (req) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      const input = keyInput.safeParse(req.body ?? {});
      if (!input.success) return settingsPage(caller, req, { keys: errorBox(friendlyIssues(input.error)) }, 400);
      try {
        const minted = await keys.mint(caller.uid, input.data.name, input.data.access);
        // Post/redirect/get: the key waits on the server for the next page, so a reload there shows
        // it no more and mints nothing.
        const cookie = await flashes.put(caller.uid, { plaintext: minted.plaintext, keyName: minted.key.name, last4: minted.key.last4 });
        return redirect('/settings/connect', { 'set-cookie': cookie });
      } catch (err) {
        if (err instanceof TooManyKeys)
          return settingsPage(
            caller,
            req,
            { keys: errorBox([`You have as many active keys as an account may have (${MAX_KEYS_PER_USER}): revoke one you no longer use first.`]) },
            400,
          );
        throw err;
      }
    })
    .on('settingsConnect', 'GET', async (req) => {
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage('/settings/connect');
      const [minted, bundle] = await Promise.all([
        flashes.take(caller.uid, req.headers.cookie),
        // The page still gives the remote configurations when the bridge cannot be built.
        bridgeBundle().catch(() => null),
      ]);
      return h.pageFor(200, 'Connect an assistant', connectBody(config.appUrl, minted, bundle), caller, { 'set-cookie': flashes.cleared });
    })
    .on('settingsKeysRevoke', 'GET', async (req, params) => {
      const id = params.id ?? '';
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage(`/settings/keys/${encodeURIComponent(id)}/revoke`);
      const key = await ownKey(caller, id);
      if (!key) return noSuchKey(caller);
      if (key.status !== 'active') return redirect('/settings#mcp-api-keys');
      return h.pageFor(
        200,
        'Revoke a key',
        <>
          <h1>Revoke key {keyLabel(key)}?</h1>
          <section class="card" id="confirm">
            <p>
              An assistant using this key stops working on its very next request. A revoked key cannot be turned back on; you can mint a new one at any time.
            </p>
            <form method="post" action={`/settings/keys/${encodeURIComponent(key.id)}/revoke`}>
              <button class="danger" type="submit">
                Revoke key {keyLabel(key)}
              </button>
            </form>
            <p>
              <a href="/settings#mcp-api-keys">Keep the key</a>
            </p>
          </section>
        </>,
        caller,
      );
    })
    .on('settingsKeysRevoke', 'POST', async (req, params) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      await revokeKey(keys, caller, params.id ?? '');
      return redirect('/settings#mcp-api-keys');
    })
    .on('settingsKeysRemove', 'POST', async (req, params) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      if (!(await keys.removeRevoked(caller.uid, params.id ?? ''))) return noSuchKey(caller);
      return redirect('/settings#mcp-api-keys');
    })
    .on('settingsWaiting', 'POST', async (req, params) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      const decision = params.decision === 'approve' ? 'approved' : params.decision === 'decline' ? 'declined' : undefined;
      // Approved: made here and now, as the person's assistant asked; refused with the reason when it cannot be.
      const approval =
        decision === 'approved' && deps.approvals
          ? await deps.approvals.approve(caller.uid, params.id ?? '', caller.name?.trim() || caller.email, { requestId: req.requestId, clientIp: req.clientIp })
          : undefined;
      if (approval?.outcome === 'refused')
        return h.pageFor(
          409,
          'Not changed',
          <>
            <h1>Not changed</h1>
            <section class="card">
              <p id="approval-refused">{approval.reason}</p>
              <p>
                Back to <a href="/settings">Settings</a>.
              </p>
            </section>
          </>,
          caller,
        );
      // Someone else's change, one already answered or expired, or a made-up decision: nothing to do here.
      if (!decision || approval?.outcome === 'gone' || (!approval && !(await pending.decide(caller.uid, params.id ?? '', decision, Date.now()))))
        return h.pageFor(
          404,
          'No such change',
          <>
            <h1>No such change</h1>
            <section class="card">
              <p>
                That change is not waiting for you any more: it was answered already or has expired. See <a href="/settings">Settings</a>.
              </p>
            </section>
          </>,
          caller,
        );
      return redirect('/settings#waiting');
    })
    .on('settingsTimeZone', 'POST', async (req) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      const body = (req.body ?? {}) as { timeZone?: unknown; detected?: unknown };
      const zone = typeof body.timeZone === 'string' ? body.timeZone : '';
      // The browser's guess never overrides a zone the person chose.
      if (body.detected && (await h.store.user(caller.uid))?.timeZone) return redirect('/settings#time-zone');
      // Kept under its current name: a browser or an older choice may still say Asia/Calcutta.
      if (!(await setUserTimeZone(db, caller.uid, currentZoneName(zone) ?? zone)))
        return settingsPage(caller, req, { zone: errorBox(['Please choose a time zone from the list.']) }, 400);
      return redirect('/settings#time-zone');
    });
}
