// The worker side of the family inbox: which addresses exist, and storing what arrives as an
// inbox item and an `inbox_message` care event, for sandboxes too.
import type { Db } from 'mongodb';
import { z } from 'zod';
import { newId } from '../store/ids.js';
import { ApiProblem, json } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { appendCareEvent, lovedOneByInbox } from '../family/records.js';
import { EXCERPT_CHARS, storeInboxItem } from './records.js';
import { INBOX_ROUTES } from './routes.js';

const recipientBody = z.object({ address: z.string().max(320) });
export const deliveryBody = z.object({
  recipients: z.array(z.string().max(320)).min(1).max(50),
  from: z.string().max(500),
  subject: z.string().max(1000),
  text: z.string().max(EXCERPT_CHARS),
  attachmentNames: z.array(z.string().max(300)).max(100),
  messageId: z.string().max(500).optional(),
  receivedAt: z.iso.datetime(),
});
export type Delivery = z.infer<typeof deliveryBody>;

export function inboxHandlers(db: Db): RouteHandlers {
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
        await storeInboxItem(db, { _id: itemId, lovedOneId: lovedOne._id, workspaceId: lovedOne.workspaceId, from: d.from, subject: d.subject, receivedAt, excerpt: d.text, attachmentNames: d.attachmentNames, ...(d.messageId ? { messageId: d.messageId } : {}) });
        await appendCareEvent(db, {
          _id: newId('evt'),
          lovedOneId: lovedOne._id,
          workspaceId: lovedOne.workspaceId,
          source: 'inbox',
          eventType: 'inbox_message',
          occurredAt: receivedAt,
          receivedAt,
          payload: { inboxItemId: itemId, from: d.from, subject: d.subject, receivedAt: d.receivedAt, excerpt: d.text, attachmentNames: d.attachmentNames },
        });
        stored++;
      }
      return json(200, { stored });
    })
    .done();
}
