// One process's road to a real nats-server, cut at a chosen moment: a loopback TCP relay that
// drops every connection through it (and refuses new ones) on the first bytes a client sends that
// match a pattern, until it is restored, as when NATS goes away for that process mid-command.
import net from 'node:net';

export interface NatsLink {
  /** `nats://127.0.0.1:<port>`: give this to the process instead of the server's URL. */
  url: string;
  /** Cut at the first client bytes matching `pattern` (those bytes never reach the server). */
  cutOn(pattern: RegExp): void;
  /** Resolves once the link is cut. */
  cut: () => Promise<void>;
  /** Let connections through again. */
  restore(): void;
  close(): Promise<void>;
}

export async function startNatsLink(serverUrl: string): Promise<NatsLink> {
  const upstream = new URL(serverUrl.split(',')[0]!.trim());
  const open = new Set<net.Socket>();
  let pattern: RegExp | undefined;
  let down = false;
  let onCut: (() => void) | undefined;
  let wasCut = new Promise<void>((resolve) => (onCut = resolve));
  const cutNow = () => {
    down = true;
    pattern = undefined;
    for (const s of open) s.destroy();
    open.clear();
    onCut?.();
  };
  const server = net.createServer((client) => {
    if (down) return void client.destroy();
    const server = net.connect(Number(upstream.port), upstream.hostname);
    open.add(client).add(server);
    // The pattern may straddle two reads: match over the tail of the previous one too.
    let tail = '';
    client.on('data', (chunk: Buffer) => {
      const seen = tail + chunk.toString('latin1');
      tail = seen.slice(-256);
      if (pattern?.test(seen)) return cutNow();
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => client.write(chunk));
    for (const s of [client, server]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        open.delete(s);
        (s === client ? server : client).destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `nats://127.0.0.1:${port}`,
    cutOn: (p) => {
      pattern = p;
      wasCut = new Promise<void>((resolve) => (onCut = resolve));
    },
    cut: () => wasCut,
    restore: () => void (down = false),
    close: async () => {
      cutNow();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
