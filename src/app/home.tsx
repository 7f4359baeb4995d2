// The workspace home: the loved ones with their pages and inboxes, adding one, linking an agency,
// and where an assistant connects.
import type { LovedOneRecord } from '../family/records.js';

function lovedOneRows(lovedOnes: LovedOneRecord[]) {
  if (!lovedOnes.length) return <p class="muted">No loved ones yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Private inbox address</th>
          <th>Id</th>
        </tr>
      </thead>
      <tbody>
        {lovedOnes.map((l) => {
          const id = encodeURIComponent(l._id);
          return (
            <tr>
              <td>
                <a href={`/care/${id}`} class="loved-one">
                  {l.displayName}
                </a>
                <br />
                <a href={`/care/${id}/medications`}>medications</a> · <a href={`/care/${id}/vitals`}>vital signs</a>
              </td>
              <td>
                <code>{l.inboxAddress}</code> · <a href={`/inbox/${id}`}>inbox</a>
              </td>
              <td>
                <code>{l._id}</code>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** `manages`: the primary caregiver sees the forms that change the workspace; family members read. */
export function homeBody(name: string, lovedOnes: LovedOneRecord[], appUrl: string, manages = true) {
  return (
    <>
      <h1>{name}</h1>
      <section class="card">
        <h2>Loved ones</h2>
        {lovedOneRows(lovedOnes)}
        {manages ? (
          <form method="post" action="/workspace/loved-ones">
            <h2>Add a loved one</h2>
            <label for="firstName">First name</label>
            <input id="firstName" name="firstName" type="text" required maxLength={60} />
            <label for="lastName">Last name</label>
            <input id="lastName" name="lastName" type="text" required maxLength={60} />
            <button type="submit">Add</button>
          </form>
        ) : null}
      </section>
      <section class="card">
        <h2>Family circle</h2>
        <p>
          <a href="/family">See who is in the family circle</a>
          {manages ? ' and invite someone to it.' : '.'}
        </p>
      </section>
      {manages ? (
        <section class="card">
          <h2>Link a home-care agency</h2>
          <p>If an agency turned on family sharing for your loved one, it gave you a link code. Enter it here and their visits, notes, medications and vitals will appear for that loved one.</p>
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
          Mint an MCP API key in <a href="/settings#mcp-api-keys">Settings</a>, then point your assistant at <code>{appUrl}/api/mcp</code>.
        </p>
      </section>
    </>
  );
}
