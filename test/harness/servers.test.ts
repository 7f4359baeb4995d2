import { MongoClient, MongoServerError } from 'mongodb';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseName, freePort, freshDatabaseUrl, startMongo, startNats, withDatabase, type RunningServer } from './servers.js';

async function natsRoundTrip(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject, { max: 1 });
  const got = (async () => {
    for await (const m of sub) return m.string();
    throw new Error('subscription closed without a message');
  })();
  await nc.flush();
  nc.publish(subject, 'ping');
  return got;
}

async function expectNatsGone(url: string): Promise<void> {
  await expect(connect({ servers: url, reconnect: false, timeout: 1_000 })).rejects.toThrow();
}

async function expectMongoGone(url: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 1_000, connectTimeoutMS: 1_000 });
  try {
    await expect(client.db().command({ ping: 1 })).rejects.toThrow();
  } finally {
    await client.close();
  }
}

/** Start a server of our own even when the suite runs against external ones. */
async function withoutEnv<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env[name];
  delete process.env[name];
  try {
    return await fn();
  } finally {
    if (saved !== undefined) process.env[name] = saved;
  }
}

describe('freePort', () => {
  it('returns a loopback port nobody listens on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThan(65536);
  });
});

describe('MongoDB URL helpers', () => {
  it('replaces only the database, keeping credentials, hosts and options', () => {
    expect(withDatabase('mongodb://127.0.0.1:1234/', 'x')).toBe('mongodb://127.0.0.1:1234/x');
    expect(withDatabase('mongodb://127.0.0.1:1234', 'x')).toBe('mongodb://127.0.0.1:1234/x');
    expect(withDatabase('mongodb://u:p@a:1,b:2/old?replicaSet=rs&authSource=admin', 'new')).toBe('mongodb://u:p@a:1,b:2/new?replicaSet=rs&authSource=admin');
    expect(databaseName('mongodb://a:1/foo?x=1')).toBe('foo');
    expect(databaseName('mongodb://a:1/')).toBeUndefined();
    const fresh = freshDatabaseUrl('mongodb://a:1/carecircle_test_abc?x=1');
    expect(fresh).toMatch(/^mongodb:\/\/a:1\/carecircle_test_abc_[0-9a-f]{16}\?x=1$/);
  });
});

describe('startNats', () => {
  let server: RunningServer;
  let nc: NatsConnection | undefined;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it('serves a loopback URL that round-trips publish/subscribe', async () => {
    expect(server.url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    nc = await connect({ servers: server.url });
    expect(await natsRoundTrip(nc, 'harness.ping')).toBe('ping');
  });

  it('has JetStream enabled', async () => {
    nc ??= await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    const stream = `HARNESS_${Date.now()}`;
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`], duplicate_window: 60_000_000_000 });
    const js = jetstream(nc);
    const first = await js.publish(`${stream.toLowerCase()}.a`, 'one', { msgID: 'm1' });
    const again = await js.publish(`${stream.toLowerCase()}.a`, 'one', { msgID: 'm1' });
    expect(first.seq).toBe(1);
    expect(again.duplicate).toBe(true);
    expect((await jsm.streams.info(stream)).state.messages).toBe(1);
  });

  it('stops for real', async () => {
    const own = await withoutEnv('NATS_URL', () => startNats({ jetstream: false }));
    const c = await connect({ servers: own.url });
    await expect(jetstreamManager(c)).rejects.toThrow(); // jetstream: false means no JetStream
    await c.close();
    await own.stop();
    await expectNatsGone(own.url);
    await own.stop(); // idempotent
  });
});

describe('startMongo', () => {
  let server: RunningServer;
  let client: MongoClient;
  beforeAll(async () => {
    server = await startMongo();
    client = new MongoClient(server.url);
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('names a fresh database in its URL', () => {
    expect(databaseName(server.url)).toMatch(/^carecircle_test_[0-9a-f]{16}$/);
    expect(client.db().databaseName).toBe(databaseName(server.url));
  });

  it('inserts and finds documents', async () => {
    const col = client.db().collection<{ _id: string; name: string; tags: string[] }>('people');
    await col.insertMany([
      { _id: 'a', name: 'Ada', tags: ['x'] },
      { _id: 'b', name: 'Bo', tags: ['y', 'x'] },
    ]);
    const found = await col.find({ tags: 'x' }).sort({ name: 1 }).toArray();
    expect(found.map((d) => d._id)).toEqual(['a', 'b']);
    const updated = await col.findOneAndUpdate({ _id: 'a' }, { $set: { name: 'Ada L.' } }, { returnDocument: 'after' });
    expect(updated?.name).toBe('Ada L.');
  });

  it('enforces a unique index with error 11000', async () => {
    const col = client.db().collection('keys');
    await col.createIndex({ hash: 1 }, { unique: true });
    await col.insertOne({ hash: 'h1' });
    const err = await col.insertOne({ hash: 'h1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MongoServerError);
    expect((err as MongoServerError).code).toBe(11000);
    expect(await col.countDocuments()).toBe(1);
  });

  it('stops for real', async () => {
    const own = await withoutEnv('MONGO_URL', () => startMongo());
    const c = new MongoClient(own.url, { serverSelectionTimeoutMS: 5_000 });
    await c.db().collection('t').insertOne({ x: 1 });
    await c.close();
    await own.stop();
    await expectMongoGone(own.url);
  });
});

describe('servers shared by globalSetup', () => {
  it('provides a NATS URL with JetStream', async () => {
    const nc = await connect({ servers: inject('natsUrl') });
    try {
      expect(await natsRoundTrip(nc, 'harness.shared')).toBe('ping');
      await expect((await jetstreamManager(nc)).getAccountInfo()).resolves.toBeTruthy();
    } finally {
      await nc.close();
    }
  });

  it('provides a MongoDB URL on which each test takes its own database', async () => {
    const url = freshDatabaseUrl(inject('mongoUrl'));
    expect(databaseName(url)?.startsWith(`${databaseName(inject('mongoUrl'))}_`)).toBe(true);
    const client = new MongoClient(url);
    try {
      const col = client.db().collection('things');
      await col.insertOne({ _id: 'one' } as never);
      expect(await col.findOne({})).toEqual({ _id: 'one' });
    } finally {
      await client.close();
    }
  });
});
