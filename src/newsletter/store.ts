// Newsletter subscribers in MongoDB, one document per address keyed by `_id`: the first sign-up
// is an insert, so two racing sign-ups for one address create one subscriber (exactly-once on
// MongoDB and FerretDB v1 alike). Nothing but the address, an optional first name and the
// subscription's dates is kept.
import type { Collection, Db, IndexDescription } from 'mongodb';
import { isDuplicateKey } from '../store/errors.js';

export const NEWSLETTER_COLLECTION = 'newsletter_subscribers';

export const NEWSLETTER_INDEXES: Record<string, IndexDescription[]> = {
  [NEWSLETTER_COLLECTION]: [{ key: { status: 1 }, name: 'by_status' }],
};

export type SubscriberStatus = 'pending' | 'active' | 'unsubscribed';

export interface SubscriberRecord {
  _id: string; // the address, lower case
  firstName?: string;
  status: SubscriberStatus;
  createdAt: Date;
  updatedAt: Date;
  confirmedAt?: Date;
  unsubscribedAt?: Date;
  /** When the last confirmation mail went out (double opt-in only). */
  mailedAt?: Date;
}

export type SubscribeOutcome =
  { kind: 'created'; status: 'pending' | 'active' } | { kind: 'existing'; record: SubscriberRecord } | { kind: 'resubscribed'; status: 'pending' | 'active' };

export class NewsletterStore {
  private readonly rows: Collection<SubscriberRecord>;

  constructor(
    db: Db,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.rows = db.collection<SubscriberRecord>(NEWSLETTER_COLLECTION);
  }

  async subscribe(email: string, firstName: string | undefined, doubleOptIn: boolean): Promise<SubscribeOutcome> {
    const now = this.clock();
    const status = doubleOptIn ? 'pending' : 'active';
    try {
      await this.rows.insertOne({
        _id: email,
        ...(firstName ? { firstName } : {}),
        status,
        createdAt: now,
        updatedAt: now,
        ...(status === 'active' ? { confirmedAt: now } : {}),
      });
      return { kind: 'created', status };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const record = await this.rows.findOne({ _id: email });
    if (record && record.status !== 'unsubscribed') return { kind: 'existing', record };
    // Coming back after unsubscribing: start again as a new sign-up would.
    await this.rows.updateOne(
      { _id: email },
      {
        $set: { status, updatedAt: now, ...(firstName ? { firstName } : {}), ...(status === 'active' ? { confirmedAt: now } : {}) },
        $unset: { unsubscribedAt: '', mailedAt: '' },
      },
    );
    return { kind: 'resubscribed', status };
  }

  async markMailed(email: string): Promise<void> {
    await this.rows.updateOne({ _id: email }, { $set: { mailedAt: this.clock() } });
  }

  async find(email: string): Promise<SubscriberRecord | null> {
    return this.rows.findOne({ _id: email });
  }

  async confirm(email: string): Promise<'confirmed' | 'already_active' | 'unsubscribed' | 'unknown'> {
    const record = await this.rows.findOne({ _id: email });
    if (!record) return 'unknown';
    if (record.status === 'active') return 'already_active';
    if (record.status === 'unsubscribed') return 'unsubscribed';
    const now = this.clock();
    await this.rows.updateOne({ _id: email, status: 'pending' }, { $set: { status: 'active', confirmedAt: now, updatedAt: now } });
    return 'confirmed';
  }

  async unsubscribe(email: string): Promise<'unsubscribed' | 'already_unsubscribed' | 'unknown'> {
    const record = await this.rows.findOne({ _id: email });
    if (!record) return 'unknown';
    if (record.status === 'unsubscribed') return 'already_unsubscribed';
    const now = this.clock();
    await this.rows.updateOne({ _id: email }, { $set: { status: 'unsubscribed', unsubscribedAt: now, updatedAt: now } });
    return 'unsubscribed';
  }
}
