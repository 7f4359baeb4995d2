// The official Python MCP SDK (2.x, pinned in test/clients/python/requirements.txt) as a family
// member's assistant: every write tool of the workspace endpoint in the 2026-07-28 era with an API
// key, the consequential ones confirmed through input_required, and what it wrote as the app keeps it.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MedicationList } from '../src/family/medications.js';
import { PlansStore } from '../src/family/plans.js';
import { WorkspaceStore } from '../src/family/records.js';
import { caregiverWithKey } from './harness/identity.js';
import { pythonVenv } from './harness/python.js';
import { repoRoot } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';

const run = promisify(execFile);
const CLIENT = 'test/clients/python';

let svc: TestService;
let python: string;
beforeAll(async () => {
  // The venv first: on a fresh machine it is a pip install (about a minute), then it is reused.
  [python, svc] = await Promise.all([pythonVenv(`${CLIENT}/requirements.txt`), startTestService()]);
}, 300_000);
afterAll(async () => {
  await svc?.stop();
});

describe('the Python MCP SDK 2.x as a family member’s assistant', () => {
  it('when it calls every write tool in 2026-07-28 with an API key, then each is applied once, in the member’s name through the key, and reads back', async () => {
    const who = await caregiverWithKey(svc, 'python@example.com');
    const { stdout } = await run(python, [path.join(repoRoot, CLIENT, 'family_writes.py'), `${svc.config.appUrl}/api/mcp`, who.lovedOneId], {
      env: { PATH: process.env.PATH ?? '', CARECIRCLE_API_KEY: who.apiKey },
      timeout: 60_000,
    });
    const out = JSON.parse(stdout) as { protocolVersion: string; tools: string[]; asked: string[]; results: Record<string, any> };

    expect(out.protocolVersion).toBe('2026-07-28');
    expect(out.tools).toEqual(
      expect.arrayContaining([
        'add_care_note',
        'log_medication_dose',
        'record_vital',
        'add_appointment',
        'add_task',
        'update_task',
        'update_medication',
        'retract_entry',
        'list_medications',
        'list_appointments',
        'list_tasks',
      ]),
    );
    // Changing a medication and withdrawing an entry were asked of the person (input_required), and only those.
    expect(out.asked).toEqual([
      'Change Lisinopril 10 mg for Rosa Rivera (times)?',
      expect.stringMatching(/^Withdraw ".*Written from Python, then withdrawn\..*" from Rosa Rivera's care record, giving the reason "Written twice"\?$/),
    ]);
    // The lists the client read back show its own writes.
    expect(out.results.list_medications.medications).toEqual([
      expect.objectContaining({ name: 'Lisinopril', version: 2, schedule: expect.objectContaining({ times: ['12:00', '20:00'] }) }),
    ]);
    // Today's doses where Rosa is (a zone where it is now past noon): the dose it logged is the 12:00 one, in the member's name through the key.
    expect(out.results.list_medications.today).toEqual([
      expect.objectContaining({ medication: 'Lisinopril', state: 'given', recordedBy: "Test Caregiver's assistant, test" }),
      expect.objectContaining({ medication: 'Lisinopril', state: 'due' }),
    ]);
    expect(out.results.list_appointments.appointments).toEqual([expect.objectContaining({ title: 'Cardiology follow-up' })]);
    expect(out.results.list_tasks.tasks).toEqual([
      expect.objectContaining({ title: 'Pick up the blood pressure cuff', takenBy: expect.objectContaining({ uid: expect.any(String) }) }),
    ]);

    // What the store keeps: each entry once, in the member's name, through the key ("test").
    const store = new WorkspaceStore(svc.store.db, svc.credentials, 'inbox.test', svc.timelines);
    const events = await store.recentEvents(who.lovedOneId, 20);
    const by = (type: string) => events.filter((e) => e.eventType === type);
    // The note is listed as its withdrawal, which names it and the reason; the appointment is filed at its start.
    expect(events.map((e) => e.eventType).sort()).toEqual(['appointment', 'entry_withdrawn', 'med_administered', 'vital_recorded']);
    expect(by('entry_withdrawn')).toEqual([
      expect.objectContaining({ supersedes: out.results.add_care_note.entry.id, payload: expect.objectContaining({ reason: 'Written twice' }) }),
    ]);
    expect(by('med_administered')).toEqual([
      expect.objectContaining({
        payload: { medication_name: 'Lisinopril', dose_amount: 10, dose_unit: 'mg' },
        author: expect.objectContaining({ via: 'assistant', client: 'test' }),
      }),
    ]);
    expect(by('vital_recorded')).toEqual([expect.objectContaining({ payload: { vital_type: 'pulse', value: 68, unit: '/min' } })]);
    const [med] = await new MedicationList(svc.store.db).list(who.lovedOneId);
    expect(med!.current).toMatchObject({ name: 'Lisinopril', version: 2, by: { how: 'assistant', client: 'test' } });
    const plans = new PlansStore(svc.store.db, Date.now, svc.timelines);
    expect((await plans.upcoming(who.lovedOneId, new Date())).map((a) => a.title)).toEqual(['Cardiology follow-up']);
    const [task] = await plans.openTasks(who.lovedOneId);
    expect(task).toMatchObject({ title: 'Pick up the blood pressure cuff', takenBy: expect.any(String) });
  });
});
