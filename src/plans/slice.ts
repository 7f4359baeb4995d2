// The plans slice: a loved one's appointments and shared tasks as app pages, and each member's
// private calendar feed of the appointments.
import { appHelpers } from '../app/helpers.js';
import { defineSlice, handlers } from '../slice/contract.js';
import { CALENDAR_FEED_INDEXES } from './calendar.js';
import { feedPages } from './feedPages.js';
import { planPages } from './pages.js';
import { PLAN_INDEXES } from '../family/plans.js';
import { PLAN_ROUTES } from './routes.js';

export const plansSlice = defineSlice({
  name: 'plans',
  routes: PLAN_ROUTES,
  indexes: { ...PLAN_INDEXES, ...CALENDAR_FEED_INDEXES },
  serve: (ctx) => {
    const h = appHelpers(ctx.config, ctx.db, ctx.credentials, ctx.timelines);
    const p = planPages(h, ctx.db, ctx.credentials);
    const f = feedPages(h, ctx.db, ctx.credentials, ctx.config);
    return handlers(PLAN_ROUTES)
      .on('appointments', 'GET', p.appointmentsGet)
      .on('appointments', 'POST', p.appointmentsPost)
      .on('appointmentEdit', 'GET', p.appointmentEditGet)
      .on('appointmentEdit', 'POST', p.appointmentEditPost)
      .on('appointmentCancel', 'GET', p.appointmentCancelGet)
      .on('appointmentCancel', 'POST', p.appointmentCancelPost)
      .on('tasks', 'GET', p.tasksGet)
      .on('tasks', 'POST', p.tasksPost)
      .on('taskMove', 'POST', p.taskMovePost)
      .on('calendarSettings', 'GET', f.settingsPage)
      .on('calendarSettings', 'POST', f.settingsPost)
      .on('calendarFeed', 'GET', f.feed)
      .done();
  },
});
