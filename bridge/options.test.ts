import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY_FORMAT as SERVICE_KEY_FORMAT } from '../src/keys/keys.js';
import { resolveCredential } from './credentials.js';
import { createLog } from './log.js';
import { API_KEY_FORMAT, BridgeConfigError, parseHeader, parseOptions, readApiKeyFile, resolveEndpoint } from './options.js';

const http = { userAgent: 'test', timeoutMs: 1000, allowHttp: false };

const KEY = `sk-svc-${'0123456789abcdef'.repeat(4)}`;
const dir = mkdtempSync(path.join(os.tmpdir(), 'cc-bridge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bridge options - endpoint', () => {
  it('when given the app URL or the endpoint, then both name the same endpoint and Settings page', () => {
    for (const raw of ['http://localhost:8081', 'http://localhost:8081/', 'http://localhost:8081/api/mcp', 'http://localhost:8081/api/mcp/'])
      expect(resolveEndpoint(raw)).toEqual({ endpoint: 'http://localhost:8081/api/mcp', appBase: 'http://localhost:8081' });
    expect(resolveEndpoint('https://example.org/care')).toEqual({ endpoint: 'https://example.org/care/api/mcp', appBase: 'https://example.org/care' });
    expect(resolveEndpoint('http://localhost:8081/api/mcp/public/')).toEqual({
      endpoint: 'http://localhost:8081/api/mcp/public',
      appBase: 'http://localhost:8081',
    });
  });

  it('when the URL is not usable, then the message says what to write instead', () => {
    expect(() => resolveEndpoint('localhost:8081')).toThrow(/https:\/\/ or http:\/\//);
    expect(() => resolveEndpoint('nope')).toThrow(/not a URL.*http:\/\/localhost:8081/);
    expect(() => resolveEndpoint('https://u:p@example.org')).toThrow(/user name or password/);
  });

  it('when the endpoint is plain http on another machine, then the key is not sent unless --allow-http', () => {
    const env = { CARECIRCLE_API_KEY: KEY, CARECIRCLE_URL: 'http://care.example.org' };
    expect(() => parseOptions([], env)).toThrow(/unencrypted.*--allow-http/);
    expect(parseOptions(['--allow-http'], env).endpoint).toBe('http://care.example.org/api/mcp');
    expect(parseOptions([], { ...env, CARECIRCLE_URL: 'http://127.0.0.1:9' }).endpoint).toBe('http://127.0.0.1:9/api/mcp');
  });
});

describe('bridge options - credentials', () => {
  it('when the service changes its key format, then this pin fails', () => {
    expect(API_KEY_FORMAT.source).toBe(SERVICE_KEY_FORMAT.source);
  });

  it('when no key and no sign-in are there, then the message says where to mint a key and how to sign in instead', async () => {
    const options = parseOptions([], { CARECIRCLE_CONFIG_DIR: path.join(dir, 'no-sign-in') });
    expect(options).toMatchObject({ mode: 'serve', credentialSource: 'none' });
    await expect(resolveCredential(options, createLog('silent'), http)).rejects.toThrow(
      /No API key, and no browser sign-in stored for http:\/\/localhost:8081\/api\/mcp\. Mint a key at http:\/\/localhost:8081\/settings.*CARECIRCLE_API_KEY.*carecircle-mcp --login$/,
    );
    const other = parseOptions(['https://care.example.org'], { CARECIRCLE_CONFIG_DIR: path.join(dir, 'no-sign-in') });
    await expect(resolveCredential(other, createLog('silent'), http)).rejects.toThrow(/carecircle-mcp --login https:\/\/care\.example\.org$/);
  });

  it('when a key is configured, then it is the credential and --login refuses to run, since a configured key always wins', async () => {
    const options = parseOptions([], { CARECIRCLE_API_KEY: KEY, CARECIRCLE_CONFIG_DIR: '/nonexistent/never/read' });
    expect((await resolveCredential(options, createLog('silent'), http)).describe()).toBe(`key sk-svc-…cdef from CARECIRCLE_API_KEY`);
    expect(() => parseOptions(['--login'], { CARECIRCLE_API_KEY: KEY })).toThrow(/CARECIRCLE_API_KEY is set and a configured key always wins/);
    expect(() => parseOptions(['--login', '--header', 'Authorization: Bearer x'], {})).toThrow(/--header Authorization is set/);
    expect(() => parseOptions(['--login', '--check'], {})).toThrow(/--check and --login do different things; pass one/);
    expect(parseOptions(['--logout'], { CARECIRCLE_API_KEY: KEY }).mode).toBe('logout');
  });

  it('when CARECIRCLE_NO_BROWSER is set, then --login will only print the address', () => {
    expect(parseOptions(['--login'], {}).openBrowser).toBe(true);
    expect(parseOptions(['--login'], { CARECIRCLE_NO_BROWSER: '1' }).openBrowser).toBe(false);
  });

  it('when the key is put on the command line or is malformed, then it is refused with the fix', () => {
    expect(() => parseOptions(['--api-key', KEY], {})).toThrow(/CARECIRCLE_API_KEY/);
    expect(() => parseOptions([], { CARECIRCLE_API_KEY: 'sk-svc-123' })).toThrow(/not an MCP API key.*\/settings/);
  });

  it('when the key file is open to other users, then it is refused with the chmod to run', () => {
    const file = path.join(dir, 'open.key');
    writeFileSync(file, `${KEY}\n`);
    chmodSync(file, 0o644);
    expect(() => readApiKeyFile(file)).toThrow(
      new BridgeConfigError(`--api-key-file ${file} is open to other users (mode 0644); make it yours alone: chmod 600 ${file}`),
    );
    chmodSync(file, 0o600);
    expect(parseOptions(['--api-key-file', file], { CARECIRCLE_API_KEY: 'ignored' })).toMatchObject({
      apiKey: KEY,
      credentialSource: `--api-key-file ${file}`,
    });
    expect(() => readApiKeyFile(path.join(dir, 'missing.key'))).toThrow(/no such file/);
  });
});

describe('bridge options - headers and limits', () => {
  it('when a header names ${VAR}, then the value comes from the environment', () => {
    expect(parseHeader('X-Team:${TEAM}', { TEAM: 'north' })).toEqual(['X-Team', 'north']);
    expect(parseHeader('Authorization: Bearer ${T}', { T: 'tok' })).toEqual(['Authorization', 'Bearer tok']);
    expect(() => parseHeader('X-Team: ${MISSING}', {})).toThrow(/MISSING is not set/);
    expect(() => parseHeader('no colon', {})).toThrow(/Name: value/);
    expect(() => parseHeader('MCP-Protocol-Version: 1', {})).toThrow(/sets this header itself/);
  });

  it('when Authorization comes from --header, then it stands in for the key, and both at once are refused', () => {
    expect(parseOptions(['--header', 'Authorization: Bearer x'], {})).toMatchObject({
      credentialSource: '--header Authorization',
      headers: { authorization: 'Bearer x' },
    });
    expect(() => parseOptions(['--header', 'Authorization: Bearer x'], { CARECIRCLE_API_KEY: KEY })).toThrow(/keep one/);
  });

  it('when --timeout-ms is out of range, then it is refused; --help works whatever else is wrong', () => {
    expect(parseOptions(['--timeout-ms', '1500'], { CARECIRCLE_API_KEY: KEY }).timeoutMs).toBe(1500);
    expect(() => parseOptions(['--timeout-ms', '5'], { CARECIRCLE_API_KEY: KEY })).toThrow(/100 to 600000/);
    expect(parseOptions(['--help'], { CARECIRCLE_URL: 'nope' }).mode).toBe('help');
    expect(() => parseOptions(['--bogus'], { CARECIRCLE_API_KEY: KEY })).toThrow(/--help/);
  });
});
