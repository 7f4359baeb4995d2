// Taking a loved one's record away: a page saying what the download holds, then the file itself,
// as FHIR R4 or plain JSON. Only the primary caregiver may take it; another member is refused (403).
import type { Db } from 'mongodb';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import { canManage } from '../family/circle.js';
import type { LovedOneRecord, MemberRecord } from '../family/records.js';
import { text } from '../http/reply.js';
import { aideNamer } from './people.js';
import { readCareRecord, recordAsFhir, recordAsJson } from './recordExport.js';

/** Room in a reply for its status, headers and framing, beside the file. */
const REPLY_HEAD_BYTES = 2048;

/** The downloads, by the path's last part. */
export const EXPORT_FORMATS = {
  fhir: { label: 'FHIR R4 Bundle', type: 'application/fhir+json; charset=utf-8', suffix: 'fhir.json' },
  json: { label: 'Plain JSON', type: 'application/json; charset=utf-8', suffix: 'json' },
} as const;

export type ExportContext = { caller: SessionCaller; member: MemberRecord; lovedOne: LovedOneRecord } | HttpReplyEnvelope;

/** "rosa-rivera-record-2026-11-27.fhir.json": ASCII only, for every browser's save dialog. */
const fileName = (lovedOne: LovedOneRecord, now: Date, suffix: string) =>
  `${
    lovedOne.displayName
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'loved-one'
  }-record-${now.toISOString().slice(0, 10)}.${suffix}`;

export function exportHandlers(
  h: AppHelpers,
  db: Db,
  maxReplyBytes: number,
  resolve: (req: HttpRequestEnvelope, lovedOneId: string, path: string) => Promise<ExportContext>,
) {
  const refused = (caller: SessionCaller, lovedOne: LovedOneRecord) =>
    h.pageFor(
      403,
      'Only the primary caregiver',
      <>
        <h1>Only the primary caregiver can download the record</h1>
        <section class="card">
          <p>
            {lovedOne.displayName}'s whole record is downloaded by the family's primary caregiver. Ask them for a copy, or read it on{' '}
            <a href={`/care/${encodeURIComponent(lovedOne._id)}`}>{lovedOne.displayName}'s page</a>.
          </p>
        </section>
      </>,
      caller,
    );

  return {
    page: async (req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> => {
      const id = params.lovedOneId ?? '';
      const ctx = await resolve(req, id, `/care/${encodeURIComponent(id)}/export`);
      if ('status' in ctx) return ctx;
      const { caller, member, lovedOne } = ctx;
      if (!canManage(member)) return refused(caller, lovedOne);
      const base = `/care/${encodeURIComponent(lovedOne._id)}/export`;
      return h.pageFor(
        200,
        `${lovedOne.displayName}: download the record`,
        <>
          <h1>Download {lovedOne.displayName}'s record</h1>
          <section class="card" id="export">
            <p>
              One file with everything carecircle holds about {lovedOne.displayName}: what the agency sent, what the family added, mail to the family inbox, the
              records from connected health portals, the medication list with its history, appointments and tasks.
            </p>
            <p>
              <strong>It holds health information.</strong> Keep it where only you can read it, and share it only with people who care for{' '}
              {lovedOne.displayName} (a new doctor, another health app).
            </p>
            <ul class="export-formats">
              <li>
                <a href={`${base}/fhir`} download id="export-fhir">
                  Download as FHIR R4
                </a>{' '}
                <span class="muted">(a FHIR Bundle: what health systems and health apps read)</span>
              </li>
              <li>
                <a href={`${base}/json`} download id="export-json">
                  Download as plain JSON
                </a>{' '}
                <span class="muted">(every field as carecircle keeps it)</span>
              </li>
            </ul>
            <p>
              <a href={`/care/${encodeURIComponent(lovedOne._id)}`}>Back to {lovedOne.displayName}'s page</a>
            </p>
          </section>
        </>,
        caller,
      );
    },
    file: async (req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> => {
      const id = params.lovedOneId ?? '';
      const format = params.format === 'fhir' || params.format === 'json' ? params.format : null;
      const ctx = await resolve(req, id, `/care/${encodeURIComponent(id)}/export`);
      if ('status' in ctx) return ctx;
      const { caller, member, lovedOne } = ctx;
      if (!canManage(member)) return refused(caller, lovedOne);
      if (!format)
        return h.pageFor(
          404,
          'No such format',
          <>
            <h1>No such download</h1>
            <section class="card">
              <p>
                The record downloads as <a href={`/care/${encodeURIComponent(lovedOne._id)}/export`}>FHIR R4 or plain JSON</a>.
              </p>
            </section>
          </>,
          caller,
        );
      const now = new Date();
      const record = await readCareRecord(h.store, db, lovedOne, now);
      const by = await aideNamer(db, record.events);
      const body = format === 'fhir' ? recordAsFhir(record, by) : recordAsJson(record, by);
      const f = EXPORT_FORMATS[format];
      const file = JSON.stringify(body);
      // The file travels as one reply, its text escaped inside the reply's JSON: say so plainly
      // rather than let the bus refuse it.
      if (Buffer.byteLength(JSON.stringify(file)) + REPLY_HEAD_BYTES > maxReplyBytes)
        return h.pageFor(
          413,
          'The record is too large to download',
          <>
            <h1>{lovedOne.displayName}'s record is too large to download in one file</h1>
            <section class="card">
              <p>
                This carecircle sends files of at most {Math.floor(maxReplyBytes / 1024)} KB (its MAX_REPLY_BYTES setting). Ask whoever runs it to raise the
                limit, or read the record page by page with an assistant (<code>list_care_events</code>).
              </p>
            </section>
          </>,
          caller,
        );
      return text(200, file, f.type, {
        'content-disposition': `attachment; filename="${fileName(lovedOne, now, f.suffix)}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
    },
  };
}
