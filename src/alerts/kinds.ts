// The kinds of alert carecircle sends, each with its words, whether it may break quiet hours, and
// what a member who never chose gets.

export const ALERT_KINDS = {
  missed_dose: { label: 'Missed doses', urgent: false, byDefault: 'now' },
  flagged_note: { label: 'Falls, hospital visits, emergencies and wounds', urgent: true, byDefault: 'now' },
  out_of_range: { label: 'Readings outside the range the family set', urgent: false, byDefault: 'weekly' },
  late_visit: { label: 'Visits that started late', urgent: false, byDefault: 'weekly' },
  appointment_tomorrow: { label: 'Appointments tomorrow', urgent: false, byDefault: 'weekly' },
  task_unclaimed: { label: 'Tasks due today that nobody has taken', urgent: false, byDefault: 'weekly' },
  inbox_mail: { label: 'New inbox mail', urgent: false, byDefault: 'never' },
} as const satisfies Record<string, { label: string; urgent: boolean; byDefault: DeliveryMode }>;

export type AlertKind = keyof typeof ALERT_KINDS;
export const KIND_NAMES = Object.keys(ALERT_KINDS) as AlertKind[];
export const isAlertKind = (s: string): s is AlertKind => Object.hasOwn(ALERT_KINDS, s);

/** Right away, in the daily or the weekly digest, or not at all. */
export const DELIVERY_MODES = ['now', 'daily', 'weekly', 'never'] as const;
export type DeliveryMode = (typeof DELIVERY_MODES)[number];
export const MODE_LABELS: Record<DeliveryMode, string> = { now: 'Right away', daily: 'Daily digest', weekly: 'Weekly digest', never: 'Never' };

/** The channels an alert can go out on; `email` is built here, web push plugs in beside it. */
export const CHANNEL_NAMES = ['email', 'push'] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];
