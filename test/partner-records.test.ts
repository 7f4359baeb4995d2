// Partner onboarding records: secrets shown once, sealed at rest, rotated with two live, retired;
// the data key from configuration or generated once.
import { passThroughCredentials } from '../src/auth/credentials.js';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { PARTNER_COLLECTIONS, PartnerError, PartnerStore } from '../src/partner/records.js';
import { DataKeyError, parseDataKey, resolveDataKey, SecretBox } from '../src/partner/secretBox.js';
import { useTestDatabase } from './harness/database.js';

const database = useTestDatabase();
const key = parseDataKey(Buffer.alloc(32, 3).toString('hex'));

describe('partner records', () => {
  it('when an institution is created, then its secret is returned once and rests only sealed, opening with the same data key alone', async () => {
    const store = new PartnerStore(database.db, new SecretBox(key), passThroughCredentials(database.db));
    const { institution, secret } = await store.create({ name: 'Acme Home Care', id: 'acme-rec' });
    expect(secret.value).toMatch(/^ccps_[A-Za-z0-9_-]{43}$/);
    const raw = await database.db.collection(PARTNER_COLLECTIONS.institutions).findOne({ _id: 'acme-rec' as never });
    expect(JSON.stringify(raw)).not.toContain(secret.value);
    expect(JSON.stringify(raw)).not.toContain(secret.value.slice(5, 25));
    expect(store.liveSecrets(institution)).toEqual([{ id: secret.id, value: secret.value }]);
    const otherKey = new PartnerStore(database.db, new SecretBox(parseDataKey(Buffer.alloc(32, 4).toString('base64'))), passThroughCredentials(database.db));
    expect(() => otherKey.liveSecrets(institution)).toThrow(DataKeyError);
    await expect(store.create({ name: 'Again', id: 'acme-rec' })).rejects.toThrow(/already exists/);
    await expect(store.create({ name: 'Bad', id: 'has space' })).rejects.toBeInstanceOf(PartnerError);
  });

  it('when rotated, then two secrets are live, a third is refused, and the last live one cannot be retired', async () => {
    const store = new PartnerStore(database.db, new SecretBox(key), passThroughCredentials(database.db));
    const { secret: first } = await store.create({ name: 'Rotating', id: 'rot-rec' });
    await expect(store.retire('rot-rec', first.id)).rejects.toThrow(/last live secret/);
    const second = await store.rotate('rot-rec');
    await expect(store.rotate('rot-rec')).rejects.toThrow(/retire the old one/);
    expect(store.liveSecrets((await store.get('rot-rec'))!).map((s) => s.id)).toEqual([first.id, second.id]);
    await store.retire('rot-rec', first.id);
    expect(store.liveSecrets((await store.get('rot-rec'))!).map((s) => s.id)).toEqual([second.id]);
    await expect(store.retire('rot-rec', second.id)).rejects.toThrow(/last live secret/);
  });

  it('when a secret verifies a request, then when it was last used is recorded; deactivation is recorded too', async () => {
    let now = Date.parse('2026-11-22T10:00:00Z');
    const store = new PartnerStore(database.db, new SecretBox(key), passThroughCredentials(database.db), () => now);
    const { secret } = await store.create({ name: 'Used', id: 'use-rec' });
    store.recordUse('use-rec', secret.id);
    now += 30_000;
    store.recordUse('use-rec', secret.id); // within a minute: not written again
    await expect.poll(async () => (await store.lastUse('use-rec')).get(secret.id)?.toISOString()).toBe('2026-11-22T10:00:00.000Z');
    await store.deactivate('use-rec');
    expect((await store.get('use-rec'))?.status).toBe('inactive');
    await store.activate('use-rec');
    expect((await store.get('use-rec'))?.status).toBe('active');
  });
});

describe('partner data key', () => {
  it('when DATA_KEY is unset outside production, then one is generated once with mode 0600 and reused', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cc-datakey-'));
    try {
      const log = createLogger('silent');
      const a = resolveDataKey({ dataDir, nodeEnv: 'development' }, log);
      const b = resolveDataKey({ dataDir, nodeEnv: 'development' }, log);
      expect(a.equals(b)).toBe(true);
      const file = path.join(dataDir, 'data.key');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(parseDataKey(readFileSync(file, 'utf8')).equals(a)).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('when NODE_ENV=production has no DATA_KEY, then start-up is refused naming it; a malformed key is refused too', () => {
    const prod = { NODE_ENV: 'production', DEV_IDP: 'false', NEWSLETTER_SECRET: 'x'.repeat(40) };
    expect(() => loadConfig(prod)).toThrow(ConfigError);
    expect(() => loadConfig(prod)).toThrow(/DATA_KEY is unset/);
    expect(() => loadConfig({ DATA_KEY: 'short' })).toThrow(/DATA_KEY="short"/);
    expect(() => loadConfig({ ...prod, DATA_KEY: Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1)).toString('base64') })).not.toThrow(/DATA_KEY/);
    expect(() => resolveDataKey({ dataDir: '/nonexistent', nodeEnv: 'production' }, createLogger('silent'))).toThrow(DataKeyError);
  });
});
