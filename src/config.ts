// The one configuration schema: every key with its environment variable, default and doc.
import { createECDH, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TENANTS } from './tenants.js';

export interface ConfigKey {
  env: string;
  doc: string;
  schema: z.ZodType;
  default?: string;
  /** A secret: a value that does not parse is named, never repeated. */
  secret?: true;
}

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ''));
const positiveInt = z.coerce.number().int().positive();
const bool = z.enum(['0', '1', 'true', 'false', 'yes', 'no', 'on', 'off']).transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
/** "90s", "15m", "12h", "7d" → milliseconds. */
const duration = z
  .string()
  .regex(/^\d+(s|m|h|d)$/, 'must be a number followed by s, m, h or d, such as 7d')
  .transform((v) => Number(v.slice(0, -1)) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[v.slice(-1) as 's' | 'm' | 'h' | 'd']);
const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);

/** A portal client key as SMART asks (RFC 7523 client assertions signed ES384 or RS384): the private
 *  half for signing, the public half for carecircle's key set. Never printed. */
export interface PortalSigningKey {
  kid: string;
  alg: 'ES384' | 'RS384';
  key: CryptoKey;
  publicJwk: JsonWebKey;
}

/** The key in `path` (PEM, or a JWK as JSON), or why not, in words that never repeat the key. */
function portalClientKey(path: string, kid: string): PortalSigningKey | string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return `privateKeyFile ${path} could not be read (${(err as { code?: string }).code ?? 'error'})`;
  }
  let key: KeyObject;
  try {
    key = text.trimStart().startsWith('{') ? createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: 'jwk' }) : createPrivateKey(text);
  } catch {
    return `privateKeyFile ${path} does not hold a private key as PEM or JWK`;
  }
  const details = key.asymmetricKeyDetails ?? {};
  let alg: PortalSigningKey['alg'];
  // Node's KeyObject → the WebCrypto key openid-client signs with (the two CryptoKey typings differ only in newer usages).
  let cryptoKey: CryptoKey;
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'secp384r1') {
    alg = 'ES384';
    cryptoKey = key.toCryptoKey({ name: 'ECDSA', namedCurve: 'P-384' }, false, ['sign']) as unknown as CryptoKey;
  } else if (key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048) {
    alg = 'RS384';
    cryptoKey = key.toCryptoKey({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' }, false, ['sign']) as unknown as CryptoKey;
  } else return `privateKeyFile ${path} holds a key SMART does not sign with: use a P-384 EC key (ES384) or an RSA key of at least 2048 bits (RS384)`;
  const { kty, crv, x, y, n, e } = createPublicKey(key).export({ format: 'jwk' });
  const publicJwk = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JsonWebKey;
  return { kid, alg, key: cryptoKey, publicJwk: { ...publicJwk, kid, alg, use: 'sig' } };
}

/** Every setting carecircle reads, in the order the README lists them. */
export const CONFIG_KEYS = {
  nodeEnv: {
    env: 'NODE_ENV',
    doc: 'development or production; production refuses to start on development-only settings, naming every one at once (README, "Production checks").',
    schema: z.enum(['development', 'production', 'test']),
    default: 'development',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    doc: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
  },
  bindHost: {
    env: 'BIND_HOST',
    doc: 'Address every listener binds to. Use 0.0.0.0 behind a load balancer or in a container.',
    schema: z.string().min(1),
    default: '127.0.0.1',
  },
  sitePort: { env: 'SITE_PORT', doc: 'Port of the public site (directory, discovery, site API).', schema: port, default: '8080' },
  appPort: { env: 'APP_PORT', doc: 'Port of the application host (workspace, settings, workspace MCP).', schema: port, default: '8081' },
  authPort: { env: 'AUTH_PORT', doc: 'Port of the authorization host (sign-in, OAuth).', schema: port, default: '8082' },
  pipePort: { env: 'PIPE_PORT', doc: 'Port of the partner ingest host (signed events and agency calls).', schema: port, default: '8083' },
  apexPort: {
    env: 'APEX_PORT',
    doc: 'Port of the apex host, which answers every path with a permanent redirect to the same path and query on SITE_URL.',
    schema: port,
    default: '8079',
  },
  metricsPort: {
    env: 'METRICS_PORT',
    doc: 'Port of the metrics listener every role runs on BIND_HOST (GET /metrics, Prometheus text; never on the public listeners). Processes sharing a host each need their own; 0 picks a free one; off runs none.',
    schema: z.union([z.literal('off'), port]),
    default: '9464',
  },
  siteUrl: {
    env: 'SITE_URL',
    doc: 'Public URL of the site host ({base_url}). Its listener answers only this host or its own address (421 otherwise); https when NODE_ENV=production, except on localhost.',
    schema: url,
    default: 'http://localhost:8080',
  },
  appUrl: {
    env: 'APP_URL',
    doc: 'Public URL of the application host ({app_url}). Its listener answers only this host or its own address (421 otherwise); https when NODE_ENV=production, except on localhost.',
    schema: url,
    default: 'http://localhost:8081',
  },
  authUrl: {
    env: 'AUTH_URL',
    doc: 'Issuer URL of the authorization server ({auth_url}). Its listener answers only this host or its own address (421 otherwise); https when NODE_ENV=production, except on localhost.',
    schema: url,
    default: 'http://localhost:8082',
  },
  pipeUrl: {
    env: 'PIPE_URL',
    doc: 'Public URL of the partner ingest host ({pipe_url}). Its listener answers only this host or its own address (421 otherwise); https when NODE_ENV=production, except on localhost.',
    schema: url,
    default: 'http://localhost:8083',
  },
  apexUrl: {
    env: 'APEX_URL',
    doc: 'Public URL of the apex host, which redirects to SITE_URL. Its listener answers only this host or its own address (421 otherwise); https when NODE_ENV=production, except on localhost.',
    schema: url,
    default: 'http://localhost:8079',
  },
  inboxDomain: { env: 'INBOX_DOMAIN', doc: 'Mail domain of family inbox addresses.', schema: z.string().min(1), default: 'inbox.localhost' },
  trustProxy: {
    env: 'TRUST_PROXY',
    doc: "Trust X-Forwarded-For for the client address and X-Forwarded-Host, which must then also name the listener's public host (set when behind a proxy you control).",
    schema: bool,
    default: 'false',
  },
  idpIssuer: {
    env: 'IDP_ISSUER',
    doc: "Issuer of the identity provider's ID tokens. Empty: the development provider at AUTH_URL/dev; required when NODE_ENV=production.",
    schema: z.string(),
    default: '',
  },
  idpJwksUrl: {
    env: 'IDP_JWKS_URL',
    doc: "Key set of the identity provider. Empty: the development provider's; required (https) when NODE_ENV=production.",
    schema: z.string(),
    default: '',
  },
  idpAudience: { env: 'IDP_AUDIENCE', doc: 'Audience (client id) the ID tokens must carry.', schema: z.string().min(1), default: 'carecircle' },
  idpLoginUrl: {
    env: 'IDP_LOGIN_URL',
    doc: "Where people are sent to sign in (gets ?return_to=). Empty: the development provider's page; required (https) when NODE_ENV=production.",
    schema: z.string(),
    default: '',
  },
  devIdp: {
    env: 'DEV_IDP',
    doc: 'Serve the development identity provider (sign in as any email) on the auth host. Refused when NODE_ENV=production.',
    schema: bool,
    default: 'true',
  },
  sessionCookieDomain: {
    env: 'SESSION_COOKIE_DOMAIN',
    doc: 'Domain attribute of the cc_session cookie, so one sign-in covers site and app hosts (for example .carecircle.example). Empty: host-only.',
    schema: z.string(),
    default: '',
  },
  tenants: {
    env: 'TENANTS',
    doc: 'Tenants provisioned in this deployment, comma-separated: family, agency.',
    schema: list.pipe(z.array(z.enum(TENANTS))),
    default: 'family,agency',
  },
  mongoUrl: {
    env: 'MONGO_URL',
    doc: 'MongoDB connection string (database name in the path, default carecircle). Unset: a local MongoDB-compatible server is started under DATA_DIR.',
    schema: z
      .string()
      .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
      .optional(),
  },
  natsUrl: {
    env: 'NATS_URL',
    doc: 'NATS server URL(s), comma-separated. Unset: the in-process bus (single process only).',
    schema: z.string().min(1).optional(),
  },
  natsReplicas: {
    env: 'NATS_REPLICAS',
    doc: 'Copies a NATS cluster keeps of every stream and key-value bucket carecircle creates (the partner ingest stream, the rate limits): 3 on a cluster of three or more servers survives losing one; 1 on a single server. Raising it on a running deployment scales the existing streams up.',
    schema: z.coerce.number().int().min(1).max(5),
    default: '1',
  },
  allowEmbeddedInProduction: {
    env: 'ALLOW_EMBEDDED_IN_PRODUCTION',
    doc: 'Let NODE_ENV=production run without MONGO_URL (the embedded database under DATA_DIR) or without NATS_URL (the in-process bus): a single-process deployment, chosen on purpose. Off: production refuses to start without both.',
    schema: bool,
    default: 'false',
  },
  dataDir: { env: 'DATA_DIR', doc: 'Where the embedded run keeps its local database and tools.', schema: z.string().min(1), default: '.carecircle' },
  embeddedDbPort: {
    env: 'EMBEDDED_DB_PORT',
    doc: 'Port the embedded database (no MONGO_URL) asks for. When it is taken the database listens on a free one; either way the run records where in DATA_DIR/store.json, which the carecircle commands read.',
    schema: port,
    default: '27017',
  },
  busNamespace: {
    env: 'BUS_NAMESPACE',
    doc: 'Prefix for every bus subject, so deployments can share a NATS cluster. Empty: none.',
    schema: z.string().regex(/^([A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*)?$/, 'letters, digits, _ and - in dot-separated tokens'),
    default: '',
  },
  busTimeoutMs: { env: 'BUS_TIMEOUT_MS', doc: 'How long a gateway waits for one worker reply before trying again.', schema: positiveInt, default: '5000' },
  gatewayRetryWindowMs: {
    env: 'GATEWAY_RETRY_WINDOW_MS',
    doc: 'How long a gateway keeps retrying an idempotent request when no worker answers, before replying 503.',
    schema: positiveInt,
    default: '10000',
  },
  gatewayMaxAttempts: {
    env: 'GATEWAY_MAX_ATTEMPTS',
    doc: 'Most workers a gateway hands one request to when none answers in time (a worker that took it and died or stalled); then it replies 503. A worker that answered with a failure is never asked again.',
    schema: positiveInt,
    default: '2',
  },
  jsonMaxDepth: {
    env: 'JSON_MAX_DEPTH',
    doc: 'Deepest nesting of arrays and objects a gateway accepts in a JSON body; a deeper body gets 400 naming its depth and this limit before anything else runs.',
    schema: positiveInt,
    default: '64',
  },
  leanPath: {
    env: 'LEAN_PATH',
    doc: "Answer the public directory's POST /api/mcp with a plain request handler ahead of the site listener's middleware chain: the same checks and answers for less CPU. Off: it goes through the chain like every other request.",
    schema: bool,
    default: 'true',
  },
  mcpMaxBatch: {
    env: 'MCP_MAX_BATCH',
    doc: 'Most messages in one JSON-RPC batch on an MCP endpoint (413 -32600 above). Each message counts as one request against the rate limit.',
    schema: positiveInt,
    default: '50',
  },
  mcpElicitationTimeoutMs: {
    env: 'MCP_ELICITATION_TIMEOUT_MS',
    doc: 'How long the workspace MCP endpoint keeps a tools/call stream open for the person to answer a confirmation asked in their assistant (elicitation/create, 2025-era clients); then nothing is changed and the call says so.',
    schema: positiveInt,
    default: '300000',
  },
  maxReplyBytes: {
    env: 'MAX_REPLY_BYTES',
    doc: "Largest reply a worker sends, in bytes of JSON; a larger one is refused with 413 saying to send fewer items per batch or a smaller limit. A JSON-RPC batch stops at the first reply that passes it, without running the rest. The NATS server's max_payload applies as well, whichever is smaller.",
    schema: positiveInt,
    default: '1048576',
  },
  directoryThreads: {
    env: 'DIRECTORY_THREADS',
    doc: "Worker threads that answer the public directory's MCP endpoint in a single-process run (without NATS_URL), beside the main thread that serves everything else: the directory then uses a second core, and a burst of its traffic weighs less on the family's requests. auto: one where the machine has two or more cores, none on one; 0: the main thread answers it. With NATS, run more worker processes instead.",
    schema: z.union([z.literal('auto'), z.coerce.number().int().min(0).max(16)]),
    default: 'auto',
  },
  workerConcurrency: { env: 'WORKER_CONCURRENCY', doc: 'Requests one worker process handles at once.', schema: positiveInt, default: '64' },
  shutdownGraceMs: {
    env: 'SHUTDOWN_GRACE_MS',
    doc: 'How long shutdown waits for in-flight work before closing connections.',
    schema: positiveInt,
    default: '10000',
  },
  mcpAllowedOrigins: {
    env: 'MCP_ALLOWED_ORIGINS',
    doc: 'Browser origins allowed on the MCP endpoints, comma-separated, or * for any (refused when NODE_ENV=production). Empty: the site, app and apex origins.',
    schema: list,
    default: '',
  },
  smtpPort: { env: 'SMTP_PORT', doc: 'Port of the family-inbox SMTP listener (the smtp role).', schema: port, default: '2525' },
  inboxMaxBytes: {
    env: 'INBOX_MAX_BYTES',
    doc: 'Largest message the family inbox accepts, in bytes: advertised as SIZE in the EHLO reply, a larger MAIL FROM SIZE= gets 552, and a message counted past it while it arrives is discarded and gets 552 after its final dot.',
    schema: positiveInt,
    default: '10485760',
  },
  inboxMaxHeaderBytes: {
    env: 'INBOX_MAX_HEADER_BYTES',
    doc: 'Longest header section of a message to the family inbox, and of each MIME part in it, in bytes: a longer message header (or one that never ends) is discarded and gets 552 after its final dot, a longer part header 554.',
    schema: positiveInt,
    default: '65536',
  },
  inboxMaxRecipients: {
    env: 'INBOX_MAX_RECIPIENTS',
    doc: 'Recipients one message to the family inbox may have (at most 50); the next RCPT gets 452 and the sender sends the rest in another message.',
    schema: positiveInt.max(50),
    default: '20',
  },
  inboxMaxUnknownRecipients: {
    env: 'INBOX_MAX_UNKNOWN_RECIPIENTS',
    doc: 'Refused recipients (no such inbox, or another domain) one SMTP connection may try, each answered 550; the next is answered 421 and the connection closed, so addresses cannot be harvested.',
    schema: positiveInt,
    default: '3',
  },
  inboxConnectionsPerMin: {
    env: 'INBOX_CONNECTIONS_PER_MIN',
    doc: 'SMTP connections per minute per client address on the family inbox (421 with the wait above), shared by every smtp process.',
    schema: positiveInt,
    default: '30',
  },
  sandboxTtl: {
    env: 'SANDBOX_TTL',
    doc: 'How long an unclaimed or orphaned sandbox lives before it is purged: a number with s, m, h or d.',
    schema: duration,
    default: '7d',
  },
  sandboxRateCapacity: { env: 'SANDBOX_RATE_CAPACITY', doc: 'Sandbox creations a client address may make in a burst.', schema: positiveInt, default: '6' },
  sandboxRateRefill: {
    env: 'SANDBOX_RATE_REFILL',
    doc: 'Time to regain one sandbox creation for a client address: a number with s, m, h or d.',
    schema: duration,
    default: '10m',
  },
  rateMcpKeyPerMin: {
    env: 'RATE_MCP_KEY_PER_MIN',
    doc: 'Requests per minute per credential on the workspace MCP endpoint: a bucket of this size refilled evenly over the minute.',
    schema: positiveInt,
    default: '60',
  },
  rateMcpSessionPerMin: {
    env: 'RATE_MCP_SESSION_PER_MIN',
    doc: 'Requests per minute per person on the workspace MCP endpoint with the session cookie (signed-in pages), apart from the API-key and OAuth limit: a bucket of this size refilled evenly over the minute. Keep it at least MCP_MAX_BATCH: a batch of more messages than the bucket holds is refused with 413.',
    schema: positiveInt,
    default: '120',
  },
  rateDirectoryMcpPerMin: {
    env: 'RATE_DIRECTORY_MCP_PER_MIN',
    doc: 'Requests per minute per client address on the public directory MCP endpoint.',
    schema: positiveInt,
    default: '120',
  },
  rateSandboxMcpPerMin: {
    env: 'RATE_SANDBOX_MCP_PER_MIN',
    doc: 'Requests per minute per client address on the sandbox MCP endpoint (APP_URL/api/mcp/public), apart from the sandbox creations SANDBOX_RATE_CAPACITY and SANDBOX_RATE_REFILL limit.',
    schema: positiveInt,
    default: '120',
  },
  rateSessionPerMin: {
    env: 'RATE_SESSION_PER_MIN',
    doc: 'Sign-ins (POST /api/auth/session on the site and app hosts, and sign-ins an identity provider posts to APP_URL/auth/callback) per minute per client address.',
    schema: positiveInt,
    default: '30',
  },
  rateNewsletterPerHour: { env: 'RATE_NEWSLETTER_PER_HOUR', doc: 'Newsletter sign-ups per hour per client address.', schema: positiveInt, default: '5' },
  rateCommunityWritesPerMin: {
    env: 'RATE_COMMUNITY_WRITES_PER_MIN',
    doc: 'Community writes (join, leave, thread, comment) per minute per signed-in user.',
    schema: positiveInt,
    default: '30',
  },
  rateFamilyShareLinkPerHour: {
    env: 'RATE_FAMILY_SHARE_LINK_PER_HOUR',
    doc: 'Link codes a signed-in person may enter per hour (POST APP_URL/api/family-share/link): a code has 60 bits, the limit keeps typos from turning into noise.',
    schema: positiveInt,
    default: '10',
  },
  rateIngestPerMin: {
    env: 'RATE_INGEST_PER_MIN',
    doc: 'Signed ingest requests per minute per partner institution (429 with Retry-After above).',
    schema: positiveInt,
    default: '1200',
  },
  rateOauthRegisterPerHour: {
    env: 'RATE_OAUTH_REGISTER_PER_HOUR',
    doc: 'OAuth client registrations (POST AUTH_URL/oauth/register) per hour per client address.',
    schema: positiveInt,
    default: '10',
  },
  oauthKeyRotation: {
    env: 'OAUTH_KEY_ROTATION',
    doc: 'How long one key signs OAuth access tokens before the next takes over (at least 1h, the token lifetime): a number with s, m, h or d. The next key is published one period early and the previous one stays published one period after. Keys are stored sealed with DATA_KEY.',
    schema: duration.pipe(z.number().min(3_600_000, 'must be at least 1h, the access-token lifetime')),
    default: '30d',
  },
  oauthClientUnused: {
    env: 'OAUTH_CLIENT_UNUSED',
    doc: 'A registered OAuth client that holds no grant is deleted this long after it registered: a number with s, m, h or d.',
    schema: duration,
    default: '30d',
  },
  oauthClientMetadataTimeoutMs: {
    env: 'OAUTH_CLIENT_METADATA_TIMEOUT_MS',
    doc: 'How long the authorization server waits for a Client ID Metadata Document (an https URL used as client_id), in milliseconds, from connecting to the last byte (100-2500).',
    schema: z.coerce.number().int().min(100).max(2500),
    default: '2000',
  },
  oauthClientMetadataPrivateHosts: {
    env: 'OAUTH_CLIENT_METADATA_PRIVATE_HOSTS',
    doc: 'Fetch Client ID Metadata Documents from loopback, private and link-local addresses too (a client under development on this machine or network). Off: such addresses are refused before connecting. Refused when NODE_ENV=production.',
    schema: bool,
    default: 'false',
  },
  oauthClientMetadataCa: {
    env: 'OAUTH_CLIENT_METADATA_CA',
    doc: 'PEM file of certificates trusted, besides the public roots, when fetching Client ID Metadata Documents (a development client with a self-signed certificate). Empty: public roots only. Refused when NODE_ENV=production.',
    schema: z.string(),
    default: '',
  },
  dataKey: {
    env: 'DATA_KEY',
    doc: 'Key that encrypts partner signing secrets and the OAuth signing keys at rest (AES-256-GCM): 32 bytes as base64 or 64 hex characters (openssl rand -base64 32). Unset: one is generated once in DATA_DIR/data.key. NODE_ENV=production refuses it unset or one byte value repeated (all zeros).',
    schema: z
      .string()
      .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'must be 32 bytes: base64 or 64 hex characters')
      .optional(),
  },
  vapidPublicKey: {
    env: 'VAPID_PUBLIC_KEY',
    doc: 'Public half of the VAPID key pair that signs web push messages (RFC 8292): the uncompressed P-256 point, 65 bytes as base64url (npx web-push generate-vapid-keys). Browsers tie each push subscription to it: changing it ends every subscription. Unset (with VAPID_PRIVATE_KEY): a pair is generated once in DATA_DIR/vapid.json. NODE_ENV=production refuses it unset.',
    schema: z
      .string()
      .regex(/^[A-Za-z0-9_-]{87}$/, 'must be 65 bytes as base64url without padding (87 characters)')
      .optional(),
  },
  vapidPrivateKey: {
    env: 'VAPID_PRIVATE_KEY',
    doc: 'Private half of the VAPID key pair: the P-256 scalar, 32 bytes as base64url. Set both or neither; it must match VAPID_PUBLIC_KEY. Never logged.',
    secret: true,
    schema: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be 32 bytes as base64url without padding (43 characters)')
      .optional(),
  },
  vapidSubject: {
    env: 'VAPID_SUBJECT',
    doc: 'How a push service reaches the operator, sent in every VAPID token: a mailto: address or an https: URL. Empty: mailto: with the address in MAIL_FROM; required when NODE_ENV=production.',
    schema: z.string().regex(/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)?$/, 'must be a mailto: address or an https: URL'),
    default: '',
  },
  fhirIssuers: {
    env: 'FHIR_ISSUERS',
    doc: 'Health-system portals a family can connect a loved one to (SMART on FHIR, docs/portal.md): a JSON array of {"name", "url" (the FHIR base URL), "clientId", optional "clientSecret" (then a confidential client), optional "privateKeyFile" and "keyId" (then a confidential client with private_key_jwt: the path of a P-384 EC or RSA private key as PEM or JWK, read at start; its public half is served at APP_URL/.well-known/portal-jwks.json)}. Empty: none listed; a family may still enter a FHIR base URL, which uses FHIR_CLIENT_ID. Never logged: it may hold client secrets.',
    secret: true,
    schema: z
      .string()
      .transform((s, ctx) => {
        if (!s.trim()) return [];
        try {
          return JSON.parse(s) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {"name", "url", "clientId"}' });
          return z.NEVER;
        }
      })
      .pipe(
        z
          .array(
            z.strictObject({
              name: z.string().trim().min(1).max(100),
              url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')),
              clientId: z.string().min(1).max(500),
              clientSecret: z.string().min(1).max(500).optional(),
              privateKeyFile: z.string().min(1).max(1000).optional(),
              keyId: z
                .string()
                .regex(/^[\w.:-]{1,200}$/, 'keyId: letters, digits and . _ : - only')
                .optional(),
            }),
          )
          .max(200)
          .transform((issuers, ctx) =>
            issuers.map(({ privateKeyFile, keyId, ...issuer }) => {
              if (!privateKeyFile && !keyId) return issuer;
              if (!privateKeyFile || !keyId) {
                ctx.addIssue({ code: 'custom', message: `${issuer.name}: set both "privateKeyFile" and "keyId", or neither` });
                return issuer;
              }
              const loaded = portalClientKey(privateKeyFile, keyId);
              if (typeof loaded === 'string') {
                ctx.addIssue({ code: 'custom', message: `${issuer.name}: ${loaded}` });
                return issuer;
              }
              return { ...issuer, signingKey: loaded };
            }),
          ),
      ),
    default: '',
  },
  fhirClientId: {
    env: 'FHIR_CLIENT_ID',
    doc: 'The client id carecircle signs in with at a portal a family enters by its FHIR base URL (one not in FHIR_ISSUERS), as a public client. Empty: only the listed portals can be connected.',
    schema: z.string().max(500),
    default: '',
  },
  portalSyncInterval: {
    env: 'PORTAL_SYNC_INTERVAL',
    doc: 'How often the cron leader syncs each connected health-system portal (docs/portal.md), asking only for what changed: a number with s, m, h or d. A connection that needs the family to sign in again is left until they do.',
    schema: duration.pipe(z.number().min(60_000, 'must be at least 1m')),
    default: '4h',
  },
  ingestDedupeDays: {
    env: 'INGEST_DEDUPE_DAYS',
    doc: 'Days a partner event id (or body hash) is remembered for de-duplication; older occurred_at values are refused. At least 30.',
    schema: z.coerce.number().int().min(30),
    default: '30',
  },
  ingestAckWaitMs: {
    env: 'INGEST_ACK_WAIT_MS',
    doc: 'How long JetStream waits for a worker to store an ingest event before delivering it to another worker.',
    schema: positiveInt,
    default: '30000',
  },
  ingestMaxDeliveries: {
    env: 'INGEST_MAX_DELIVERIES',
    doc: 'Attempts to store one accepted ingest event that the database refuses (not counting outages, which are retried until it is back) before it is moved to the dead-letter store (`carecircle deadletters`). Attempts are about 1, 2, 4, 8… s apart.',
    schema: positiveInt.max(100),
    default: '5',
  },
  newsletterSecret: {
    env: 'NEWSLETTER_SECRET',
    doc: 'Key that signs newsletter confirm and unsubscribe links (HMAC-SHA256). Empty: a fixed development key. NODE_ENV=production needs at least 32 characters (openssl rand -base64 32).',
    schema: z.string(),
    default: '',
  },
  alertsSecret: {
    env: 'ALERTS_SECRET',
    doc: 'Key that signs the one-click unsubscribe links of alert and digest mail (HS256). Empty: a key derived from NEWSLETTER_SECRET (which production requires), so one secret is enough.',
    schema: z.string(),
    default: '',
  },
  alertsOnStore: {
    env: 'ALERTS_ON_STORE',
    doc: 'Workers read new care records for alerts as soon as they are stored (told on the bus), not only at the minute run. Off: the minute run alone decides them.',
    schema: bool,
    default: 'on',
  },
  cronLease: {
    env: 'CRON_LEASE',
    doc: "How long the cron leader's lease lasts unrenewed (every cron process asks for it each third of this; the leader renews it): after the leader dies, the scheduled jobs wait about this long before another cron process takes them over. A number with s, m, h or d.",
    schema: duration.pipe(z.number().min(10_000, 'must be at least 10s')),
    default: '5m',
  },
  recaptchaSecret: {
    env: 'RECAPTCHA_SECRET',
    doc: 'reCAPTCHA secret; when set, newsletter sign-ups need a recaptchaToken that RECAPTCHA_VERIFY_URL accepts. Empty: no reCAPTCHA.',
    schema: z.string(),
    default: '',
  },
  recaptchaVerifyUrl: {
    env: 'RECAPTCHA_VERIFY_URL',
    doc: 'Where reCAPTCHA tokens are verified (siteverify).',
    schema: url,
    default: 'https://www.google.com/recaptcha/api/siteverify',
  },
  recaptchaMinScore: {
    env: 'RECAPTCHA_MIN_SCORE',
    doc: 'Lowest reCAPTCHA v3 score accepted (0-1); tokens without a score only need success.',
    schema: z.coerce.number().min(0).max(1),
    default: '0.5',
  },
  smtpUrl: {
    env: 'SMTP_URL',
    doc: 'SMTP server for outgoing mail (smtp:// or smtps://, credentials in the URL; query parameters are nodemailer options, such as requireTLS=true to insist on STARTTLS; alert mail keeps up to five connections open unless pool=false). NODE_ENV=production refuses a password over smtp:// to a host other than this machine unless requireTLS=true. Set: newsletter sign-ups are double opt-in by a confirmation mail, and family invitations are mailed. Empty: no mail; sign-ups are active at once, and invitations are links to copy.',
    schema: z.string().regex(/^(smtps?:\/\/.+)?$/, 'must be empty or start with smtp:// or smtps://'),
    default: '',
  },
  mailFrom: { env: 'MAIL_FROM', doc: 'From address of outgoing mail.', schema: z.string().min(3), default: 'carecircle <no-reply@localhost>' },
  opsNotify: { env: 'OPS_NOTIFY', doc: 'Emit best-effort internal ops notifications on the bus.', schema: bool, default: 'true' },
} satisfies Record<string, ConfigKey>;

type Keys = typeof CONFIG_KEYS;
export type Config = { readonly [K in keyof Keys]: z.output<Keys[K]['schema']> };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Plain http is fine for this machine's own names, nowhere else in production. */
const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(hostname) || hostname === '[::1]';

/** 32 random characters of base64 are 192 bits; `openssl rand -base64 32` gives 44. */
const MIN_NEWSLETTER_SECRET = 32;

/** What a public URL holds beyond scheme, credentials, host and port, read from the text as given
 *  (a bare "?" or "#" parses to an empty query or fragment, yet still breaks every joined link). */
function beyondOrigin(value: string): string[] {
  const rest = value.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const path = rest.replace(/[?#].*$/s, '');
  const query = rest.slice(path.length).replace(/#.*$/s, '');
  return [path !== '' && path !== '/' && 'a path', query && 'a query', rest.includes('#') && 'a fragment'].filter((x): x is string => Boolean(x));
}

/** A DATA_KEY (already known to be 32 bytes as hex or base64) whose bytes are all the same value. */
function isDegenerateKey(text: string): boolean {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.every((b) => b === bytes[0]);
}

/**
 * Why SMTP_URL would send its password in clear, if it would. nodemailer sends AUTH over smtp://
 * in clear when the server offers no STARTTLS, unless the URL says `requireTLS=true` (and not
 * `ignoreTLS=true`, which turns STARTTLS off). smtps:// is TLS from the start; a loopback relay
 * never leaves the machine. The URL itself is never repeated: it holds the password.
 */
function smtpProblem(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url) return 'is not a URL; use smtps://user:password@host:465';
  if (url.protocol !== 'smtp:' || !url.password || isLoopbackHost(url.hostname)) return undefined;
  if (url.searchParams.get('requireTLS') === 'true' && url.searchParams.get('ignoreTLS') !== 'true') return undefined;
  return `sends a password over plain smtp:// to ${url.hostname}: a relay without STARTTLS would receive it in clear; allowed: smtps://user:password@host:465, or smtp://…:587?requireTLS=true to insist on STARTTLS`;
}

/**
 * What production refuses, one line per variable at fault. `parsed` holds the keys that parsed:
 * a key that did not is already reported and not judged again.
 */
function productionProblems(parsed: Partial<Config>, failed: ReadonlySet<string>): string[] {
  if (parsed.nodeEnv !== 'production') return [];
  const judged = (name: keyof Config) => !failed.has(name);
  const problems: string[] = [];
  if (judged('devIdp') && parsed.devIdp)
    problems.push(
      'DEV_IDP=true: the development identity provider signs anyone in; set DEV_IDP=false and IDP_ISSUER, IDP_JWKS_URL and IDP_LOGIN_URL for production',
    );
  const idp = [
    ['idpIssuer', 'IDP_ISSUER', 'the issuer your identity provider puts in its ID tokens'],
    ['idpJwksUrl', 'IDP_JWKS_URL', 'the URL of its signing keys'],
    ['idpLoginUrl', 'IDP_LOGIN_URL', 'the page where people sign in'],
  ] as const;
  for (const [name, env, what] of idp)
    if (judged(name) && !parsed[name]) problems.push(`${env} is empty: production needs your identity provider; set it to ${what}`);
  const urls = [
    ['siteUrl', 'SITE_URL'],
    ['appUrl', 'APP_URL'],
    ['authUrl', 'AUTH_URL'],
    ['pipeUrl', 'PIPE_URL'],
    ['apexUrl', 'APEX_URL'],
    ['idpJwksUrl', 'IDP_JWKS_URL'],
    ['idpLoginUrl', 'IDP_LOGIN_URL'],
    ['recaptchaVerifyUrl', 'RECAPTCHA_VERIFY_URL'],
  ] as const;
  const publicUrls = new Set<string>(['siteUrl', 'appUrl', 'authUrl', 'pipeUrl', 'apexUrl']);
  for (const [name, env] of urls) {
    const value = parsed[name];
    if (!judged(name) || !value) continue;
    const url = URL.parse(value);
    // A user name or password in a URL is never repeated in the message: it may be a secret.
    const shown = JSON.stringify(url?.username || url?.password ? value.replace(/\/\/[^/?#]*@/, '//…@') : value);
    if (!url || !/^https?:$/.test(url.protocol)) problems.push(`${env}=${shown} is not a URL; use https://…`);
    else if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
      problems.push(`${env}=${shown} is not https: sign-in, tokens and care data would cross the network in clear; use https (plain http only for localhost)`);
    if (!url || !publicUrls.has(name)) continue;
    // Public URLs are printed in pages, mails and discovery documents, and every link is the URL
    // followed by a path: only a scheme, a host and a port make sense there.
    if (url.username || url.password)
      problems.push(
        `${env} carries a user name or password (user:password@), which every page, mail and discovery document would show; allowed: scheme, host and port only, such as https://carecircle.example`,
      );
    const extras = beyondOrigin(value);
    if (extras.length)
      problems.push(
        `${env}=${shown} has ${extras.join(' and ')}: each host is served from its root and links are built by appending paths to this URL; allowed: scheme, host and port only, such as https://carecircle.example`,
      );
  }
  if (judged('oauthClientMetadataPrivateHosts') && parsed.oauthClientMetadataPrivateHosts)
    problems.push(
      'OAUTH_CLIENT_METADATA_PRIVATE_HOSTS=true: the authorization server would fetch client documents from private addresses (a way into your network); remove it for production',
    );
  if (judged('oauthClientMetadataCa') && parsed.oauthClientMetadataCa)
    problems.push('OAUTH_CLIENT_METADATA_CA is set: client documents must carry certificates from the public roots in production; remove it');
  if (judged('newsletterSecret') && !parsed.newsletterSecret)
    problems.push('NEWSLETTER_SECRET is empty: newsletter links would be signed with the public development key; set a long random value');
  else if (judged('newsletterSecret') && parsed.newsletterSecret!.length < MIN_NEWSLETTER_SECRET)
    problems.push(
      `NEWSLETTER_SECRET is too short (${parsed.newsletterSecret!.length} of at least ${MIN_NEWSLETTER_SECRET} characters): a short key can be guessed from one signed link; set at least ${MIN_NEWSLETTER_SECRET} random characters, such as $(openssl rand -base64 32)`,
    );
  if (judged('dataKey') && !parsed.dataKey)
    problems.push('DATA_KEY is unset: partner secrets need an encryption key kept outside the database; set DATA_KEY=$(openssl rand -base64 32)');
  else if (judged('dataKey') && isDegenerateKey(parsed.dataKey!))
    problems.push('DATA_KEY is one byte value repeated (all zeros, say): a placeholder, not a key; set 32 random bytes, DATA_KEY=$(openssl rand -base64 32)');
  if (judged('vapidPublicKey') && judged('vapidPrivateKey') && !parsed.vapidPublicKey && !parsed.vapidPrivateKey)
    problems.push(
      'VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are unset: web push needs a key pair kept outside the data directory, the same on every process; set both from npx web-push generate-vapid-keys',
    );
  if (judged('vapidSubject') && !parsed.vapidSubject)
    problems.push('VAPID_SUBJECT is empty: push services need a way to reach the operator; set it to mailto:ops@your-domain or an https: URL');
  if (judged('mcpAllowedOrigins') && parsed.mcpAllowedOrigins?.includes('*'))
    problems.push(
      "MCP_ALLOWED_ORIGINS=*: any web page could call the MCP endpoints from its visitors' browsers, and the Origin check against DNS rebinding would be off; allowed: a comma-separated list of origins such as https://app.carecircle.example, or empty for the site, app and apex origins",
    );
  if (judged('smtpUrl') && parsed.smtpUrl) {
    const problem = smtpProblem(parsed.smtpUrl);
    if (problem) problems.push(`SMTP_URL ${problem}`);
  }
  if (judged('allowEmbeddedInProduction') && !parsed.allowEmbeddedInProduction) {
    if (judged('mongoUrl') && !parsed.mongoUrl)
      problems.push(
        'MONGO_URL is unset: production would run on the embedded database under DATA_DIR; set MONGO_URL, or ALLOW_EMBEDDED_IN_PRODUCTION=true for a single-process deployment',
      );
    if (judged('natsUrl') && !parsed.natsUrl)
      problems.push(
        'NATS_URL is unset: production would run on the in-process bus (one process, nothing shared); set NATS_URL, or ALLOW_EMBEDDED_IN_PRODUCTION=true for a single-process deployment',
      );
  }
  return problems;
}

/**
 * A VAPID pair given in part, or whose halves do not belong together, in any environment: a
 * mismatched pair signs tokens that every push service refuses. The private key is never repeated.
 */
function vapidPairProblems(parsed: Partial<Config>, failed: ReadonlySet<string>): string[] {
  if (failed.has('vapidPublicKey') || failed.has('vapidPrivateKey')) return [];
  const { vapidPublicKey: pub, vapidPrivateKey: priv } = parsed;
  if (!pub && !priv) return [];
  if (!pub) return ['VAPID_PUBLIC_KEY is unset while VAPID_PRIVATE_KEY is set: set both halves of the pair, or neither'];
  if (!priv) return ['VAPID_PRIVATE_KEY is unset while VAPID_PUBLIC_KEY is set: set both halves of the pair, or neither'];
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(priv, 'base64url'));
    if (ecdh.getPublicKey('base64url') === pub) return [];
  } catch {
    return ['VAPID_PRIVATE_KEY is not a P-256 private key: generate a pair with npx web-push generate-vapid-keys'];
  }
  return ['VAPID_PUBLIC_KEY does not belong to VAPID_PRIVATE_KEY: set both from the same pair (npx web-push generate-vapid-keys)'];
}

/** Parse the environment once; every bad value, and everything production refuses, stops start-up in one message naming each variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  const failed = new Set<string>();
  for (const [name, key] of Object.entries(CONFIG_KEYS) as [string, ConfigKey][]) {
    const raw = env[key.env];
    const value = raw === undefined || raw === '' ? key.default : raw;
    const parsed = key.schema.safeParse(value);
    if (parsed.success) out[name] = parsed.data;
    else {
      failed.add(name);
      const shown = key.secret ? '' : `=${JSON.stringify(raw ?? '')}`;
      // A secret's value is not repeated, so its issues say where in it they are.
      const where = (i: z.core.$ZodIssue) => (key.secret && i.path.length ? `${i.path.join('.')}: ` : '');
      problems.push(`${key.env}${shown}: ${parsed.error.issues.map((i) => `${where(i)}${i.message}`).join('; ')}`);
    }
  }
  problems.push(...vapidPairProblems(out as Partial<Config>, failed));
  problems.push(...productionProblems(out as Partial<Config>, failed));
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return Object.freeze(out) as Config;
}

/** The README's configuration table, generated from the schema (a test keeps them equal). */
export function configMarkdownTable(): string {
  const rows = Object.values(CONFIG_KEYS as Record<string, ConfigKey>).map(
    (k) => `| \`${k.env}\` | ${k.default === undefined ? '(unset)' : k.default === '' ? '(empty)' : `\`${k.default}\``} | ${k.doc} |`,
  );
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

export interface IdentityProviderSettings {
  issuer: string;
  jwksUrl: string;
  audience: string;
  loginUrl: string;
  development: boolean;
}

/** The identity provider to trust: configured, or the development one on the auth host. */
export function identityProvider(config: Config): IdentityProviderSettings {
  const dev = `${config.authUrl}/dev`;
  return {
    issuer: config.idpIssuer || dev,
    jwksUrl: config.idpJwksUrl || `${dev}/jwks.json`,
    audience: config.idpAudience,
    loginUrl: config.idpLoginUrl || `${dev}/login`,
    development: config.devIdp && !config.idpIssuer,
  };
}

/** Origins allowed to call the MCP endpoints from a browser. */
export function allowedOrigins(config: Config): string[] {
  if (config.mcpAllowedOrigins.length) return config.mcpAllowedOrigins;
  return [config.siteUrl, config.appUrl, config.apexUrl].map((u) => new URL(u).origin);
}
