// Public surface of `carecircle/partner`: the signing function and the retrying client.
export { GIVE_UP_AFTER_MS, PartnerClient, RETRY_DELAYS_MS, signBody } from './client.js';
export type { AttemptInfo, PartnerClientOptions, PartnerEvent, SendResult, StopRule } from './client.js';
