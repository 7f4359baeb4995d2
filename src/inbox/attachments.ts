// Downloading a kept attachment: only a member of the loved one's workspace, re-derived from the
// session on every request, gets it; anyone else gets the same 404 as for one that does not exist.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { sessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { WorkspaceStore } from '../family/records.js';
import { inboxAttachment } from './records.js';
import type { Timelines } from '../store/timeline/port.js';

const notFound: HttpReplyEnvelope = {
  status: 404,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  body: 'No such attachment in your family inbox.\n',
  raw: true,
};

/** `filename="…"` in ASCII for old clients and `filename*` in UTF-8 (RFC 6266). */
function disposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'attachment';
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export async function attachmentDownload(
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  inboxDomain: string,
  req: HttpRequestEnvelope,
  params: Record<string, string>,
): Promise<HttpReplyEnvelope> {
  const caller = await sessionCaller(db, credentials, req.headers);
  if (!caller) return notFound;
  const membership = await new WorkspaceStore(db, credentials, inboxDomain, timelines).workspaceOf(caller.uid);
  const index = Number(params.index);
  if (!membership || !Number.isInteger(index) || index < 0) return notFound;
  const found = await inboxAttachment(db, membership.workspace._id, params.lovedOneId ?? '', params.itemId ?? '', index);
  if (!found) return notFound;
  return {
    status: 200,
    headers: {
      // Whatever the sender called it, the browser saves it and never renders it on our origin.
      'content-type': 'application/octet-stream',
      'content-disposition': disposition(found.name),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cache-control': 'private, no-store',
    },
    body: Buffer.from(found.data.buffer).toString('base64'),
    raw: true,
    base64: true,
  };
}
