// The lease the process-starting test files take in turn: one holder at a time, first come first
// served, and a holder whose connection drops holds nothing.
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireLease, startLeaseServer, type LeaseServer } from './lease.js';

let server: LeaseServer | undefined;
afterEach(async () => server?.close());

describe('test harness - the deployment lease', () => {
  it('when three ask, then one holds it and the others wait their turn, in the order they asked', async () => {
    server = await startLeaseServer();
    const granted: string[] = [];
    const ask = (name: string) => acquireLease(server!.port).then((release) => (granted.push(name), release));
    const a = await ask('a');
    const b = ask('b');
    await vi.waitFor(() => expect(server!.waiting()).toBe(1));
    const c = ask('c');
    await vi.waitFor(() => expect(server!.waiting()).toBe(2));
    expect(granted).toEqual(['a']);
    a();
    (await b)();
    expect(granted).toEqual(['a', 'b']);
    (await c)();
    expect(granted).toEqual(['a', 'b', 'c']);
  });

  it('when the holder connection closes without letting go, then the next one gets it', async () => {
    server = await startLeaseServer();
    const first = net.connect(server.port, '127.0.0.1');
    await new Promise((r) => first.once('data', r));
    const second = acquireLease(server.port);
    await vi.waitFor(() => expect(server!.waiting()).toBe(1));
    first.destroy();
    (await second)();
  });
});
