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
});
