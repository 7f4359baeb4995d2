// What every gateway needs, built once per process and shared by its surfaces.
import type { Bus } from '../bus/types.js';
import type { Config } from '../config.js';
import type { Limiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/mongo.js';

export interface GatewayDeps {
  config: Config;
  log: Logger;
  bus: Bus;
  store: Store;
  limiter: Limiter;
}
