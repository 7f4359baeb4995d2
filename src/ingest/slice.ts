// The ingest slice: signed partner events and agency calls, family-share links, the durable
// consumer that stores events, and the sweeps of its keys and codes.
import { defineSlice } from '../slice/contract.js';
import { INGEST_INDEXES } from './indexes.js';
import { INGEST_ROUTES } from './routes.js';
import { ingestSweepJobs, ingestWorkerHandlers, startIngestWriter } from './runtime.js';

export const ingestSlice = defineSlice({
  name: 'ingest',
  routes: INGEST_ROUTES,
  indexes: INGEST_INDEXES,
  serve: (ctx) => ingestWorkerHandlers(ctx.config, ctx.log, ctx.db, ctx.credentials, ctx.timelines, ctx.bus, ctx.limiter),
  background: (ctx) => startIngestWriter(ctx.config, ctx.log, ctx.db, ctx.credentials, ctx.timelines, ctx.bus),
  jobs: (ctx) => ingestSweepJobs(ctx.config, ctx.db, ctx.credentials),
});
