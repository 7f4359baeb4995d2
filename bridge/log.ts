// The bridge's diagnostics: plain lines on stderr, never stdout (stdout carries protocol lines only).

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Log {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function createLog(level: LogLevel, write: (text: string) => void = (text) => process.stderr.write(text)): Log {
  const threshold = LOG_LEVELS.indexOf(level);
  const at = (name: Exclude<LogLevel, 'silent'>) => (message: string) => {
    if (LOG_LEVELS.indexOf(name) < threshold) return;
    write(`carecircle-mcp${name === 'info' ? '' : ` [${name}]`}: ${message}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
