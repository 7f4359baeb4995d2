// Every subject on the bus, in one place. BUS_NAMESPACE lets several deployments (or test
// runs) share one NATS cluster without serving each other's requests.

const NAMES = {
  directoryMcp: 'cc.site.mcp',
  siteDiscovery: 'cc.site.discovery',
  sitePages: 'cc.site.pages',
  newsletter: 'cc.site.newsletter',
  community: 'cc.site.community',
  session: 'cc.session',
  appMcp: 'cc.app.mcp',
  appWeb: 'cc.app.web',
  appSandbox: 'cc.app.sandbox',
  inbox: 'cc.inbox',
  pipe: 'cc.pipe.http',
  familyShareLink: 'cc.app.family-share',
  ingestEvents: 'cc.ingest.events',
  opsSandboxCreated: 'ops.sandbox.created',
} as const;

export type Subjects = { readonly [K in keyof typeof NAMES]: string };

export function subjects(namespace: string): Subjects {
  const prefix = namespace ? `${namespace}.` : '';
  return Object.fromEntries(Object.entries(NAMES).map(([k, v]) => [k, prefix + v])) as unknown as Subjects;
}

/** The queue group every worker process joins for a subject. */
export const QUEUE = 'workers';
