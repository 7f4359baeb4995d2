// The workspace home: the loved ones with their pages and inboxes, adding one, linking an agency,
// and where an assistant connects.
import type { LovedOneRecord } from '../family/records.js';

function lovedOneRows(lovedOnes: LovedOneRecord[], manage: boolean) {
  if (!lovedOnes.length) return <p class="muted">No loved ones yet.</p>;
  return (
    <ul class="loved-ones">
      {lovedOnes.map((l, i) => {
        const id = encodeURIComponent(l._id);
        return (
          <li>
            <p>
              <a href={`/care/${id}`} class="loved-one">
                {l.displayName}
              </a>{' '}
              · <a href={`/care/${id}/medications`}>medications</a> · <a href={`/care/${id}/vitals`}>vital signs</a> · <a href={`/inbox/${id}`}>inbox</a>
            </p>
            <p class="inbox-address">
              Private inbox address: <code id={`inbox-address-${i + 1}`}>{l.inboxAddress}</code>{' '}
              <button type="button" class="secondary small" data-copy={`inbox-address-${i + 1}`} hidden>
                Copy {l.firstName}'s inbox address
              </button>
            </p>
            {manage ? (
              <p class="manage">
                <a href={`/workspace/loved-ones/${id}/edit`}>Edit {l.displayName}</a> ·{' '}
                <a href={`/workspace/loved-ones/${id}/remove`}>Remove {l.displayName}…</a>
              </p>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}

export function homeBody(name: string, lovedOnes: LovedOneRecord[], appUrl: string, manage: boolean) {
  return (
    <>
      <h1>{name}</h1>
      {manage ? (
        <p>
          <a href="/workspace/name">Rename the workspace</a>
        </p>
      ) : null}
      <section class="card">
        <h2>Loved ones</h2>
        {lovedOneRows(lovedOnes, manage)}
        {manage ? (
          <form method="post" action="/workspace/loved-ones">
            <h2>Add a loved one</h2>
            <label for="firstName">First name</label>
            <input id="firstName" name="firstName" type="text" required maxLength={60} />
            <label for="lastName">Last name</label>
            <input id="lastName" name="lastName" type="text" required maxLength={60} />
            <label for="timeZone">Their time zone (optional: yours when left empty)</label>
            <input id="timeZone" name="timeZone" type="text" maxLength={64} placeholder="America/New_York" />
            <button type="submit">Add</button>
          </form>
        ) : null}
      </section>
      <section class="card">
        <h2>Family circle</h2>
        <p>
          <a href="/family">See who is in the family circle</a>
          {manage ? ' and invite someone to it.' : '.'}
        </p>
      </section>
      {manage ? (
        <section class="card">
          <h2>Link a home-care agency</h2>
          <p>
            If an agency turned on family sharing for your loved one, it gave you a link code. Enter it here and their visits, notes, medications and vitals
            will appear for that loved one.
          </p>
          <form id="family-share-form" method="post" action="/api/family-share/link">
            <label for="link-code">Link code</label>
            <input id="link-code" name="code" type="text" required maxLength={40} autocomplete="off" />
            <label for="link-loved-one">Loved one</label>
            <select id="link-loved-one" name="lovedOneId">
              {lovedOnes.map((l) => (
                <option value={l._id}>{l.displayName}</option>
              ))}
            </select>
            <button type="submit">Link</button>
            <p id="family-share-result" role="status"></p>
          </form>
        </section>
      ) : null}
      <section class="card">
        <h2>Connect an AI assistant</h2>
        <p>
          Point your assistant at <code>{appUrl}/api/mcp</code>: see <a href="/settings/connect">ready-to-paste configurations</a> for Claude Desktop, Cursor,
          VS Code and Zed, or sign in with OAuth and use no key at all.
        </p>
      </section>
    </>
  );
}
