import { createECDH } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allowedOrigins, ConfigError, configMarkdownTable, loadConfig } from './config.js';

/** A fixed VAPID pair: the private scalar 1, 8, 15, …, and its public point. */
const vapidEcdh = createECDH('prime256v1');
vapidEcdh.setPrivateKey(Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 1)));
const VAPID = { VAPID_PUBLIC_KEY: vapidEcdh.getPublicKey('base64url'), VAPID_PRIVATE_KEY: vapidEcdh.getPrivateKey('base64url') };

describe('config', () => {
  it('when nothing is set, then every default parses (npm start needs no configuration)', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ sitePort: 8080, siteUrl: 'http://localhost:8080', mongoUrl: undefined, natsUrl: undefined, rateDirectoryMcpPerMin: 120 });
    expect(allowedOrigins(config)).toContain('http://localhost:8080');
  });

  it('when values are bad, then start-up stops naming each variable', () => {
    const bad = () => loadConfig({ SITE_PORT: 'eighty', MONGO_URL: 'postgres://x', TRUST_PROXY: 'maybe' });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/SITE_PORT="eighty"/);
    expect(bad).toThrow(/MONGO_URL="postgres:\/\/x": must start with mongodb:\/\//);
    expect(bad).toThrow(/TRUST_PROXY="maybe"/);
  });

  it('when URLs end with a slash, then it is removed so joined paths stay clean', () => {
    expect(loadConfig({ SITE_URL: 'https://carecircle.example/' }).siteUrl).toBe('https://carecircle.example');
  });

  it('the README configuration table is the one generated from the schema', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(configMarkdownTable());
  });

  describe('production checks', () => {
    const ready = {
      NODE_ENV: 'production',
      DEV_IDP: 'false',
      IDP_ISSUER: 'https://id.carecircle.example',
      IDP_JWKS_URL: 'https://id.carecircle.example/jwks.json',
      IDP_LOGIN_URL: 'https://id.carecircle.example/login',
      SITE_URL: 'https://carecircle.example',
      APP_URL: 'https://app.carecircle.example',
      AUTH_URL: 'https://auth.carecircle.example',
      PIPE_URL: 'https://pipe.carecircle.example',
      APEX_URL: 'https://www.carecircle.example',
      NEWSLETTER_SECRET: 'n'.repeat(40),
      DATA_KEY: Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 1)).toString('base64'),
      MONGO_URL: 'mongodb://db.internal/carecircle',
      NATS_URL: 'nats://bus.internal:4222',
      ...VAPID,
      VAPID_SUBJECT: 'mailto:ops@carecircle.example',
    };
    const problemsOf = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message
          .split('\n')
          .slice(1)
          .map((l) => l.trim());
      }
    };

    it('when production is configured completely, then it starts', () => {
      expect(problemsOf(ready)).toEqual([]);
      expect(problemsOf({ ...ready, SITE_URL: 'http://localhost:8080', AUTH_URL: 'http://127.0.0.1:8082' })).toEqual([]);
    });

    it('when production runs on every development default, then one error names each variable at once', () => {
      const problems = problemsOf({ NODE_ENV: 'production' });
      for (const name of [
        'DEV_IDP',
        'IDP_ISSUER',
        'IDP_JWKS_URL',
        'IDP_LOGIN_URL',
        'NEWSLETTER_SECRET',
        'DATA_KEY',
        'VAPID_PUBLIC_KEY',
        'VAPID_SUBJECT',
        'MONGO_URL',
        'NATS_URL',
      ])
        expect(
          problems.filter((p) => p.startsWith(name)),
          name,
        ).toHaveLength(1);
      expect(problems).toHaveLength(10);
    });

    it('when production has bad values and refused settings together, then both are in the one message', () => {
      const problems = problemsOf({ ...ready, SITE_PORT: 'eighty', DATA_KEY: '', IDP_ISSUER: '' });
      expect(problems).toEqual([
        expect.stringMatching(/^SITE_PORT="eighty"/),
        expect.stringMatching(/^IDP_ISSUER is empty/),
        expect.stringMatching(/^DATA_KEY is unset/),
      ]);
    });

    it('when a public URL is plain http on a real host, then production refuses it naming the variable; localhost is allowed', () => {
      const problems = problemsOf({
        ...ready,
        SITE_URL: 'http://carecircle.example',
        PIPE_URL: 'http://10.0.0.5:8083',
        IDP_JWKS_URL: 'http://id.example/jwks.json',
        APP_URL: 'http://app.localhost:8081',
      });
      expect(problems).toEqual([
        expect.stringMatching(/^SITE_URL="http:\/\/carecircle.example" is not https/),
        expect.stringMatching(/^PIPE_URL="http:\/\/10.0.0.5:8083" is not https/),
        expect.stringMatching(/^IDP_JWKS_URL="http:\/\/id.example\/jwks.json" is not https/),
      ]);
    });

    it('when production has no MONGO_URL or NATS_URL, then it starts only with ALLOW_EMBEDDED_IN_PRODUCTION=true', () => {
      const { MONGO_URL: _m, NATS_URL: _n, ...embedded } = ready;
      expect(problemsOf(embedded)).toEqual([
        expect.stringMatching(/^MONGO_URL is unset: .*ALLOW_EMBEDDED_IN_PRODUCTION=true/),
        expect.stringMatching(/^NATS_URL is unset: .*ALLOW_EMBEDDED_IN_PRODUCTION=true/),
      ]);
      expect(problemsOf({ ...embedded, ALLOW_EMBEDDED_IN_PRODUCTION: 'true' })).toEqual([]);
    });

    it('when a secret is short, a key is one byte repeated or MCP origins are a wildcard, then production refuses each, naming the variable and what is allowed, never repeating the secret', () => {
      const problems = problemsOf({
        ...ready,
        NEWSLETTER_SECRET: 'x',
        DATA_KEY: Buffer.alloc(32).toString('base64'),
        MCP_ALLOWED_ORIGINS: 'https://app.carecircle.example,*',
      });
      expect(problems).toEqual([
        expect.stringMatching(/^NEWSLETTER_SECRET is too short \(1 of at least 32 characters\): .*set at least 32 random characters/),
        expect.stringMatching(/^DATA_KEY is one byte value repeated .*32 random bytes/),
        expect.stringMatching(/^MCP_ALLOWED_ORIGINS=\*: .*allowed: a comma-separated list of origins/),
      ]);
      expect(problemsOf({ ...ready, DATA_KEY: 'f'.repeat(64) })).toEqual([expect.stringMatching(/^DATA_KEY is one byte value repeated/)]);
      expect(problemsOf({ ...ready, NEWSLETTER_SECRET: 's'.repeat(31) })).toEqual([expect.stringMatching(/^NEWSLETTER_SECRET is too short \(31 of/)]);
      expect(problemsOf({ ...ready, NEWSLETTER_SECRET: 's'.repeat(32), MCP_ALLOWED_ORIGINS: 'https://app.carecircle.example' })).toEqual([]);
    });

    it('when a public URL carries credentials, a path, a query or a fragment, then production refuses it naming the variable, without repeating the credentials', () => {
      const problems = problemsOf({
        ...ready,
        SITE_URL: 'https://admin:hunter2@carecircle.example',
        APP_URL: 'https://carecircle.example/app',
        AUTH_URL: 'https://auth.carecircle.example?tenant=a',
        PIPE_URL: 'https://pipe.carecircle.example#x',
        APEX_URL: 'https://www.carecircle.example/?',
      });
      expect(problems).toEqual([
        expect.stringMatching(/^SITE_URL carries a user name or password .*allowed: scheme, host and port only/),
        expect.stringMatching(/^APP_URL="https:\/\/carecircle.example\/app" has a path: .*allowed: scheme, host and port only/),
        expect.stringMatching(/^AUTH_URL="[^"]+" has a query: /),
        expect.stringMatching(/^PIPE_URL="[^"]+" has a fragment: /),
        expect.stringMatching(/^APEX_URL="[^"]+" has a query: /),
      ]);
      expect(problems.join('\n')).not.toContain('hunter2');
      expect(problemsOf({ ...ready, SITE_URL: 'https://carecircle.example:8443/', APP_URL: 'http://localhost:8081' })).toEqual([]);
    });

    it('when SMTP_URL sends a password over plain smtp:// to another host, then production refuses it unless requireTLS=true insists on STARTTLS', () => {
      const refused = problemsOf({ ...ready, SMTP_URL: 'smtp://mailer:hunter2@smtp.example:587' });
      expect(refused).toEqual([
        expect.stringMatching(/^SMTP_URL sends a password over plain smtp:\/\/ to smtp.example: .*allowed: smtps:\/\/.*requireTLS=true/),
      ]);
      expect(refused.join('\n')).not.toContain('hunter2');
      expect(problemsOf({ ...ready, SMTP_URL: 'smtp://mailer:hunter2@smtp.example:587?requireTLS=true&ignoreTLS=true' })).toHaveLength(1);
      for (const allowed of [
        'smtps://mailer:hunter2@smtp.example:465',
        'smtp://mailer:hunter2@smtp.example:587?requireTLS=true',
        'smtp://mailer:hunter2@127.0.0.1:2525',
        'smtp://relay.internal:25',
      ])
        expect(problemsOf({ ...ready, SMTP_URL: allowed }), allowed).toEqual([]);
    });

    it('when a VAPID pair is given in part or its halves do not match, then start-up is refused in any environment, never repeating the private key', () => {
      const other = createECDH('prime256v1');
      other.generateKeys();
      expect(problemsOf({ VAPID_PUBLIC_KEY: VAPID.VAPID_PUBLIC_KEY })).toEqual([
        'VAPID_PRIVATE_KEY is unset while VAPID_PUBLIC_KEY is set: set both halves of the pair, or neither',
      ]);
      expect(problemsOf({ VAPID_PRIVATE_KEY: VAPID.VAPID_PRIVATE_KEY })).toEqual([
        'VAPID_PUBLIC_KEY is unset while VAPID_PRIVATE_KEY is set: set both halves of the pair, or neither',
      ]);
      const mismatched = problemsOf({ VAPID_PUBLIC_KEY: other.getPublicKey('base64url'), VAPID_PRIVATE_KEY: VAPID.VAPID_PRIVATE_KEY });
      expect(mismatched).toEqual(['VAPID_PUBLIC_KEY does not belong to VAPID_PRIVATE_KEY: set both from the same pair (npx web-push generate-vapid-keys)']);
      expect(problemsOf({ VAPID_PRIVATE_KEY: 'short', VAPID_SUBJECT: 'ops@example.org' })).toEqual([
        'VAPID_PRIVATE_KEY: must be 32 bytes as base64url without padding (43 characters)',
        'VAPID_SUBJECT="ops@example.org": must be a mailto: address or an https: URL',
      ]);
      expect(problemsOf(VAPID)).toEqual([]);
      expect(JSON.stringify(problemsOf({ ...ready, VAPID_PUBLIC_KEY: '' }))).not.toContain(VAPID.VAPID_PRIVATE_KEY);
    });

    it('when NODE_ENV is not production, then none of this applies', () => {
      expect(
        problemsOf({
          SITE_URL: 'http://carecircle.example',
          NEWSLETTER_SECRET: 'x',
          DATA_KEY: 'f'.repeat(64),
          MCP_ALLOWED_ORIGINS: '*',
          SMTP_URL: 'smtp://u:p@smtp.example',
        }),
      ).toEqual([]);
    });
  });
});
