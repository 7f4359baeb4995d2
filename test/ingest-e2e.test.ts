// End to end over real NATS (JetStream) and MongoDB: an agency's partner client sends a visit, a
// medication and a vital; the family's assistant sees them through list_care_events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../src/keys/keys.js';
import { PartnerClient } from '../src/partner/client.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { drained, enterLinkCode, family, onboard, TEST_DATA_KEY } from './ingest.fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ nats: true, env: { DATA_KEY: TEST_DATA_KEY } });
});
afterAll(async () => {
  await svc?.stop();
});

describe('ingest end to end', () => {
  it("when a partner sends a visit, a medication and a vital for a linked client, then the family's MCP client lists them, newest first", async () => {
    const partner = await onboard(svc.store.db, svc.credentials, 'Sunrise Home Care');
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const client = new PartnerClient({ baseUrl: svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
    const on = await client.setFamilyShare('sunrise-88', true);
    expect((await enterLinkCode(svc.bus, svc.config, fam, (on.body as { link_code: string }).link_code)).status).toBe(200);

    const t = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const sent = [
      await client.sendEvent({
        subject_ref: 'sunrise-88',
        event_type: 'visit_started',
        occurred_at: t(30),
        payload: { caregiver_id: 'cg-5', scheduled_start: t(30), actual_start: t(30) },
        source_event_id: 'sr-1',
      }),
      await client.sendEvent({
        subject_ref: 'sunrise-88',
        event_type: 'med_administered',
        occurred_at: t(20),
        payload: { medication_name: 'Donepezil', dose_amount: 5, dose_unit: 'mg', administered_by: 'cg-5' },
        source_event_id: 'sr-2',
      }),
      await client.sendEvent({
        subject_ref: 'sunrise-88',
        event_type: 'vital_recorded',
        occurred_at: t(10),
        payload: { vital_type: 'blood_pressure', value: 132, secondary_value: 84, unit: 'mmHg', recorded_by: 'cg-5' },
        source_event_id: 'sr-3',
      }),
    ];
    expect(sent.map((r) => r.rule)).toEqual(['accepted', 'accepted', 'accepted']);
    await drained(svc.bus, svc.config);

    const { plaintext } = await new KeyStore(svc.store.db, svc.credentials).mint(fam.uid, 'assistant');
    const res = await postJson(`${svc.urls.app}/api/mcp`, rpc('tools/call', { name: 'list_care_events', arguments: { lovedOneId: fam.lovedOneId } }), {
      authorization: `Bearer ${plaintext}`,
    });
    expect(res.status).toBe(200);
    const listed = JSON.parse(res.json.result.content.at(-1).text);
    expect(listed.events.map((e: { id: string; eventType: string }) => [e.id, e.eventType])).toEqual([
      [sent[2]!.eventId, 'vital_recorded'],
      [sent[1]!.eventId, 'med_administered'],
      [sent[0]!.eventId, 'visit_started'],
    ]);
    expect(listed.events[0]).toMatchObject({
      lovedOneId: fam.lovedOneId,
      source: 'partner',
      institutionId: partner.institutionId,
      payload: { value: 132, secondary_value: 84 },
    });
  });
});
