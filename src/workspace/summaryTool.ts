// get_health_summary: a loved one's health at a glance for an assistant: conditions and allergies
// from connected health portals, the active medications of each source (the family's schedule,
// the agency's doses, the clinicians' list), and the latest reading of each vital sign with its source.
import { z } from 'zod';
import { aideName, authorOf } from '../family/careEventTypes.js';
import { amountOf, type MedicationList } from '../family/medications.js';
import {
  allergiesOf,
  conditionsOf,
  medicationKey,
  PORTAL_HEALTH_TYPES,
  PORTAL_READING_TYPES,
  portalMedicationsOf,
  portalReadingsOf,
} from '../family/portalRecords.js';
import type { CareEventRecord, WorkspaceStore } from '../family/records.js';
import { unitText, vitalKind } from '../family/vitalKinds.js';
import { implementTool, type CallContext, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import type { WorkspaceCaller } from './caller.js';
import { notAuthorized } from './careReader.js';
import { TOOL_SCOPES } from './scopes.js';

/** The agency's medications are those it recorded a dose of in this many days. */
export const AGENCY_MEDICATION_DAYS = 30;
const MAX_EVENTS = 2000;

const source = z.enum(['agency', 'family', 'portal']);

export const healthSummaryOutput = z.object({
  lovedOneId: z.string(),
  conditions: z.array(z.object({ name: z.string(), clinicalStatus: z.string(), onset: z.string().optional(), from: z.string() })),
  allergies: z.array(
    z.object({ substance: z.string(), clinicalStatus: z.string(), criticality: z.string().optional(), reaction: z.string().optional(), from: z.string() }),
  ),
  medications: z.object({
    family: z.array(z.object({ name: z.string(), amount: z.string().optional(), schedule: z.string() })),
    agency: z.array(z.object({ name: z.string(), dosesRecorded: z.number().int(), lastGiven: z.string() })),
    portal: z.array(z.object({ name: z.string(), status: z.string(), dosage: z.string().optional(), from: z.string() })),
  }),
  vitals: z.array(
    z.object({
      kind: z.string(),
      label: z.string(),
      value: z.number(),
      second: z.number().optional(),
      unit: z.string(),
      at: z.string(),
      source,
      from: z.string(),
    }),
  ),
});

type Summary = z.output<typeof healthSummaryOutput>;

export const SUMMARY_TOOLS = {
  getHealthSummary: {
    name: 'get_health_summary',
    scope: TOOL_SCOPES.get_health_summary,
    title: "Get a loved one's health summary",
    description: `A loved one's health at a glance: conditions and allergies from connected health portals; active medications from each source (the family's schedule, the agency: medicines it recorded a dose of in the last ${AGENCY_MEDICATION_DAYS} days, and the clinicians' list in the portal), listed side by side and never merged; and the latest reading of each vital sign with its source (agency, family or portal) and units as sent. Each item says where it came from.`,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    output: healthSummaryOutput,
  },
} as const satisfies Record<string, ToolDeclaration>;

const scheduleWords = (s: { asNeeded: boolean; times: string[]; days: string[]; timeZone: string }) =>
  s.asNeeded ? 'as needed' : `at ${s.times.join(', ')}${s.days.length ? ` on ${s.days.join(', ')}` : ' every day'} (${s.timeZone})`;

/** The agency's medicines: one per name (matched as the clinicians' list is), the latest dose's name. */
function agencyMedications(doses: CareEventRecord[]): Summary['medications']['agency'] {
  const byKey = new Map<string, Summary['medications']['agency'][number]>();
  for (const e of doses) {
    const name = typeof e.payload.medication_name === 'string' ? e.payload.medication_name.trim() : '';
    if (!name) continue;
    const key = medicationKey(name) || name.toLowerCase();
    const known = byKey.get(key);
    if (known) known.dosesRecorded++;
    else byKey.set(key, { name, dosesRecorded: 1, lastGiven: e.occurredAt.toISOString() });
  }
  return [...byKey.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The newest reading of each vital kind, whoever recorded it. */
function latestVitals(events: CareEventRecord[]): Summary['vitals'] {
  const all: Summary['vitals'] = [];
  for (const r of portalReadingsOf(events))
    all.push({
      kind: r.kind.key,
      label: r.kind.label,
      value: r.value,
      ...(r.second !== undefined ? { second: r.second } : {}),
      unit: unitText(r.unit),
      at: r.at.toISOString(),
      source: 'portal',
      from: `${r.portal}'s portal`,
    });
  for (const e of events) {
    if (e.eventType !== 'vital_recorded' || typeof e.payload.value !== 'number' || !Number.isFinite(e.payload.value)) continue;
    const kind = vitalKind(e.payload.vital_type);
    const second = e.payload.secondary_value;
    all.push({
      kind: kind.key,
      label: kind.label,
      value: e.payload.value,
      ...(typeof second === 'number' && Number.isFinite(second) ? { second } : {}),
      unit: unitText(e.payload.unit),
      at: e.occurredAt.toISOString(),
      source: e.source === 'family' ? 'family' : 'agency',
      from: e.source === 'family' ? authorOf(e) : (aideName(e) ?? 'the agency'),
    });
  }
  const latest = new Map<string, Summary['vitals'][number]>();
  for (const v of all) if (!latest.has(v.kind) || latest.get(v.kind)!.at < v.at) latest.set(v.kind, v);
  return [...latest.values()].sort((a, b) => a.label.localeCompare(b.label));
}

export function summaryTools(store: WorkspaceStore, medications: MedicationList): ToolDefinition[] {
  return [
    implementTool(SUMMARY_TOOLS.getHealthSummary, {
      input: z.object({ lovedOneId: z.string().min(1).max(64).describe('The loved one (from list_loved_ones).') }).strict(),
      handler: async ({ lovedOneId }, ctx: CallContext) => {
        const c = ctx.caller as WorkspaceCaller;
        const membership = c.tenant === 'family' ? await store.workspaceOf(c.uid) : null;
        const lovedOne = membership ? await store.lovedOneIn(membership.workspace._id, lovedOneId) : null;
        if (!lovedOne) throw notAuthorized();
        const since = new Date(Date.now() - AGENCY_MEDICATION_DAYS * 86_400_000);
        const [portal, doses, readings, family] = await Promise.all([
          store.listCareEvents(lovedOne._id, { types: [...PORTAL_HEALTH_TYPES], limit: MAX_EVENTS }),
          store.listCareEventsFrom(lovedOne._id, { since, types: ['med_administered'], limit: MAX_EVENTS }, 'partner'),
          store.listCareEvents(lovedOne._id, { types: ['vital_recorded', ...PORTAL_READING_TYPES], limit: MAX_EVENTS }),
          medications.list(lovedOne._id),
        ]);
        const from = (p: { portal: string }) => `${p.portal}'s portal`;
        const structured: Summary = {
          lovedOneId: lovedOne._id,
          conditions: conditionsOf(portal.events).map((x) => ({
            name: x.name,
            clinicalStatus: x.clinicalStatus,
            ...(x.onset ? { onset: x.onset } : {}),
            from: from(x),
          })),
          allergies: allergiesOf(portal.events).map((x) => ({
            substance: x.substance,
            clinicalStatus: x.clinicalStatus,
            ...(x.criticality ? { criticality: x.criticality } : {}),
            ...(x.reaction ? { reaction: x.reaction } : {}),
            from: from(x),
          })),
          medications: {
            family: family
              .filter((m) => m.current.status === 'active')
              .map((m) => ({
                name: m.current.name,
                ...(amountOf(m.current) ? { amount: amountOf(m.current) } : {}),
                schedule: scheduleWords(m.current.schedule),
              })),
            agency: agencyMedications(doses.events),
            portal: portalMedicationsOf(portal.events)
              .filter((m) => m.status === 'active')
              .map((m) => ({ name: m.name, status: m.status, ...(m.dosage ? { dosage: m.dosage } : {}), from: from(m) })),
          },
          vitals: latestVitals(readings.events),
        };
        const n = structured.medications;
        const count = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
        return {
          summary: `${lovedOne.displayName}: ${count(structured.conditions.length, 'condition', 'conditions')}, ${count(structured.allergies.length, 'allergy', 'allergies')}; active medications: ${n.family.length} in the family's schedule, ${n.agency.length} the agency gave, ${n.portal.length} on the clinicians' list; latest readings of ${count(structured.vitals.length, 'vital sign', 'vital signs')}.`,
          structured,
        };
      },
    }),
  ];
}
