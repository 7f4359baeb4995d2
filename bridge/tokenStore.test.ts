import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, chmodSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { configDir, TokenFileError, TokenStore, type StoredSignIn } from './tokenStore.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'cc-token-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => path.join(root, `case-${++n}`, 'carecircle');

const SERVER = 'http://127.0.0.1:8081/api/mcp';
const entry = (over: Partial<StoredSignIn> = {}): StoredSignIn => ({
  server: SERVER,
  issuer: 'http://127.0.0.1:8083',
  tokenEndpoint: 'http://127.0.0.1:8083/oauth/token',
  clientId: 'client-1',
  redirectUri: 'http://127.0.0.1:5000/callback',
  accessToken: 'at',
  refreshToken: 'rt',
  expiresAt: new Date().toISOString(),
  scope: 'profile:read',
  updatedAt: new Date().toISOString(),
  ...over,
});

describe('bridge token store - where', () => {
  it('when CARECIRCLE_CONFIG_DIR, XDG_CONFIG_HOME or neither is set, then the directory follows the platform convention', () => {
    expect(configDir({ CARECIRCLE_CONFIG_DIR: '/srv/cc' }, 'linux', '/home/ada')).toBe('/srv/cc');
    expect(configDir({ XDG_CONFIG_HOME: '/home/ada/.cfg' }, 'linux', '/home/ada')).toBe('/home/ada/.cfg/carecircle');
    // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
    expect(configDir({ XDG_CONFIG_HOME: 'cfg' }, 'linux', '/home/ada')).toBe('/home/ada/.config/carecircle');
    expect(configDir({}, 'linux', '/home/ada')).toBe('/home/ada/.config/carecircle');
    expect(configDir({ XDG_CONFIG_HOME: '/x' }, 'darwin', '/Users/ada')).toBe('/Users/ada/Library/Application Support/carecircle');
    expect(configDir({ APPDATA: 'C:/Users/ada/AppData/Roaming' }, 'win32', 'C:/Users/ada')).toBe(path.join('C:/Users/ada/AppData/Roaming', 'carecircle'));
  });
});

describe('bridge token store - files', () => {
  it('when an entry is written, then the directory is 0700, the file 0600, and nothing else is left beside it', async () => {
    const store = new TokenStore(freshDir());
    await store.transaction(SERVER, async () => ({ result: undefined, entry: entry() }));
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(readdirSync(store.dir)).toEqual(['tokens.json']);
    expect(await store.get(SERVER)).toMatchObject({ clientId: 'client-1', refreshToken: 'rt' });
    await store.transaction(SERVER, async () => ({ result: undefined, entry: null }));
    expect(await store.get(SERVER)).toBeUndefined();
    expect(JSON.parse(readFileSync(store.file, 'utf8'))).toEqual({ version: 1, servers: {} });
  });

  it('when the file or its directory was opened to others, then the next use makes them private again', async () => {
    const store = new TokenStore(freshDir());
    await store.transaction(SERVER, async () => ({ result: undefined, entry: entry() }));
    chmodSync(store.file, 0o644);
    chmodSync(store.dir, 0o755);
    const warnings: string[] = [];
    const again = new TokenStore(store.dir, undefined, (w) => warnings.push(w));
    await again.transaction(SERVER, async (current) => ({ result: undefined, entry: current! }));
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(warnings.join('\n')).toMatch(/made it yours alone \(0700\)[\s\S]*made it yours alone \(0600\)/);
  });

  it('when the file is not a token file, then reading it fails with what to do', async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, 'tokens.json'), '{"oops"', { mode: 0o600 });
    await expect(new TokenStore(dir).get(SERVER)).rejects.toThrow(
      new TokenFileError(`${path.join(dir, 'tokens.json')} is not valid JSON; delete it and run carecircle-mcp --login again`),
    );
  });
});

describe('bridge token store - the lock', () => {
  it('when several processes update the file at once, then every update lands (none overwrites another)', async () => {
    const dir = freshDir();
    const script = `
      import { TokenStore } from ${JSON.stringify(fileURLToPath(new URL('./tokenStore.ts', import.meta.url)))};
      const store = new TokenStore(process.argv[1]);
      for (let i = 0; i < 15; i++)
        await store.transaction('counter', async (c) => ({ result: undefined, entry: { ...(c ?? { server: 'counter' }), scope: String(Number(c?.scope ?? 0) + 1) } }));
    `;
    const workers = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      return new Promise<string>((resolve) => child.on('close', (code) => resolve(`${code} ${stderr}`)));
    });
    expect(await Promise.all(workers)).toEqual(['0 ', '0 ', '0 ', '0 ']);
    expect((await new TokenStore(dir).get('counter'))?.scope).toBe('60');
    expect(readdirSync(dir)).toEqual(['tokens.json']);
  });

  it('when a bridge died holding the lock, then the next one breaks it; a live holder is waited for, within a bound', async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const lock = path.join(dir, 'tokens.json.lock');
    // A process that has exited: its pid names nobody now.
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => gone.on('close', resolve));
    writeFileSync(lock, `${gone.pid} ${os.hostname()} abc`);
    const warnings: string[] = [];
    const store = new TokenStore(dir, { lockWaitMs: 5_000, staleLockMs: 60_000 }, (w) => warnings.push(w));
    await store.transaction(SERVER, async () => ({ result: undefined, entry: entry() }));
    expect(warnings.join('\n')).toContain(`is no longer running (pid ${gone.pid})`);
    expect(readdirSync(dir)).toEqual(['tokens.json']);

    writeFileSync(lock, `${process.pid} ${os.hostname()} held`);
    const patient = new TokenStore(dir, { lockWaitMs: 150, staleLockMs: 60_000 });
    await expect(patient.transaction(SERVER, async () => ({ result: undefined }))).rejects.toThrow(/another carecircle-mcp has held .*tokens\.json\.lock/);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid} ${os.hostname()} held`);
  });
});
