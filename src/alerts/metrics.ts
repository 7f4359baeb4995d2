// The alerts' Prometheus counters, in the process's one registry.
import { Counter } from 'prom-client';
import { registry } from '../metrics/index.js';

const counter = (name: string, help: string, labelNames: string[]) => new Counter({ name: `carecircle_${name}`, help, labelNames, registers: [registry] });

export const alertMetrics = {
  decided: counter('alerts_decided_total', 'Alerts decided (once per record and rule), by kind.', ['kind']),
  sent: counter('alert_deliveries_sent_total', 'Alert and digest deliveries sent, by channel.', ['channel']),
  failed: counter('alert_deliveries_failed_total', 'Delivery attempts that failed and will be retried, by channel.', ['channel']),
  deadLettered: counter('alert_deliveries_dead_lettered_total', 'Deliveries given up after every retry failed, by channel.', ['channel']),
};
