// Which client carecircle is at a portal, and ending a connection: tokens revoked at the portal
// where it offers revocation, then deleted here whatever it answered.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { ConnectionRecord, PortalStore } from './connections.js';
import { revokeToken, type PortalIssuer } from './smart.js';

/** The configured client for a listed portal, else FHIR_CLIENT_ID as a public client. */
export const issuerOf =
  (config: Config) =>
  (c: { name: string; base: string; clientId?: string }): PortalIssuer => {
    const listed = config.fhirIssuers.find((i) => i.url === c.base);
    return listed
      ? { name: listed.name, url: listed.url, clientId: listed.clientId, ...(listed.clientSecret ? { clientSecret: listed.clientSecret } : {}) }
      : { name: c.name, url: c.base, clientId: c.clientId ?? config.fhirClientId };
  };

/** Revoke (the refresh token ends the grant; the access token too, for servers that keep them apart), then forget. */
export async function disconnect(store: PortalStore, issuer: PortalIssuer, c: ConnectionRecord, log: Logger): Promise<void> {
  try {
    const tokens = store.openTokens(c);
    if (tokens.refresh) await revokeToken(c.smart, issuer, tokens.refresh, 'refresh_token');
    await revokeToken(c.smart, issuer, tokens.access, 'access_token');
  } catch (err) {
    log.warn({ err, portal: c.base }, 'the portal did not take back its tokens; they are deleted here');
  }
  await store.remove(c);
}
