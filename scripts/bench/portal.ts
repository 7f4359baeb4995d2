// Part (f): a portal sync of a long record. A local SMART on FHIR server (test/harness/smartServer.ts)
// holds one patient with BENCH_PORTAL_OBSERVATIONS observations and BENCH_PORTAL_OTHERS other
// resources; carecircle connects to it as a family would, and the first sync (run by the
// confirmation) and a sync with nothing changed are timed, with the requests the portal served.
import { performance } from 'node:perf_hooks';
import { MongoClient } from 'mongodb';
import { databaseName } from '../../src/store/mongo.js';
import { PORTAL_READS } from '../../src/portal/resources.js';
import { seedVolume, startSmartServer } from '../../test/harness/smartServer.js';
import { signUpFamily } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { finding, fixed, heading, note, progress, table } from './report.js';

export async function benchPortal(infra: Infra): Promise<void> {
  heading('(f) Portal sync: a long record from a local SMART on FHIR server');
  const children: Child[] = [];
  // The first sync of a long record is answered in the request when the gateway waits long enough: here it does, so it is timed whole.
  const { env, cleanup } = await carecircleEnv(infra.database('portal'), { BUS_TIMEOUT_MS: '600000', GATEWAY_RETRY_WINDOW_MS: '600000' });
  const smart = await startSmartServer({ clientId: 'carecircle', redirectUri: `${env.APP_URL}/portal/callback`, pageSize: KNOBS.portalPageSize });
  const client = await new MongoClient(env.MONGO_URL!).connect();
  try {
    const [observations, others] = [KNOBS.portalObservations, KNOBS.portalOthers];
    progress(`portal: seeding ${observations} observations and ${others} other resources at the local portal`);
    await seedVolume(smart.repo, 'volume', observations, others);
    smart.accounts.volume = { patient: 'volume', fhirUser: 'Patient/volume' };
    smart.signInAs.account = 'volume';
    env.FHIR_ISSUERS = JSON.stringify([{ name: 'Bench Health', url: smart.fhirBase, clientId: 'carecircle' }]);
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const appUrl = env.APP_URL!;
    const family = await signUpFamily(appUrl, env);
    const post = async (path: string, body = '') => {
      const res = await fetch(`${appUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: family.cookie, origin: appUrl, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      if (res.status !== 303) throw new Error(`POST ${path}: ${res.status} ${(await res.text()).slice(0, 500)}`);
      return res.headers.get('location') ?? '';
    };
    const base = `/care/${family.lovedOneId}/portal`;
    const back = await smart.signIn(await post(`${base}/connect`, 'issuer=0'));
    const done = await fetch(back, { redirect: 'manual', headers: { cookie: family.cookie } });
    const key = /#portal-(\w+)$/.exec(done.headers.get('location') ?? '')?.[1];
    if (done.status !== 303 || !key) throw new Error(`the portal's return: ${done.status} ${(await done.text()).slice(0, 500)}`);
    const records = () => client.db(databaseName(env.MONGO_URL!)).collection('care_events').countDocuments({ lovedOneId: family.lovedOneId, source: 'portal' });

    const timed = async (path: string) => {
      const asked = smart.calls.length;
      const t = performance.now();
      await post(path);
      return { seconds: (performance.now() - t) / 1000, requests: smart.calls.length - asked };
    };
    progress('portal: first sync (the confirmation runs it)');
    const first = await timed(`${base}/${key}/confirm`);
    const filed = await records();
    progress(`portal: first sync filed ${filed} records in ${fixed(first.seconds, 1)} s; a sync with nothing changed`);
    const again = await timed(`${base}/${key}/sync`);
    const rate = filed / first.seconds;
    table(
      ['sync', 'records filed', 'seconds', 'records per second', 'requests the portal served'],
      [
        ['first', filed, fixed(first.seconds, 2), fixed(rate, 0), first.requests],
        ['nothing changed', (await records()) - filed, fixed(again.seconds, 2), '–', again.requests],
      ],
    );
    note(
      `One patient with ${observations} observations (two in three vital signs, the rest laboratory) and ${others} conditions, immunizations, visits, medication orders and allergies, ` +
        `served ${KNOBS.portalPageSize} to a page (BENCH_PORTAL_PAGE) by Medplum's FHIR router over its in-memory repository, behind oidc-provider, in the bench's own process. ` +
        `The first sync is the confirmation's POST, timed whole (every page read, then every record filed); requests count the FHIR calls the portal served, the CapabilityStatement among them. ` +
        `The sync with nothing changed asks each of the ${PORTAL_READS.length} searches only for what changed since the first (_lastUpdated=gt).`,
    );
    finding({ part: 'portal', what: `first sync of ${filed} records`, value: `${fixed(rate, 0)} records/s, ${first.requests} requests` });
    finding({
      part: 'portal',
      what: 'sync with nothing changed',
      value: `${again.requests} requests`,
      target: `≤ ${PORTAL_READS.length} (one per search)`,
      meets: again.requests <= PORTAL_READS.length,
    });
  } finally {
    await stopAll(children);
    await client.close();
    await smart.close();
    cleanup();
  }
}
