// The process logger: JSON lines on stdout, with secrets and health details redacted by path.
import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths never written to a log, whatever a caller passes in. */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  '*.authorization',
  '*.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'apiKey',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'idToken',
  'careContext',
  '*.careContext',
  'note_text',
  '*.note_text',
  'body',
  'arguments',
  '*.arguments',
];

export function createLogger(level: string, name = 'carecircle'): Logger {
  return pino({ name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid } });
}
