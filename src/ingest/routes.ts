// The partner ingest's routes: signed calls on the pipe host, and the family's link-code form on the app host.
import { defineRoutes } from '../slice/contract.js';

/** Exact bytes up to this size are read and forwarded for the signature check. */
export const PIPE_BODY_LIMIT = 256 * 1024;
/** What the worker needs to verify a call; the signature is forwarded, never logged. */
const SIGNED_HEADERS = ['x-pipe-institution', 'x-pipe-signature', 'x-pipe-timestamp', 'idempotency-key'];
const signed = { hosts: ['pipe'], edge: 'signed', bodyLimit: PIPE_BODY_LIMIT, forwardHeaders: SIGNED_HEADERS } as const;

export const INGEST_ROUTES = defineRoutes({
  pipeV1Events: { ...signed, path: '/pipe/v1/events', methods: ['POST'] },
  // The access log shows the pattern: the path holds the partner's client id.
  pipeV1ClientsFamilyShare: { ...signed, path: '/pipe/v1/clients/:subject_ref/family-share', methods: ['PUT'], logPattern: true },
  pipeV1ClientsEvents: { ...signed, path: '/pipe/v1/clients/:subject_ref/events', methods: ['DELETE'], logPattern: true },
  // A code entered with the family's cookie comes only from the app's own pages (CSRF defence).
  familyShareLink: {
    hosts: ['app'],
    path: '/api/family-share/link',
    methods: ['POST'],
    bodyLimit: 4096,
    sameOrigin: { from: ['app'], hint: (origins) => `Enter the code on a page of ${origins}.` },
    // accept and content-type choose between JSON (scripts) and a redirect to a page (a plain form post).
    forwardHeaders: ['cookie', 'origin', 'accept', 'content-type'],
    idempotent: false,
  },
  // Where a plain form post of a link code lands: what it linked, for the family that linked it.
  familyShareLinked: { hosts: ['app'], path: '/family-share/linked', methods: ['GET'], forwardHeaders: ['cookie'] },
});
