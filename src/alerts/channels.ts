// Where a delivery goes out. A channel sends one delivery or throws; the outbox does the retrying.
// Email is built here: through SMTP_URL, or, in an embedded run without it, into a local outbox
// collection that `carecircle alerts outbox` prints. Web push plugs in as another Channel.
import nodemailer from 'nodemailer';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Config } from '../config.js';
import type { ChannelName } from './kinds.js';
import type { DeliveryRecord } from './outbox.js';

export interface Channel {
  readonly name: ChannelName;
  send(d: DeliveryRecord): Promise<void>;
  close?(): void;
}

/** Mail kept on this machine when no SMTP server is configured. */
export const LOCAL_OUTBOX = 'alert_local_outbox';
export const LOCAL_OUTBOX_INDEXES: Record<string, IndexDescription[]> = { [LOCAL_OUTBOX]: [{ key: { at: -1 }, name: 'by_time' }] };

export interface LocalMail {
  _id: string; // the delivery's id: a second copy of one delivery replaces the first
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
  at: Date;
}

/** The mail channel: SMTP when SMTP_URL is set, else the local outbox. */
export function emailChannel(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'appUrl'>, db: Db, clock: () => number = Date.now): Channel {
  // One Message-ID per delivery: were a mail sent again after a crash between the server's
  // acceptance and the outbox's "sent", the reader's mail program would see one message.
  const messageId = (d: DeliveryRecord) => `<${d._id.replace(/[^A-Za-z0-9._-]/g, '.')}@${new URL(config.appUrl).hostname}>`;
  if (!config.smtpUrl) {
    const local: Collection<LocalMail> = db.collection(LOCAL_OUTBOX);
    return {
      name: 'email',
      send: async (d) => {
        if (!d.message) throw new Error('no message: already sent');
        const { to, subject, text, html, headers } = d.message;
        const mail = { from: config.mailFrom, to, subject, text, html, headers: { ...headers, 'Message-ID': messageId(d) }, at: new Date(clock()) };
        await local.replaceOne({ _id: d._id }, mail, { upsert: true });
      },
    };
  }
  const transport = nodemailer.createTransport(config.smtpUrl);
  return {
    name: 'email',
    send: async (d) => {
      if (!d.message) throw new Error('no message: already sent');
      const { to, subject, text, html, headers } = d.message;
      await transport.sendMail({ from: config.mailFrom, to, subject, text, html, headers, messageId: messageId(d) });
    },
    close: () => transport.close(),
  };
}
