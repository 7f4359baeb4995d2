// The metrics mechanism: the registry and its metrics, request instrumentation, and the listener.
export { bucketOf, collectProcessMetrics, countRateLimited, metrics, registry, watchConsumer, type ConsumerReading } from './registry.js';
export { countRequests, instrumentListener, requestRecorder, UNMATCHED } from './http.js';
export { startMetricsListener, type MetricsListener } from './server.js';
