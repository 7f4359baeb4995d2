// The bus subjects that are not a slice's HTTP routes (those are `cc.http.<slice>`, see
// src/slice/contract.ts). BUS_NAMESPACE lets several deployments (or test runs) share one NATS
// cluster without serving each other's requests.

const NAMES = {
  ingestEvents: 'cc.ingest.events',
  alertDeliveries: 'cc.alerts.deliveries',
  /** Fire-and-forget: records were appended to a timeline (`{ stream, records? }`, src/store/timeline/timelines.ts), for whoever reacts to new records. */
  recordsStored: 'cc.records.stored',
  opsSandboxCreated: 'ops.sandbox.created',
  /** `.<key>`: a person's answer on its way to the tools/call stream waiting for it. */
  mcpAnswers: 'cc.mcp.answers',
} as const;

export type Subjects = { readonly [K in keyof typeof NAMES]: string };

export function subjects(namespace: string): Subjects {
  const prefix = namespace ? `${namespace}.` : '';
  return Object.fromEntries(Object.entries(NAMES).map(([k, v]) => [k, prefix + v])) as unknown as Subjects;
}

/** The queue group every worker process joins for a subject. */
export const QUEUE = 'workers';
