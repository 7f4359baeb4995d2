// The care pages' routes on the app host: a loved one's timeline, medications and vital signs.
import { appPage } from '../app/routeTable.js';
import { defineRoutes } from '../slice/contract.js';

export const CARE_ROUTES = defineRoutes({
  careTimeline: appPage('/care/:lovedOneId', ['GET']),
  careMedications: appPage('/care/:lovedOneId/medications', ['GET']),
  careVitals: appPage('/care/:lovedOneId/vitals', ['GET']),
});
