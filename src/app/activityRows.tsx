// Settings' recent MCP activity in plain words: what an assistant did ("Listed care events"),
// through which API key or connected app, and whether it worked. Protocol bookkeeping
// (notifications such as notifications/initialized) is left out: it is nothing a person did.
import type { ApiKeyView } from '../keys/keys.js';
import type { AuditRow } from '../workspace/audit.js';
import { keyLabel } from './keyRows.js';
import { stamp, type Clock } from './time.js';

/** The rows Settings shows. */
export const ACTIVITY_SHOWN = 20;

/** What a tool call did, by tool. */
const TOOL_WORDS: Readonly<Record<string, string>> = {
  ping: 'Checked the connection',
  get_user_profile: 'Read your profile',
  list_loved_ones: 'Listed loved ones',
  list_care_events: 'Listed care events',
};

/** What any other method did. */
const METHOD_WORDS: Readonly<Record<string, string>> = {
  initialize: 'Connected',
  ping: 'Checked the connection',
  'tools/list': 'Looked up what it can do',
  'prompts/list': 'Looked up its ready-made requests',
  'prompts/get': 'Used a ready-made request',
  'resources/list': 'Looked up what it can read',
  'resources/templates/list': 'Looked up what it can read',
  'resources/read': 'Read the care timeline',
};

/** "Listed care events": a row's request in words; a tool not listed is named as it is called. */
export function activityWords(row: Pick<AuditRow, 'method' | 'tool'>): string {
  if (row.method === 'tools/call') return (row.tool && TOOL_WORDS[row.tool]) ?? (row.tool ? `Used the tool ${row.tool.replace(/_/g, ' ')}` : 'Used a tool');
  return METHOD_WORDS[row.method] ?? `Sent ${row.method}`;
}

/** Protocol bookkeeping that no person asked for. */
export const isNoise = (row: Pick<AuditRow, 'method'>): boolean => row.method.startsWith('notifications/');

export interface Names {
  keys: ReadonlyMap<string, Pick<ApiKeyView, 'name' | 'last4'>>;
  apps: ReadonlyMap<string, string>;
}

/** "API key ‘Laptop’ (…a1b2)", "the app Claude", or, for rows written before either was kept, the kind alone. */
export function viaWords(row: Pick<AuditRow, 'authMethod' | 'keyId' | 'clientId'>, names: Names): string {
  if (row.authMethod === 'api-key') {
    const key = row.keyId ? names.keys.get(row.keyId) : undefined;
    return key ? `API key ${keyLabel(key)}` : row.keyId ? 'An API key since removed' : 'An API key';
  }
  if (row.authMethod === 'oauth') {
    const app = row.clientId ? names.apps.get(row.clientId) : undefined;
    return app ? `Connected app ‘${app}’` : 'A connected app';
  }
  return 'This browser session';
}

/** A row's outcome in words; a write says how the person was asked and whether it was a repeat. */
export function resultWords(row: Pick<AuditRow, 'success' | 'confirmation' | 'replayed'>): string {
  switch (row.confirmation) {
    case 'asked':
      return 'Asked you first';
    case 'waiting_in_app':
      return 'Waiting for you';
    case 'declined':
    case 'declined_in_app':
      return 'You declined';
    case 'cancelled':
      return 'You closed the question; nothing changed';
    case 'unanswered':
      return 'No answer in time; nothing changed';
    case 'refused':
      return 'Refused: an old or altered answer';
  }
  if (!row.success) return 'Failed';
  if (row.replayed) return 'Already done; not repeated';
  return row.confirmation === 'confirmed' || row.confirmation === 'approved_in_app' ? 'Done, after you approved' : 'Done';
}

export const activityRows = (rows: AuditRow[], names: Names, clock: Clock) => {
  const shown = rows.filter((r) => !isNoise(r)).slice(0, ACTIVITY_SHOWN);
  return shown.length ? (
    <div class="scroll">
      <table id="activity" class="stack">
        <caption>What your assistants did lately, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Through</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((a) => (
            <tr>
              <td data-label="When">{stamp(clock, a.at)}</td>
              <td data-label="What">{activityWords(a)}</td>
              <td data-label="Through">{viaWords(a, names)}</td>
              <td data-label="Result">{resultWords(a)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  ) : (
    <p class="muted">No MCP requests yet.</p>
  );
};
