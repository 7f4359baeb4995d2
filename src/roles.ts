// The roles a carecircle process can play; `all` is the embedded default.
export const ROLES = ['all', 'gateway', 'worker', 'cron', 'smtp'] as const;
export type Role = (typeof ROLES)[number];
