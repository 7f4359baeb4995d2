// The plans' routes on the app host: a loved one's appointments and shared tasks, the member's
// calendar feed in Settings, and the feed itself at its secret URL.
import { appPage } from '../app/routeTable.js';
import { defineRoutes } from '../slice/contract.js';

export const PLAN_ROUTES = defineRoutes({
  appointments: appPage('/care/:lovedOneId/appointments', ['GET', 'POST']),
  appointmentEdit: appPage('/care/:lovedOneId/appointments/:appointmentId', ['GET', 'POST']),
  appointmentCancel: appPage('/care/:lovedOneId/appointments/:appointmentId/cancel', ['GET', 'POST']),
  tasks: appPage('/care/:lovedOneId/tasks', ['GET', 'POST']),
  // take, hand-back or done
  taskMove: appPage('/care/:lovedOneId/tasks/:taskId/:move', ['POST']),
  calendarSettings: appPage('/settings/calendar', ['GET', 'POST']),
  // The path carries the feed's secret, so the request log shows the pattern only. A calendar app
  // sends no cookie and no Origin: nothing but the token is read.
  calendarFeed: { hosts: ['app'], path: '/calendar/:feed', methods: ['GET'], logPattern: true },
});
