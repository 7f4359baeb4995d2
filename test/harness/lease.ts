// One holder at a time across the test workers: a lease served over loopback by the run's global
// setup, granted first come first served, and ended when its holder lets go or its connection
// closes (a worker that died holds nothing).
import net from 'node:net';

export interface LeaseServer {
  port: number;
  /** Callers waiting for the lease now. */
  waiting(): number;
  close(): Promise<void>;
}

export async function startLeaseServer(): Promise<LeaseServer> {
  const waiting: net.Socket[] = [];
  let holder: net.Socket | undefined;
  const grantNext = () => {
    while (!holder && waiting.length) {
      const next = waiting.shift()!;
      if (next.destroyed) continue;
      holder = next;
      next.write('granted\n');
    }
  };
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (waiting.includes(socket)) waiting.splice(waiting.indexOf(socket), 1);
      if (holder !== socket) return;
      holder = undefined;
      grantNext();
    });
    waiting.push(socket);
    grantNext();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    waiting: () => waiting.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of [...waiting, ...(holder ? [holder] : [])]) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Resolves once the lease is this caller's, with the function that lets it go. */
export function acquireLease(port: number): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('data', () => resolve(() => void socket.end()));
  });
}
