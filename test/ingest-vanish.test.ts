// Every 202 is stored or accounted for, through worker crashes: events the database refuses and
// events it takes, in flight while a worker is SIGKILLed mid-processing and another starts.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { subjects } from '../src/bus/subjects.js';
import { DeadLetters } from '../src/ingest/deadLetters.js';
import { FamilyShares } from '../src/ingest/familyShare.js';
import { ingestStream } from '../src/ingest/stream.js';
import { startRole, type RoleProcess } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { startTestService } from './harness/service.js';
import { careEvents, drained, family, onboard, postEvent, shareWith, TEST_DATA_KEY, visit } from './ingest.fixtures.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const nest = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe('ingest - accepted events through worker crashes', () => {
  it('when a worker is SIGKILLed while refused and storable events are in flight, then each 202 ends stored or dead-lettered, none lost', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = {
      NATS_URL: inject('natsUrl'),
      MONGO_URL: mongoUrl,
      BUS_NAMESPACE: `ingvanish${process.pid}`,
      DATA_KEY: TEST_DATA_KEY,
      INGEST_ACK_WAIT_MS: '1000',
      INGEST_MAX_DELIVERIES: '3',
      BUS_TIMEOUT_MS: '1000',
      RATE_INGEST_PER_MIN: '100000',
      APP_URL: 'http://localhost:8081',
    };
    const workers: RoleProcess[] = [startRole('worker', env), startRole('worker', env)];
    cleanup.push(() => Promise.all(workers.map((w) => w.kill('SIGKILL'))));
    await Promise.all(workers.map((w) => w.waitFor(/ingest consumer started/)));
    const gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env: { ...env, GATEWAY_RETRY_WINDOW_MS: '8000' } });
    cleanup.push(() => gateway.stop());
    const db = gateway.store.db;
    const partner = await onboard(db, gateway.credentials);
    const fam = await family(db, gateway.credentials, gateway.config);
    await shareWith(gateway, partner, 'client-crash', fam);
    const linkId = (await new FamilyShares(db, gateway.credentials).binding(partner.institutionId, 'client-crash'))!.link.linkId;

    // The events of the finding, through the pipe: whatever gets a 202 must be accounted for.
    const deep = await Promise.all(
      [95, 3000].map((d, i) =>
        postEvent(
          gateway.urls.pipe!,
          partner,
          visit(partner, 'client-crash', { source_event_id: `deep-${i}`, payload: { ...visit(partner, 'x').payload, extra: nest(d) } }),
        ),
      ),
    );
    // And events the database refuses although accepted (a rule the check before the 202 does not
    // know), straight onto the stream as the handler queues them.
    const s = ingestStream(gateway.config.busNamespace, subjects(gateway.config.busNamespace).ingestEvents);
    const at = new Date(Date.now() - 60_000).toISOString();
    const refused = Array.from({ length: 3 }, (_, i) => `evt_refusedevent00000${i}`);
    for (const id of refused)
      await gateway.bus.durable!.publish(
        s.subject,
        {
          v: 1,
          eventId: id,
          institutionId: partner.institutionId,
          subjectRef: 'client-crash',
          eventType: 'note_added',
          occurredAt: at,
          receivedAt: at,
          payload: { $refused: true },
          linkId,
        },
        { msgId: id },
      );
    const good = [];
    for (let i = 0; i < 30; i++) {
      if (i === 10) {
        // Mid-processing: the refused events are between deliveries, the good ones in flight.
        await workers[0]!.kill('SIGKILL');
        workers.push(startRole('worker', env));
      }
      good.push(await postEvent(gateway.urls.pipe!, partner, visit(partner, 'client-crash', { source_event_id: `good-${i}` })));
      await sleep(20);
    }
    expect(good.map((r) => r.status)).toEqual(Array(30).fill(202));
    await workers[1]!.kill('SIGKILL');
    await workers[2]!.waitFor(/ingest consumer started/);

    await drained(gateway.bus, gateway.config, 30_000);
    const accepted = [...deep.filter((r) => r.status === 202).map((r) => r.json.event_id as string), ...refused, ...good.map((r) => r.json.event_id as string)];
    const stored = new Set((await careEvents(db).find({ institutionId: partner.institutionId }).toArray()).map((r) => r._id));
    const dead = new Set((await new DeadLetters(db).rows.find({ institutionId: partner.institutionId }).toArray()).map((r) => r._id));
    expect(accepted.filter((id) => !stored.has(id) && !dead.has(id))).toEqual([]);
    expect([...dead].sort()).toEqual(expect.arrayContaining(refused));
    expect(good.every((r) => stored.has(r.json.event_id))).toBe(true);
    expect(deep.map((r) => r.status)).toEqual([400, 400]);
  }, 90_000);
});
