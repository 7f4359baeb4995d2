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
  /** Whether this member can be reached here at all (a browser subscribed); absent: always. */
  reaches?(uid: string): Promise<boolean>;
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

/**
 * One Message-ID per delivery: were a mail sent again after a crash between the server's
 * acceptance and the outbox's "sent", the reader's mail program would see one message.
 */
export const alertMessageId = (deliveryId: string, appUrl: string): string => `<${deliveryId.replace(/[^A-Za-z0-9._-]/g, '.')}@${new URL(appUrl).hostname}>`;

/** The mail channel: SMTP when SMTP_URL is set, else the local outbox. */
export function emailChannel(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'appUrl'>, db: Db, clock: () => number = Date.now): Channel {
  const messageId = (d: DeliveryRecord) => alertMessageId(d._id, config.appUrl);
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
  // Kept-open connections (nodemailer's pool, five at most), unless the URL says `pool=false`: a
  // burst of alerts then pays the connection and greeting once per connection, not once per mail.
  const url = new URL(config.smtpUrl);
  if (!url.searchParams.has('pool')) url.searchParams.set('pool', 'true');
  const transport = nodemailer.createTransport(url.href);
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

/** What the push channel needs of the web-push sender (src/push). */
export interface PushSending {
  sendPush(
    personId: string,
    message: { title: string; body: string; url: string; tag?: string },
    opts?: { urgency?: 'normal' | 'high' },
  ): Promise<{ status: 'sent' | 'gone' | 'failed'; retryable?: boolean; reason?: string }[]>;
}

/**
 * Web push: the alert's short note to each browser the member turned notifications on in; a
 * member with none gets no delivery on this channel (their mail still goes). A browser the push service has
 * forgotten is dropped by the sender; a busy push service makes the outbox try again later, and
 * the note's tag makes a second copy replace the first on a browser that had it already.
 */
export function pushChannel(sender: PushSending, devices: (uid: string) => Promise<readonly unknown[]>, urgent: (kind: string) => boolean): Channel {
  return {
    name: 'push',
    reaches: async (uid) => (await devices(uid)).length > 0,
    send: async (d) => {
      if (!d.note) throw new Error('no note: already sent');
      const outcomes = await sender.sendPush(d.uid, d.note, { urgency: urgent(d.kind) ? 'high' : 'normal' });
      const again = outcomes.filter((o) => o.status === 'failed' && o.retryable);
      if (again.length) throw new Error(`push: ${again.length} browser(s) to try again: ${again[0]!.reason ?? 'no answer'}`);
    },
  };
}
