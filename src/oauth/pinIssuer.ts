// oidc-provider builds every URL it publishes or redirects to (discovery, the resume step of an
// authorization) from the request (`ctx.href`). Here the request is made to read as if it arrived
// at AUTH_URL, so no Host, X-Forwarded-Host or X-Forwarded-Proto header can move those URLs.
import type { Context } from 'koa';

export function pinToIssuer(ctx: Context, issuer: URL): void {
  // An absolute-form request target (`POST http://other/oauth/token`) would be its href as it is.
  const target = ctx.req.url?.startsWith('/') ? ctx.req.url : `${ctx.path}${ctx.search}`;
  const fixed = (value: unknown): PropertyDescriptor => ({ value, configurable: true });
  Object.defineProperties(ctx.request, {
    protocol: fixed(issuer.protocol.slice(0, -1)),
    secure: fixed(issuer.protocol === 'https:'),
    host: fixed(issuer.host),
    hostname: fixed(issuer.hostname),
    origin: fixed(issuer.origin),
    href: fixed(`${issuer.origin}${target}`),
  });
}
