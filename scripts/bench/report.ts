// What the benchmark prints: markdown tables and notes on stdout, progress on stderr, and the
// closing summary of every ratio against its target.
import os from 'node:os';

export function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

export function heading(text: string): void {
  process.stdout.write(`\n### ${text}\n\n`);
}

export function note(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** A markdown table; the first `textColumns` are left-aligned, the rest (figures) right-aligned. */
export function table(head: string[], rows: (string | number)[][], textColumns = 1): void {
  const line = (cells: (string | number)[]) => `| ${cells.map(String).join(' | ')} |\n`;
  process.stdout.write(line(head));
  process.stdout.write(line(head.map((_, i) => (i < textColumns ? '---' : '---:'))));
  for (const row of rows) process.stdout.write(line(row));
  process.stdout.write('\n');
}

export const fixed = (value: number | undefined, digits = 2): string => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));
export const rate = (value: number): string => value.toFixed(0);
export const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : '–');

export function machineLines(versions: Record<string, string>): string[] {
  const cpus = os.cpus();
  return [
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `- Node ${process.version}`,
    ...Object.entries(versions).map(([name, version]) => `- ${name}: ${version}`),
  ];
}

export interface Finding {
  part: string;
  what: string;
  value: string;
  target?: string;
  /** Whether the target holds; undefined when there is no target or nothing was measured. */
  meets?: boolean;
}

const findings: Finding[] = [];

export function finding(f: Finding): void {
  findings.push(f);
}

export function printSummary(): void {
  heading('Summary');
  table(
    ['part', 'what', 'measured', 'target', ''],
    findings.map((f) => [f.part, f.what, f.value, f.target ?? '', f.meets === undefined ? '' : f.meets ? 'meets' : 'below']),
    2,
  );
}
