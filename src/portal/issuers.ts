// Which client carecircle is at a portal, the public keys it signs in there with, and ending a connection: tokens revoked at the portal
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
      ? {
          name: listed.name,
          url: listed.url,
          clientId: listed.clientId,
          ...(listed.clientSecret ? { clientSecret: listed.clientSecret } : {}),
          ...('signingKey' in listed && listed.signingKey ? { signingKey: listed.signingKey } : {}),
        }
      : { name: c.name, url: c.base, clientId: c.clientId ?? config.fhirClientId };
  };

/** carecircle's public keys for the portals it signs in to with private_key_jwt (RFC 7517), one per key id: what a self-hoster registers at a health system. */
export const portalJwks = (config: Config) => ({
  keys: [
    ...new Map(config.fhirIssuers.flatMap((i) => ('signingKey' in i && i.signingKey ? [[i.signingKey.kid, i.signingKey.publicJwk] as const] : []))).values(),
  ],
});

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
