// The family-inbox SMTP listener against harvesting and floods, spoken to over a raw socket so
// every reply and the moment the server hangs up are visible: recipient cap, refused-recipient
// limit, connection rate per client address.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_COLLECTIONS } from '../src/family/records.js';
import { startTestService, type TestService } from './harness/service.js';

interface Reply {
  code: number;
  text: string;
}

/** One SMTP conversation: each reply (multi-line ones joined), and whether the server closed. */
class Smtp {
  private buffered = '';
  private readonly replies: Reply[] = [];
  private waiting: ((r: Reply) => void) | undefined;
  closed = false;
  readonly ended: Promise<unknown>;

  constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      let nl: number;
      let lines: string[] = [];
      while ((nl = this.buffered.indexOf('\r\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 2);
        lines.push(line.slice(4));
        if (line[3] === '-') continue;
        this.push({ code: Number(line.slice(0, 3)), text: lines.join('\n') });
        lines = [];
      }
    });
    this.ended = once(socket, 'close').then(() => (this.closed = true));
    socket.on('error', () => undefined);
  }

  static async open(port: number, from: string): Promise<{ smtp: Smtp; greeting: Reply }> {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    const smtp = new Smtp(socket);
    return { smtp, greeting: await smtp.next() };
  }

  private push(reply: Reply) {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = undefined;
      w(reply);
    } else this.replies.push(reply);
  }

  next(): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      void this.ended.then(() => reject(new Error('connection closed before a reply')));
    });
  }

  send(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.next();
  }

  close() {
    this.socket.destroy();
  }
}

let svc: TestService;
let port: number;
const known: string[] = [];

beforeAll(async () => {
  svc = await startTestService({ env: { INBOX_MAX_RECIPIENTS: '3', INBOX_MAX_UNKNOWN_RECIPIENTS: '3', INBOX_CONNECTIONS_PER_MIN: '3' } });
  port = Number(new URL(svc.urls.smtp!).port);
  const lovedOnes = svc.store.db.collection(WORKSPACE_COLLECTIONS.lovedOnes);
  for (const name of ['ada', 'bo', 'cy', 'di']) {
    const inboxAddress = `${name}-smtp@${svc.config.inboxDomain}`;
    await lovedOnes.insertOne({ _id: `lo-${name}`, workspaceId: 'ws-smtp', firstName: name, lastName: 'Smtp', inboxAddress } as never);
    known.push(inboxAddress);
  }
});
afterAll(async () => svc?.stop());

async function transaction(from: string) {
  const { smtp, greeting } = await Smtp.open(port, from);
  expect(greeting.code).toBe(220);
  expect((await smtp.send('EHLO sender.example')).code).toBe(250);
  expect((await smtp.send('MAIL FROM:<clinic@sender.example>')).code).toBe(250);
  return smtp;
}

describe('inbox smtp - harvesting and floods', () => {
  it('when a message names more recipients than INBOX_MAX_RECIPIENTS, then the next RCPT gets 452 saying to send the rest separately', async () => {
    const smtp = await transaction('127.0.0.2');
    for (const rcpt of known.slice(0, 3)) expect((await smtp.send(`RCPT TO:<${rcpt}>`)).code, rcpt).toBe(250);
    const over = await smtp.send(`RCPT TO:<${known[3]}>`);
    expect(over.code).toBe(452);
    expect(over.text).toMatch(/4\.5\.3 Too many recipients: at most 3 per message; send the rest in another message/);
    // Naming a listed recipient again is no new recipient, and the connection goes on.
    expect((await smtp.send(`RCPT TO:<${known[0]}>`)).code).toBe(250);
    expect((await smtp.send('RSET')).code).toBe(250);
    smtp.close();
  });

  it('when a connection tries more unknown recipients than INBOX_MAX_UNKNOWN_RECIPIENTS, then 421 and the server hangs up', async () => {
    const smtp = await transaction('127.0.0.3');
    expect((await smtp.send(`RCPT TO:<nobody-1@${svc.config.inboxDomain}>`)).text).toMatch(/5\.1\.1 No such family inbox/);
    expect((await smtp.send('RCPT TO:<someone@elsewhere.example>')).text).toMatch(/5\.7\.1 Relaying denied/);
    expect((await smtp.send(`RCPT TO:<nobody-2@${svc.config.inboxDomain}>`)).code).toBe(550);
    // A known recipient in between does not reset the count.
    expect((await smtp.send(`RCPT TO:<${known[0]}>`)).code).toBe(250);
    const dropped = await smtp.send(`RCPT TO:<nobody-3@${svc.config.inboxDomain}>`);
    expect(dropped.code).toBe(421);
    expect(dropped.text).toMatch(/4\.7\.0 Too many unknown recipients \(4\); closing connection/);
    await smtp.ended;
    expect(smtp.closed).toBe(true);
  });

  it('when one address opens more connections a minute than INBOX_CONNECTIONS_PER_MIN, then 421 at once; other addresses still connect', async () => {
    const open: Smtp[] = [];
    for (let i = 0; i < 3; i++) {
      const { smtp, greeting } = await Smtp.open(port, '127.0.0.9');
      expect(greeting.code).toBe(220);
      open.push(smtp);
    }
    // Tokens are minted every 20 s on the clock (3 a minute): when one is minted between these
    // connections, the next one still gets in, and the one after that cannot.
    let attempt = await Smtp.open(port, '127.0.0.9');
    if (attempt.greeting.code === 220) {
      open.push(attempt.smtp);
      attempt = await Smtp.open(port, '127.0.0.9');
    }
    const { smtp: refused, greeting } = attempt;
    expect(greeting.code).toBe(421);
    expect(greeting.text).toMatch(/4\.7\.0 Too many connections from 127\.0\.0\.9; try again in \d+ s/);
    await refused.ended;
    expect(refused.closed).toBe(true);
    const { smtp: neighbour, greeting: welcome } = await Smtp.open(port, '127.0.0.10');
    expect(welcome.code).toBe(220);
    for (const s of [...open, neighbour]) s.close();
  });
});
