// Settings' list of MCP API keys: name, last four characters, dates, status and a revoke button.
import type { ApiKeyView } from '../keys/keys.js';

const stamp = (iso: string | undefined) => (iso ? iso.slice(0, 16).replace('T', ' ') : 'never');

export const keyRows = (list: ApiKeyView[]) =>
  list.length ? (
    <table id="keys">
      <thead>
        <tr>
          <th>Name</th>
          <th>Key</th>
          <th>Created</th>
          <th>Last used</th>
          <th>Status</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {list.map((k) => (
          <tr data-key-id={k.id}>
            <td>{k.name}</td>
            <td>
              <code>sk-svc-…{k.last4}</code>
            </td>
            <td>{stamp(k.createdAt)}</td>
            <td>{stamp(k.lastUsedAt ?? undefined)}</td>
            <td class={`status-${k.status}`}>{k.status}</td>
            <td>
              {k.status === 'active' ? (
                <form method="post" action={`/settings/keys/${encodeURIComponent(k.id)}/revoke`}>
                  <button class="danger" type="submit">
                    Revoke
                  </button>
                </form>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  ) : (
    <p class="muted">No keys yet.</p>
  );
