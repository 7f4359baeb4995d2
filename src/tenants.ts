// The tenants a deployment can provision (TENANTS): who a verified caller acts for.
export const TENANTS = ['family', 'agency'] as const;
export type Tenant = (typeof TENANTS)[number];
