// The ingest's shared look-ups never answer from before a change: two worker processes over real
// NATS take events under steady load while the binding, the loved one, the secrets and the
// integration change elsewhere; every request sent after the change returned obeys it on both.
import { describe, expect, it } from 'vitest';
import { deleteLovedOne } from '../src/family/changes.js';
import { useTwoIngestWorkers } from './harness/ingestWorkers.js';
import {
  careEvents,
  drained,
  enterLinkCode,
  family,
  onboard,
  partnerStore,
  postEvent,
  purge,
  setFamilyShare,
  shareWith,
  visit,
  type Family,
  type Partner,
} from './ingest.fixtures.js';

const d = useTwoIngestWorkers('ingfresh');

let n = 0;
const send = (partner: Partner, subjectRef: string, o: { secret?: string } = {}) =>
  postEvent(d.pipe, partner, visit(partner, subjectRef, { source_event_id: `f-${n++}` }), o);

/**
 * Keeps 8 requests in flight while `change` runs (so both workers hold reads of the record in
 * flight when it changes), then sends 24 more at once: the statuses of those sent after.
 */
async function acrossChange(partner: Partner, subjectRef: string, change: () => Promise<unknown>, o: { secret?: string } = {}): Promise<number[]> {
  let changing = true;
  const load = Promise.all(
    Array.from({ length: 8 }, async () => {
      while (changing) await send(partner, subjectRef, o);
    }),
  );
  await Promise.all(Array.from({ length: 16 }, () => send(partner, subjectRef, o)));
  await change();
  const after = await Promise.all(Array.from({ length: 24 }, () => send(partner, subjectRef, o)));
  changing = false;
  await load;
  return after.map((r) => r.status);
}

async function linkedPair(subjectRef: string): Promise<{ partner: Partner; fam: Family }> {
  const partner = await onboard(d.gateway.store.db, d.gateway.credentials);
  const fam = await family(d.gateway.store.db, d.gateway.credentials, d.gateway.config);
  await shareWith(d.gateway, partner, subjectRef, fam);
  return { partner, fam };
}

describe('ingest - look-ups across two workers', () => {
  it('when both workers are busy and the requests are spread over them, then each has served events', async () => {
    const { partner } = await linkedPair('client-spread');
    const replies = await Promise.all(Array.from({ length: 40 }, () => send(partner, 'client-spread')));
    expect(replies.map((r) => r.status)).toEqual(Array(40).fill(202));
    for (const w of d.workers) expect(w.lines.some((l) => l.includes('"msg":"event accepted"'))).toBe(true);
  });

  it('when family-share is turned off through one worker, then every later event is refused by both', async () => {
    const { partner } = await linkedPair('client-off');
    expect(await acrossChange(partner, 'client-off', () => setFamilyShare(d.pipe, partner, 'client-off', false))).toEqual(Array(24).fill(404));
  });

  it('when the loved one is removed, then every later event is refused by both', async () => {
    const { partner, fam } = await linkedPair('client-gone');
    // The record alone, through its owner (the app's removal also turns the agency's sharing off,
    // which would refuse the events by itself).
    const statuses = await acrossChange(partner, 'client-gone', () =>
      deleteLovedOne(d.gateway.store.db, d.gateway.credentials, fam.workspaceId, fam.lovedOneId),
    );
    expect(statuses).toEqual(Array(24).fill(404));
  });

  it('when a secret is retired or the integration deactivated, then every later request is refused by both', async () => {
    const { partner } = await linkedPair('client-keys');
    const partners = partnerStore(d.gateway.store.db, d.gateway.credentials);
    const next = await partners.rotate(partner.institutionId);
    expect(await acrossChange(partner, 'client-keys', () => partners.retire(partner.institutionId, partner.secretId))).toEqual(Array(24).fill(401));
    expect(await acrossChange(partner, 'client-keys', () => partners.deactivate(partner.institutionId), { secret: next.value })).toEqual(Array(24).fill(403));
    await partners.activate(partner.institutionId);
    expect((await send(partner, 'client-keys', { secret: next.value })).status).toBe(202);
  });

  it('when the client is re-linked to another loved one, then later events go there and none of them to the first', async () => {
    const { partner, fam } = await linkedPair('client-move');
    const other = await family(d.gateway.store.db, d.gateway.credentials, d.gateway.config);
    const relink = async () => {
      await setFamilyShare(d.pipe, partner, 'client-move', false);
      const on = await setFamilyShare(d.pipe, partner, 'client-move', true);
      expect((await enterLinkCode(d.gateway.bus, d.gateway.config, other, on.json.link_code)).status).toBe(200);
    };
    let changing = true;
    const load = (async () => {
      while (changing) await send(partner, 'client-move');
    })();
    await relink();
    const after = await Promise.all(Array.from({ length: 12 }, () => send(partner, 'client-move')));
    changing = false;
    await load;
    expect(after.map((r) => r.status)).toEqual(Array(12).fill(202));
    await drained(d.gateway.bus, d.gateway.config);
    const ids = after.map((r) => r.json.event_id as string);
    const rows = await careEvents(d.gateway.store.db)
      .find({ _id: { $in: ids } })
      .toArray();
    expect(rows.map((r) => r.lovedOneId)).toEqual(Array(12).fill(other.lovedOneId));
    expect(await careEvents(d.gateway.store.db).countDocuments({ _id: { $in: ids }, lovedOneId: fam.lovedOneId })).toBe(0);
  });

  it('when a purge returns while events are in flight, then none received before it is stored', async () => {
    const { partner, fam } = await linkedPair('client-purge');
    const before = await Promise.all(Array.from({ length: 20 }, () => send(partner, 'client-purge')));
    expect(before.map((r) => r.status)).toEqual(Array(20).fill(202));
    expect((await purge(d.pipe, partner, 'client-purge')).status).toBe(200);
    await drained(d.gateway.bus, d.gateway.config);
    expect(await careEvents(d.gateway.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(0);
  });
});
