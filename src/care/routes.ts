// The care pages' routes on the app host: a loved one's timeline, medications (today's doses and
// the medication list with its forms), vital signs, the family's own entries, and the record's download.
import { appPage } from '../app/routeTable.js';
import { defineRoutes } from '../slice/contract.js';

export const CARE_ROUTES = defineRoutes({
  careTimeline: appPage('/care/:lovedOneId', ['GET']),
  careMedications: appPage('/care/:lovedOneId/medications', ['GET']),
  careVitals: appPage('/care/:lovedOneId/vitals', ['GET']),
  careMedicationList: appPage('/care/:lovedOneId/medication-list', ['GET']),
  careMedicationAdd: appPage('/care/:lovedOneId/medication-list/new', ['GET', 'POST']),
  careMedicationEdit: appPage('/care/:lovedOneId/medication-list/:medicationId/edit', ['GET', 'POST']),
  careMedicationStop: appPage('/care/:lovedOneId/medication-list/:medicationId/stop', ['GET', 'POST']),
  // The family's own entries: add one of a kind, read one with its versions, correct or withdraw it.
  careAdd: appPage('/care/:lovedOneId/add/:kind', ['GET', 'POST']),
  careEntry: appPage('/care/:lovedOneId/entries/:entryId', ['GET']),
  careEntryCorrect: appPage('/care/:lovedOneId/entries/:entryId/correct', ['GET', 'POST']),
  careEntryWithdraw: appPage('/care/:lovedOneId/entries/:entryId/withdraw', ['GET', 'POST']),
  // The whole record, for the primary caregiver: a page saying what it holds, then the file (fhir or json).
  careExport: appPage('/care/:lovedOneId/export', ['GET']),
  careExportFile: appPage('/care/:lovedOneId/export/:format', ['GET']),
});
