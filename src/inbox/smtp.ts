// The smtp role: receives mail for family inbox addresses. Only known inbox addresses are
// accepted (550 at RCPT otherwise, so it is never a relay); messages are parsed here into a
// bounded summary (attachments kept up to ATTACHMENT_KEEP_BYTES) and stored by a worker before
// the 250, so an accepted message is durable. Against harvesting and floods: a recipient cap per
// message (452), the connection closed after a few refused recipients (421), a per-address
// connection rate shared by every smtp process (421), and size and header bounds enforced while
// the message arrives (552; see intake.ts).
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { forward } from '../bus/forward.js';
import type { Bus } from '../bus/types.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { randomUUID } from 'node:crypto';
import { perMinute, type Limiter } from '../limits/limiter.js';
import { ATTACHMENT_KEEP_BYTES, EXCERPT_CHARS } from './records.js';
import type { Delivery } from './handler.js';
import { countRateLimited } from '../metrics/index.js';
import { readMessage, SmtpReply } from './intake.js';

export interface InboxListener {
  port: number;
  close(): Promise<void>;
}

export async function startInboxListener(config: Config, bus: Bus, subject: string, log: Logger, limiter: Limiter): Promise<InboxListener> {
  const ask = async (path: string, body: unknown) => {
    const reply = await forward(
      bus,
      subject,
      { v: 1, method: 'POST', path, query: {}, headers: {}, body, clientIp: '', requestId: randomUUID() },
      { timeoutMs: config.busTimeoutMs, retryWindowMs: config.gatewayRetryWindowMs, idempotent: path === '/recipient', maxAttempts: config.gatewayMaxAttempts },
    );
    if (reply.status !== 200) throw new Error(`inbox worker answered ${reply.status}`);
    return reply.body as Record<string, unknown>;
  };
  const domain = `@${config.inboxDomain.toLowerCase()}`;
  const connections = perMinute(config.inboxConnectionsPerMin);
  /** Refused recipients per connection (the session object lives as long as the connection). */
  const refusedIn = new WeakMap<SMTPServerSession, number>();
  /** The reply for a refused recipient: 550 while the connection has refusals left, then 421, which closes it. */
  const refuse = (session: SMTPServerSession, reply: SmtpReply): SmtpReply => {
    const refused = (refusedIn.get(session) ?? 0) + 1;
    refusedIn.set(session, refused);
    if (refused <= config.inboxMaxUnknownRecipients) return reply;
    log.warn({ remoteAddress: session.remoteAddress, refused }, 'smtp connection closed after too many unknown recipients');
    return new SmtpReply(421, `4.7.0 Too many unknown recipients (${refused}); closing connection`);
  };

  const server = new SMTPServer({
    name: config.inboxDomain,
    banner: 'carecircle family inbox',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    // Advertised in the EHLO reply; smtp-server refuses a larger MAIL FROM SIZE= with 552 and
    // flags the data stream once the message goes over it.
    size: config.inboxMaxBytes,
    logger: false,
    onConnect(session, callback) {
      limiter.take(`smtp-connect:ip:${session.remoteAddress}`, connections).then(
        (taken) => {
          if (!taken.allowed) countRateLimited('smtp-connect');
          callback(
            taken.allowed ? undefined : new SmtpReply(421, `4.7.0 Too many connections from ${session.remoteAddress}; try again in ${taken.retryAfterSec} s`),
          );
        },
        (err: unknown) => {
          // The limit guards against floods; a database hiccup should not turn mail away.
          log.warn({ err }, 'smtp connection rate check failed');
          callback();
        },
      );
    },
    onRcptTo(address, session, callback) {
      const rcpt = address.address.trim().toLowerCase();
      const listed = session.envelope.rcptTo.some((r) => r.address.toLowerCase() === rcpt);
      if (!listed && session.envelope.rcptTo.length >= config.inboxMaxRecipients)
        return callback(new SmtpReply(452, `4.5.3 Too many recipients: at most ${config.inboxMaxRecipients} per message; send the rest in another message`));
      if (!rcpt.endsWith(domain))
        return callback(refuse(session, new SmtpReply(550, '5.7.1 Relaying denied: this server only receives mail for carecircle family inboxes')));
      ask('/recipient', { address: rcpt }).then(
        (r) => callback(r.known ? undefined : refuse(session, new SmtpReply(550, '5.1.1 No such family inbox'))),
        (err: unknown) => {
          log.warn({ err }, 'inbox recipient check failed');
          callback(new SmtpReply(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      readMessage(stream, { maxBytes: config.inboxMaxBytes, maxHeaderBytes: config.inboxMaxHeaderBytes })
        .then(async (mail) => {
          // Attachments are kept in order while they fit the bound; the rest are listed by name only.
          let room = ATTACHMENT_KEEP_BYTES;
          const attachments: NonNullable<Delivery['attachments']> = [];
          for (const [index, a] of (mail.attachments ?? []).slice(0, 100).entries()) {
            if (a.size > room) continue;
            room -= a.size;
            attachments.push({ index, contentType: (a.contentType || 'application/octet-stream').slice(0, 200), content: a.content.toString('base64') });
          }
          const delivery: Delivery = {
            recipients: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            from: (mail.from?.text ?? (session.envelope.mailFrom ? session.envelope.mailFrom.address : '')).slice(0, 500),
            subject: (mail.subject ?? '').slice(0, 1000),
            text: (mail.text ?? '').replace(/\s+\n/g, '\n').trim().slice(0, EXCERPT_CHARS),
            attachmentNames: (mail.attachments ?? []).map((a) => (a.filename ?? 'attachment').slice(0, 300)).slice(0, 100),
            attachments,
            ...(mail.messageId ? { messageId: mail.messageId.slice(0, 500) } : {}),
            receivedAt: new Date().toISOString(),
          };
          await ask('/deliver', delivery);
          callback();
        })
        .catch((err: unknown) => {
          if (err instanceof SmtpReply) return callback(err);
          log.error({ err }, 'inbox delivery failed');
          callback(new SmtpReply(451, '4.3.0 Temporary failure, try again later'));
        });
    },
  });
  server.on('error', (err) => log.error({ err }, 'smtp listener error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.smtpPort, config.bindHost, () => resolve());
  });
  const address = (server as unknown as { server: { address(): { port: number } } }).server.address();
  log.info({ port: address.port }, 'family inbox listening');
  return { port: address.port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
