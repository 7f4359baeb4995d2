// The credential cache's rules on a real nats-server: a read that raced a revocation (or a change
// of a family record) is never kept, a revocation waits for every other process's
// acknowledgement, a process that stopped hearing its own heartbeat or whose connection dropped
// keeps nothing it read before, and what records may weigh is bounded.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { startNatsLink, type NatsLink } from '../../test/harness/natsLink.js';
import { NatsBus } from '../bus/nats.js';
import { createLogger } from '../log.js';
import { CredentialCache, Credentials } from './credentials.js';

const log = createLogger('silent');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function member(namespace: string, url = inject('natsUrl')): Promise<{ bus: NatsBus; credentials: Credentials }> {
  const bus = await NatsBus.connect(url, log, 'credentials-test');
  const credentials = new Credentials(bus, namespace, log);
  await credentials.start();
  cleanup.push(
    () => bus.close(),
    () => credentials.stop(),
  );
  return { bus, credentials };
}

/** A member whose road to NATS goes through a relay the test can cut (`link`). */
async function memberBehindLink(): Promise<{ link: NatsLink; bus: NatsBus; credentials: Credentials }> {
  const link = await startNatsLink(inject('natsUrl'));
  cleanup.push(() => link.close());
  return { link, ...(await member(`cr${randomBytes(3).toString('hex')}`, link.url)) };
}

/** Cuts the process's road to NATS now and resolves once it knows. */
async function cutOff(link: NatsLink, bus: NatsBus): Promise<void> {
  link.cutOn(/cut-here/);
  bus.publish('cut-here', {});
  await link.cut();
  await connected(bus, false);
}

/** Resolves once the bus says it is (or is not) connected. */
const connected = (bus: NatsBus, ready: boolean) => vi.waitFor(() => expect(bus.ready()).toBe(ready), { timeout: 20_000, interval: 20 });

/** Resolves once a change sent from `from` is acknowledged by `others` other processes: from then
 *  on each change it sends waits for them. */
async function acquainted(from: Credentials, others: number): Promise<void> {
  await vi.waitFor(
    async () => {
      await from.changed('member', [`probe-${randomBytes(3).toString('hex')}`]);
      expect(from.lastReach).toEqual({ acknowledged: others, silent: 0 });
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** A load that counts its calls and answers what `state` says at the moment it is called. */
function store(initial: string) {
  const s = { state: initial, loads: 0, load: async () => (s.loads++, s.state) };
  return s;
}

describe('credentials', () => {
  it('when a revocation arrives while a read is in flight, then that read answers once and is not kept', async () => {
    const cache = new CredentialCache(60_000);
    let release!: (v: string) => void;
    const reading = cache.lookup('key', 'k1', () => new Promise<string>((r) => (release = r)));
    cache.forget('key', ['k1']);
    release('active'); // read before the revocation was written
    expect(await reading).toBe('active');
    const after = store('revoked');
    expect(await cache.lookup('key', 'k1', after.load)).toBe('revoked');
    expect(after.loads).toBe(1);
  });

  it('when one process revokes, then the other has forgotten the credential before the revocation returns', async () => {
    const namespace = `cr${randomBytes(3).toString('hex')}`;
    const a = await member(namespace);
    const b = await member(namespace);
    await acquainted(a.credentials, 1);
    const backing = store('active');
    expect(await b.credentials.cache.lookup('session', 's1', backing.load)).toBe('active');
    expect(await b.credentials.cache.lookup('session', 's1', backing.load)).toBe('active');
    expect(backing.loads).toBe(1);
    backing.state = 'revoked';
    await a.credentials.revoked('session', ['s1']);
    expect(await b.credentials.cache.lookup('session', 's1', backing.load)).toBe('revoked');
    expect(backing.loads).toBe(2);
  });

  it('when a process stops hearing its own heartbeat, then it reads every credential again', async () => {
    const { bus, credentials } = await member(`cr${randomBytes(3).toString('hex')}`);
    const backing = store('active');
    await credentials.cache.lookup('key', 'k1', backing.load);
    await credentials.cache.lookup('key', 'k1', backing.load);
    expect(backing.loads).toBe(1);
    // The connection still says it is up, but the process's clock moves on 4.5 s past its last
    // echo with none heard (a stalled event loop, or a link that carries nothing): revocations
    // could now pass it by.
    expect(bus.ready()).toBe(true);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 4_500 });
    try {
      await credentials.cache.lookup('key', 'k1', backing.load);
    } finally {
      vi.useRealTimers();
    }
    expect(backing.loads).toBe(2);
  });

  it('when a process loses its NATS connection, then every read while it is away goes to the store, and so does the first one once it is back', async () => {
    const { link, bus, credentials } = await memberBehindLink();
    const backing = store('active');
    await credentials.cache.lookup('key', 'k1', backing.load);
    await credentials.cache.lookup('key', 'k1', backing.load);
    expect(backing.loads).toBe(1);
    await cutOff(link, bus);
    await credentials.cache.lookup('key', 'k1', backing.load);
    await credentials.cache.lookup('key', 'k1', backing.load);
    expect(backing.loads).toBe(3);
    link.restore();
    await connected(bus, true);
    await credentials.cache.lookup('key', 'k1', backing.load);
    expect(backing.loads).toBe(4);
  });

  it('when a process is cut off from NATS for a moment and nothing is read meanwhile, then the first read once it is back goes to the store', async () => {
    const { link, bus, credentials } = await memberBehindLink();
    const backing = store('member');
    await credentials.records.lookup('member', 'u1', backing.load);
    await credentials.records.lookup('member', 'u1', backing.load);
    expect(backing.loads).toBe(1);
    await cutOff(link, bus);
    link.restore();
    await connected(bus, true);
    await credentials.records.lookup('member', 'u1', backing.load);
    expect(backing.loads).toBe(2);
  });

  it('when a record changes in one process while another is reading it, then that read is used once and the next one reads again', async () => {
    const namespace = `cr${randomBytes(3).toString('hex')}`;
    const a = await member(namespace);
    const b = await member(namespace);
    await acquainted(a.credentials, 1);
    let release!: (v: string) => void;
    const reading = b.credentials.records.lookup('member', 'u1', () => new Promise<string>((r) => (release = r)));
    await a.credentials.changed('member', ['u1']); // returns once b has acknowledged
    release('in the workspace'); // what the store said before the change was written
    expect(await reading).toBe('in the workspace');
    const after = store('removed');
    expect(await b.credentials.records.lookup('member', 'u1', after.load)).toBe('removed');
    expect(after.loads).toBe(1);
  });

  it('when what is kept would weigh more than its bound, then the oldest go first and a value over the bound is not kept', async () => {
    const cache = new CredentialCache<'member'>(60_000, Date.now, () => true, { maxWeight: 10, weigh: (v) => String(v).length });
    const backing = store('1234');
    for (const id of ['a', 'b', 'c']) await cache.lookup('member', id, backing.load);
    expect(cache.size).toBe(2);
    await cache.lookup('member', 'b', backing.load);
    await cache.lookup('member', 'c', backing.load);
    expect(backing.loads).toBe(3);
    await cache.lookup('member', 'a', backing.load);
    expect(backing.loads).toBe(4);
    const big = store('12345678901');
    await cache.lookup('member', 'big', big.load);
    await cache.lookup('member', 'big', big.load);
    expect(big.loads).toBe(2);
    expect(cache.size).toBe(2);
  });
});
