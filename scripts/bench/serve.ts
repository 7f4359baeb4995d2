// A carecircle role as a benchmark child process: configured from its environment, it reports
// its listener URLs over IPC and stops cleanly when told to or when the benchmark goes away.
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startService, type Role } from '../../src/service.js';

const role = (process.argv[2] ?? 'all') as Role;
const config = loadConfig();
const service = await startService(role, config, createLogger(config.logLevel));
process.send?.({ type: 'ready', urls: service.urls });

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void service.stop().finally(() => process.exit(0));
};
process.on('message', (m) => m === 'stop' && stop());
process.on('disconnect', stop);
