// The de-duplication keys a test service holds, wherever it keeps them: the store without NATS,
// the deployment's key-value bucket with NATS (read message by message through the stream).
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { inject } from 'vitest';
import { IngestKeys, type IngestKeyRecord } from '../../src/ingest/dedupe.js';
import { ingestKeysBucketName } from '../../src/ingest/kvClaims.js';
import type { TestService } from './service.js';

export async function ingestKeyRecords(svc: TestService): Promise<IngestKeyRecord[]> {
  if (svc.bus.kind === 'memory') return new IngestKeys(svc.store.db).rows.find({}).toArray();
  const nc = await connect({ servers: inject('natsUrl') });
  try {
    const jsm = await jetstreamManager(nc);
    const stream = `KV_${ingestKeysBucketName(svc.config.busNamespace)}`;
    const { state } = await jsm.streams.info(stream);
    const records: IngestKeyRecord[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      const value = m?.string();
      if (!value?.startsWith('{')) continue; // deleted, or the copy mark
      const record = JSON.parse(value) as IngestKeyRecord & { at: string };
      records.push({ ...record, at: new Date(record.at) });
    }
    return records;
  } finally {
    await nc.close();
  }
}
