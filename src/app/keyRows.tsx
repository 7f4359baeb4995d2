// Settings' list of MCP API keys: name, last four characters, dates and status; an active key
// links to its revoke confirmation, a revoked one can be removed. Buttons name the key.
import type { ApiKeyView } from '../keys/keys.js';
import { stamp, type Clock } from './time.js';

/** "‘Laptop’ (…a1b2)": how a key is named on buttons and in questions. */
export const keyLabel = (k: Pick<ApiKeyView, 'name' | 'last4'>) => `‘${k.name}’ (…${k.last4})`;

export const keyRows = (list: ApiKeyView[], clock: Clock) =>
  list.length ? (
    <div class="scroll">
      <table id="keys" class="stack">
        <caption>Your keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">May</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {list.map((k) => (
            <tr>
              <td data-label="Name">{k.name}</td>
              <td data-label="Key">
                <code>sk-svc-…{k.last4}</code>
              </td>
              <td data-label="May">{k.access === 'read-write' ? 'read and add' : 'read only'}</td>
              <td data-label="Created">{stamp(clock, new Date(k.createdAt))}</td>
              <td data-label="Last used">{stamp(clock, k.lastUsedAt ? new Date(k.lastUsedAt) : null)}</td>
              <td class={`status-${k.status}`} data-label="Status">
                {k.status}
              </td>
              <td>
                {k.status === 'active' ? (
                  <a class="button danger" href={`/settings/keys/${encodeURIComponent(k.id)}/revoke`}>
                    Revoke key {keyLabel(k)}
                  </a>
                ) : (
                  <form method="post" action={`/settings/keys/${encodeURIComponent(k.id)}/remove`}>
                    <button class="danger" type="submit">
                      Remove key {keyLabel(k)}
                    </button>
                  </form>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  ) : (
    <p class="muted">No keys yet.</p>
  );
