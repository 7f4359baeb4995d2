// Each loved one's recent care timeline as an MCP resource: listed per loved one the caller can
// read, read by URI, and described by a URI template.
import type { ResourceProvider, ResourceTemplateDeclaration } from '../rpc/mcp.js';
import type { WorkspaceStore } from '../family/records.js';
import { CareReader } from './careReader.js';
import { CARE_READ_SCOPE } from './scopes.js';

/** The newest events a timeline shows. */
export const TIMELINE_EVENTS = 50;
const MIME = 'text/markdown';

export const TIMELINE_TEMPLATE = {
  uriTemplate: 'carecircle://loved-ones/{lovedOneId}/timeline',
  name: 'care_timeline',
  title: "A loved one's care timeline",
  description: `The latest ${TIMELINE_EVENTS} care events of one loved one (an id from list_loved_ones), newest first, in plain words.`,
  mimeType: MIME,
} as const satisfies ResourceTemplateDeclaration;

export const WORKSPACE_RESOURCE_TEMPLATES: readonly ResourceTemplateDeclaration[] = [TIMELINE_TEMPLATE];

export const timelineUri = (lovedOneId: string) => `carecircle://loved-ones/${encodeURIComponent(lovedOneId)}/timeline`;

/** The lovedOneId of a timeline URI; undefined when the URI is not one. */
function lovedOneIdOf(uri: string): string | undefined {
  const m = /^carecircle:\/\/loved-ones\/([^/?#]+)\/timeline$/.exec(uri);
  if (!m) return undefined;
  try {
    const id = decodeURIComponent(m[1]!);
    return id.length > 0 && id.length <= 64 ? id : undefined;
  } catch {
    return undefined;
  }
}

export function workspaceResources(store: WorkspaceStore): ResourceProvider {
  const reader = new CareReader(store);
  return {
    templates: WORKSPACE_RESOURCE_TEMPLATES,
    scope: CARE_READ_SCOPE,
    list: async (ctx) =>
      (await reader.lovedOnes(ctx)).map((l) => ({
        uri: timelineUri(l._id),
        name: `care_timeline_${l.firstName.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`,
        title: `${l.displayName}'s care timeline`,
        description: `The latest ${TIMELINE_EVENTS} care events of ${l.displayName}, newest first.`,
        mimeType: MIME,
      })),
    read: async (uri, ctx) => {
      const id = lovedOneIdOf(uri);
      if (id === undefined) return undefined;
      const lovedOne = await reader.lovedOne(ctx, id);
      const [{ events }, words] = await Promise.all([reader.events(lovedOne, { limit: TIMELINE_EVENTS }), reader.wordsFor(ctx)]);
      const text = [
        `# ${lovedOne.displayName}'s care timeline`,
        '',
        events.length
          ? `The latest ${events.length} care events, newest first (times in ${words.zone}):`
          : `Nothing has been recorded for ${lovedOne.displayName} yet.`,
        ...(events.length ? ['', ...events.map(words.line)] : []),
      ].join('\n');
      return [{ uri, mimeType: MIME, text }];
    },
  };
}
