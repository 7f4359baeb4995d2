// The worker side of the family inbox: which addresses exist, storing what arrives as an inbox
// item (with its attachments, up to a bound) and an `inbox_message` care event, for sandboxes too,
// and handing a kept attachment to a member of the loved one's workspace.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { newId } from '../store/ids.js';
import { ApiProblem, json } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { appendCareEvents, lovedOneByInbox } from '../family/records.js';
import { Binary } from 'mongodb';
import { ATTACHMENT_KEEP_BYTES, EXCERPT_CHARS, storeInboxAttachments, storeInboxItem } from './records.js';
import { attachmentDownload } from './attachments.js';
import { INBOX_ROUTES } from './routes.js';
import type { Timelines } from '../store/timeline/port.js';

const recipientBody = z.object({ address: z.string().max(320) });
export const deliveryBody = z.object({
  recipients: z.array(z.string().max(320)).min(1).max(50),
  from: z.string().max(500),
  subject: z.string().max(1000),
  text: z.string().max(EXCERPT_CHARS),
  attachmentNames: z.array(z.string().max(300)).max(100),
  /** The attachments kept, by position in attachmentNames; base64 within ATTACHMENT_KEEP_BYTES in all. */
  attachments: z
    .array(z.object({ index: z.number().int().min(0).max(99), contentType: z.string().max(200), content: z.base64() }))
    .max(100)
    .refine((list) => list.reduce((n, a) => n + Math.floor((a.content.length * 3) / 4), 0) <= ATTACHMENT_KEEP_BYTES, 'attachments over the bound')
    .optional(),
  messageId: z.string().max(500).optional(),
  receivedAt: z.iso.datetime(),
});
export type Delivery = z.infer<typeof deliveryBody>;

export function inboxHandlers(db: Db, credentials: Credentials, timelines: Timelines, inboxDomain: string): RouteHandlers {
  const lovedOneAt = (address: string) => lovedOneByInbox(db, address);
  return handlers(INBOX_ROUTES)
    .on('recipient', 'POST', async (req) => {
      const body = recipientBody.parse(req.body);
      return json(200, { known: !!(await lovedOneAt(body.address)) });
    })
    .on('deliver', 'POST', async (req) => {
      const parsed = deliveryBody.safeParse(req.body);
      if (!parsed.success) throw new ApiProblem(400, 'VALIDATION_FAILED', 'bad delivery', 'internal');
      const d = parsed.data;
      let stored = 0;
      for (const address of new Set(d.recipients.map((r) => r.toLowerCase()))) {
        const lovedOne = await lovedOneAt(address);
        if (!lovedOne) continue; // purged between RCPT and DATA: nothing to keep
        const receivedAt = new Date(d.receivedAt);
        const itemId = newId('mail');
        await storeInboxItem(timelines, {
          _id: itemId,
          lovedOneId: lovedOne._id,
          workspaceId: lovedOne.workspaceId,
          from: d.from,
          subject: d.subject,
          receivedAt,
          excerpt: d.text,
          attachmentNames: d.attachmentNames,
          ...(d.messageId ? { messageId: d.messageId } : {}),
        });
        const kept = (d.attachments ?? []).filter((a) => a.index < d.attachmentNames.length);
        await storeInboxAttachments(
          db,
          kept.map((a) => {
            const data = Buffer.from(a.content, 'base64');
            return {
              _id: `${itemId}:${a.index}`,
              itemId,
              lovedOneId: lovedOne._id,
              workspaceId: lovedOne.workspaceId,
              index: a.index,
              name: d.attachmentNames[a.index]!,
              contentType: a.contentType,
              size: data.length,
              data: new Binary(data),
            };
          }),
        );
        await appendCareEvents(timelines, [
          {
            _id: newId('evt'),
            lovedOneId: lovedOne._id,
            workspaceId: lovedOne.workspaceId,
            source: 'inbox',
            eventType: 'inbox_message',
            occurredAt: receivedAt,
            receivedAt,
            payload: { inboxItemId: itemId, from: d.from, subject: d.subject, receivedAt: d.receivedAt, excerpt: d.text, attachmentNames: d.attachmentNames },
          },
        ]);
        stored++;
      }
      return json(200, { stored });
    })
    .on('attachment', 'GET', (req, params) => attachmentDownload(db, credentials, timelines, inboxDomain, req, params))
    .done();
}
