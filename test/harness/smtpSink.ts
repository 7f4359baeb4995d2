// A real SMTP server on loopback standing in for the outgoing relay: what carecircle mails
// (invitations, confirmations) lands in `received` for a test to read.
import { SMTPServer } from 'smtp-server';
import { freePort } from './servers.js';

export interface ReceivedMail {
  to: string[];
  data: string;
}

export interface SmtpSink {
  url: string;
  received: ReceivedMail[];
  /** Connections opened to the sink so far. */
  connections(): number;
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const port = await freePort();
  const received: ReceivedMail[] = [];
  let connections = 0;
  let closed = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // A client still connected when the test closes the sink (an engine a test made by hand, its
    // pool never closed) is cut off at once, not after smtp-server's default 30 s.
    closeTimeout: 200,
    onConnect(_session, cb) {
      connections++;
      cb();
    },
    onClose() {
      closed++;
    },
    onData(stream, session, cb) {
      let data = '';
      stream.on('data', (c: Buffer) => (data += c.toString()));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    connections: () => connections,
    open: () => connections - closed,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
