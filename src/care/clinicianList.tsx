// The clinicians' medication list (from a connected health portal) beside the family's schedule on
// the medications page: one row a medication, each difference said in words above the table.
import { amountOf, type Medication } from '../family/medications.js';
import { compareMedications, type PortalMedication } from '../family/portalRecords.js';

const STATUS_WORDS: Record<string, string> = { active: 'Active', stopped: 'Stopped', completed: 'Completed', cancelled: 'Cancelled', 'on-hold': 'On hold' };

export function ClinicianListBlock({ family, portal, lovedOneId }: { family: Medication[]; portal: PortalMedication[]; lovedOneId: string }) {
  const active = family.filter((m) => m.current.status === 'active').map((m) => ({ name: m.current.name, amount: amountOf(m.current) }));
  const rows = compareMedications(active, portal);
  const differences = rows.flatMap((r) => (r.difference ? [r.difference] : []));
  const portals = [...new Set(portal.map((p) => p.portal))].map((p) => `${p}'s portal`).join(' and ');
  return (
    <section class="card clinician-list" id="clinician-list" aria-labelledby="clinician-list-title">
      <h2 id="clinician-list-title">The clinicians' list beside the family's schedule</h2>
      <p class="muted">
        The doctor's list is the medication list from {portals}; the family's schedule is the{' '}
        <a href={`/care/${encodeURIComponent(lovedOneId)}/medication-list`}>medication list</a> kept here. Medicines are matched on the first word of their
        names, in any case (“metoprolol” matches “Metoprolol tartrate 25 mg tablet”). A difference is a question for the clinician, not an instruction.
      </p>
      {differences.length ? (
        <ul class="med-differences" id="med-differences">
          {differences.map((d) => (
            <li class={`med-difference med-${d.kind.replace(/_/g, '-')}`}>
              <span class="badge flag">Differs</span> <strong>{d.words}.</strong>
            </li>
          ))}
        </ul>
      ) : (
        <p id="med-differences-none">The two lists agree.</p>
      )}
      <div class="scroll">
        <table class="stack" id="clinician-list-table">
          <caption>Each medicine on either list</caption>
          <thead>
            <tr>
              <th scope="col">The family's schedule</th>
              <th scope="col">The doctor's list</th>
              <th scope="col">Difference</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr class={r.difference ? 'med-differs' : undefined}>
                <td data-label="The family's schedule">{r.family ? [r.family.name, r.family.amount].filter(Boolean).join(', ') : 'Not scheduled'}</td>
                <td data-label="The doctor's list">
                  {r.portal ? (
                    <>
                      {r.portal.name} ({STATUS_WORDS[r.portal.status] ?? r.portal.status})
                      {r.portal.dosage ? <span class="muted">: {r.portal.dosage}</span> : null}
                    </>
                  ) : (
                    'Not listed'
                  )}
                </td>
                <td data-label="Difference">{r.difference ? <strong>{r.difference.words}</strong> : 'None'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
