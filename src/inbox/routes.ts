// The inbox's routes: the internal ones the smtp role asks over the bus (no listener serves them),
// and the download of a kept attachment on the app host, for the loved one's family only.
import { defineRoutes } from '../slice/contract.js';

export const INBOX_ROUTES = defineRoutes({
  recipient: { hosts: ['internal'], path: '/recipient', methods: ['POST'], idempotent: true },
  deliver: { hosts: ['internal'], path: '/deliver', methods: ['POST'] },
  attachment: { hosts: ['app'], path: '/inbox/:lovedOneId/attachments/:itemId/:index', methods: ['GET'], forwardHeaders: ['cookie'] },
});
