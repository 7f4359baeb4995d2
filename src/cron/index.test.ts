import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/harness/database.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/mongo.js';
import { startCron } from './index.js';

const t = useTestDatabase();

describe('cron - a store that is down', () => {
  it('when the lease cannot be asked for (the store is gone), then the tick logs a failed sweep and the process carries on', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (c, _e, done) => (lines.push(String(c)), done()) })) as unknown as Logger;
    const gone = await t.connect();
    await gone.close();
    let ran = 0;
    const cron = startCron({ db: gone.db } as Store, log, [{ name: 'every-minute', schedule: '* * * * *', run: async () => (ran++, {}) }]);
    try {
      await expect(cron.tick()).resolves.toBeUndefined();
      expect(ran).toBe(0);
      expect(lines.some((l) => l.includes('"msg":"sweep failed"') && l.includes('"job":"every-minute"'))).toBe(true);
    } finally {
      await cron.stop();
    }
  });
});
