// The development identity provider: sign in as any email, for the embedded run and tests.
// It behaves like a real provider (ES256 ID tokens, a published JWKS, issuer and audience), so
// the rest of carecircle cannot tell it apart. loadConfig refuses it under NODE_ENV=production.
import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import type { Db } from 'mongodb';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Config } from '../config.js';
import { identityProvider } from '../config.js';
import { readRawBody } from '../http/body.js';
import { contentSecurityPolicy } from '../http/csp.js';
import type { Markup } from '../http/html.js';
import { pageHeaders, renderShell, sendHtml } from '../http/page.js';
import { returnTarget } from '../http/returnTarget.js';
import type { AuthRouteTable } from '../slice/contract.js';
import { isDuplicateKey } from '../store/errors.js';

export const DEV_IDP_KEYS = 'dev_idp_keys';

interface KeyDoc {
  _id: 'current';
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** One signing key for every process, created by whichever process starts first. */
async function signingKey(db: Db): Promise<KeyDoc> {
  const keys = db.collection<KeyDoc>(DEV_IDP_KEYS);
  const existing = await keys.findOne({ _id: 'current' });
  if (existing) return existing;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = createHash('sha256').update(JSON.stringify(publicJwk)).digest('base64url').slice(0, 16);
  const doc: KeyDoc = { _id: 'current', kid, privateJwk: await exportJWK(privateKey), publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' } };
  try {
    await keys.insertOne(doc);
    return doc;
  } catch (err) {
    if (isDuplicateKey(err)) return (await keys.findOne({ _id: 'current' }))!;
    throw err;
  }
}

/** A stable uid per email, as a real provider keeps one per account. */
export const devUid = (email: string): string => `dev-${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 24)}`;

export async function mintDevIdToken(db: Db, config: Config, who: { email: string; name?: string; authTime?: number }): Promise<string> {
  const key = await signingKey(db);
  const idp = identityProvider(config);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: who.email.trim().toLowerCase(), email_verified: true, ...(who.name ? { name: who.name } : {}), auth_time: who.authTime ?? now })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .setIssuer(idp.issuer)
    .setAudience(idp.audience)
    .setSubject(devUid(who.email))
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(await importJWK(key.privateJwk, 'ES256'));
}

const loginForm = z.object({
  email: z.email('must be an email address').max(254),
  name: z.string().trim().max(100).optional(),
  return_to: z.string().max(2000),
  /** form_post: the token is posted back by a form, so a browser without script can finish. */
  response_mode: z.enum(['fragment', 'form_post']).optional(),
});

/** Only our own hosts may receive a token: anything else would be an open redirect. */
export function safeReturnTo(config: Config, returnTo: string | undefined): string | undefined {
  return returnTarget(returnTo, null, [config.siteUrl, config.appUrl, config.authUrl]) ?? undefined;
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1f2937}label{display:block;margin:.75rem 0 .25rem;font-weight:600}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}button{margin-top:1rem;padding:.6rem 1.2rem;font-size:1rem;background:#0f766e;color:#fff;border:0;border-radius:.3rem;cursor:pointer}.note{background:#fef3c7;padding:.75rem;border-radius:.3rem;font-size:.9rem}';

const page = (title: string, body: Markup): string => renderShell({ title, titleSuffix: '', inlineStyle: STYLE, main: body, bareBody: true });

/** The development sign-in's routes on the auth host. */
export const DEV_IDP_ROUTES = {
  jwks: { path: '/dev/jwks.json', methods: ['GET'], body: 'none' },
  loginPage: { path: '/dev/login', methods: ['GET'], body: 'none' },
  signIn: { path: '/dev/login', methods: ['POST'], body: 'form' },
} as const satisfies AuthRouteTable;

/** The handler of each route in DEV_IDP_ROUTES. */
export function devIdpHandlers(config: Config, db: Db): Record<keyof typeof DEV_IDP_ROUTES, Middleware> {
  const returnOrigins = [config.siteUrl, config.appUrl].map((u) => new URL(u).origin);
  // form-action covers the redirect that follows the form, so our own hosts are listed too.
  const csp = contentSecurityPolicy({ img: 'data:', style: "'unsafe-inline'", formTargets: returnOrigins, frameAncestors: "'none'", baseUri: "'none'" });
  const html = (ctx: Context, status: number, body: string) => sendHtml(ctx, status, body, pageHeaders({ csp }));

  const jwks: Middleware = async (ctx) => {
    const key = await signingKey(db);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = { keys: [key.publicJwk] };
  };

  const loginPage: Middleware = async (ctx) => {
    const returnTo = safeReturnTo(config, typeof ctx.query.return_to === 'string' ? ctx.query.return_to : undefined);
    if (!returnTo)
      return html(
        ctx,
        400,
        page(
          'Sign-in link not valid',
          <>
            <h1>This sign-in link is not valid</h1>
            <p>
              It must come back to {config.appUrl} or {config.siteUrl}.
            </p>
          </>,
        ),
      );
    html(
      ctx,
      200,
      page(
        'Sign in to carecircle',
        <>
          <h1>Sign in to carecircle</h1>
          <p class="note">Development sign-in: any email address signs in, with no password. This page exists only in local runs.</p>
          <form method="post" action="/dev/login">
            <input type="hidden" name="return_to" value={returnTo} />
            {/* A browser with script takes the token from the fragment; one without parses this
                input and gets it posted back instead. */}
            {ctx.query.response_mode === 'form_post' ? (
              <input type="hidden" name="response_mode" value="form_post" />
            ) : (
              <noscript>
                <input type="hidden" name="response_mode" value="form_post" />
              </noscript>
            )}
            <label for="email">Email</label>
            <input id="email" name="email" type="email" required autocomplete="email" autofocus />
            <label for="name">Your name (optional)</label>
            <input id="name" name="name" type="text" autocomplete="name" />
            <button type="submit">Sign in</button>
          </form>
        </>,
      ),
    );
  };

  const signIn: Middleware = async (ctx) => {
    const raw = await readRawBody(ctx, 16 * 1024);
    const form = loginForm.safeParse(Object.fromEntries(new URLSearchParams(raw.toString('utf8'))));
    const returnTo = form.success ? safeReturnTo(config, form.data.return_to) : undefined;
    if (!form.success || !returnTo) {
      const problem = form.success ? 'The return address is not one of ours.' : form.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      return html(
        ctx,
        400,
        page(
          'Sign-in failed',
          <>
            <h1>Sign-in failed</h1>
            <p>{problem}</p>
            <p>Go back and try again.</p>
          </>,
        ),
      );
    }
    const token = await mintDevIdToken(db, config, { email: form.data.email, ...(form.data.name ? { name: form.data.name } : {}) });
    if (form.data.response_mode === 'form_post')
      // OpenID's form_post response mode: the token goes back in a POST body, never in a URL.
      return html(
        ctx,
        200,
        page(
          'Signed in',
          <>
            <h1>Signed in as {form.data.email.trim().toLowerCase()}</h1>
            <form method="post" action={returnTo} id="form-post">
              <input type="hidden" name="id_token" value={token} />
              <button type="submit">Continue to carecircle</button>
            </form>
          </>,
        ),
      );
    ctx.status = 303;
    ctx.set('Cache-Control', 'no-store');
    // In the fragment, so the token never reaches a server log or a Referer header.
    ctx.redirect(`${returnTo}#id_token=${token}`);
  };
  return { jwks, loginPage, signIn };
}
