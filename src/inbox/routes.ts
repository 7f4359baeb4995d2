// The inbox's internal routes: the smtp role asks them over the bus; no listener serves them.
import { defineRoutes } from '../slice/contract.js';

export const INBOX_ROUTES = defineRoutes({
  recipient: { hosts: ['internal'], path: '/recipient', methods: ['POST'], idempotent: true },
  deliver: { hosts: ['internal'], path: '/deliver', methods: ['POST'] },
});
