import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allowedOrigins, ConfigError, configMarkdownTable, loadConfig } from './config.js';

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
      DATA_KEY: Buffer.alloc(32, 7).toString('base64'),
      MONGO_URL: 'mongodb://db.internal/carecircle',
      NATS_URL: 'nats://bus.internal:4222',
    };
    const problemsOf = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message.split('\n').slice(1).map((l) => l.trim());
      }
    };

    it('when production is configured completely, then it starts', () => {
      expect(problemsOf(ready)).toEqual([]);
      expect(problemsOf({ ...ready, SITE_URL: 'http://localhost:8080', AUTH_URL: 'http://127.0.0.1:8082' })).toEqual([]);
    });

    it('when production runs on every development default, then one error names each variable at once', () => {
      const problems = problemsOf({ NODE_ENV: 'production' });
      for (const name of ['DEV_IDP', 'IDP_ISSUER', 'IDP_JWKS_URL', 'IDP_LOGIN_URL', 'NEWSLETTER_SECRET', 'DATA_KEY', 'MONGO_URL', 'NATS_URL'])
        expect(problems.filter((p) => p.startsWith(name)), name).toHaveLength(1);
      expect(problems).toHaveLength(8);
    });

    it('when production has bad values and refused settings together, then both are in the one message', () => {
      const problems = problemsOf({ ...ready, SITE_PORT: 'eighty', DATA_KEY: '', IDP_ISSUER: '' });
      expect(problems).toEqual([expect.stringMatching(/^SITE_PORT="eighty"/), expect.stringMatching(/^IDP_ISSUER is empty/), expect.stringMatching(/^DATA_KEY is unset/)]);
    });

    it('when a public URL is plain http on a real host, then production refuses it naming the variable; localhost is allowed', () => {
      const problems = problemsOf({ ...ready, SITE_URL: 'http://carecircle.example', PIPE_URL: 'http://10.0.0.5:8083', IDP_JWKS_URL: 'http://id.example/jwks.json', APP_URL: 'http://app.localhost:8081' });
      expect(problems).toEqual([
        expect.stringMatching(/^SITE_URL="http:\/\/carecircle.example" is not https/),
        expect.stringMatching(/^PIPE_URL="http:\/\/10.0.0.5:8083" is not https/),
        expect.stringMatching(/^IDP_JWKS_URL="http:\/\/id.example\/jwks.json" is not https/),
      ]);
    });

    it('when production has no MONGO_URL or NATS_URL, then it starts only with ALLOW_EMBEDDED_IN_PRODUCTION=true', () => {
      const { MONGO_URL: _m, NATS_URL: _n, ...embedded } = ready;
      expect(problemsOf(embedded)).toEqual([expect.stringMatching(/^MONGO_URL is unset: .*ALLOW_EMBEDDED_IN_PRODUCTION=true/), expect.stringMatching(/^NATS_URL is unset: .*ALLOW_EMBEDDED_IN_PRODUCTION=true/)]);
      expect(problemsOf({ ...embedded, ALLOW_EMBEDDED_IN_PRODUCTION: 'true' })).toEqual([]);
    });

    it('when NODE_ENV is not production, then none of this applies', () => {
      expect(problemsOf({ SITE_URL: 'http://carecircle.example' })).toEqual([]);
    });
  });
});
