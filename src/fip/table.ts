// The human output of kubectl fip: tables aligned as kubectl aligns them (columns padded to their
// widest cell, three spaces apart, no trailing blanks), and kubectl's short ages.
import { printable } from '../clip.js';

/**
 * The most characters of a command-line argument an error quotes: the argument was typed, but
 * perhaps by a script, and 100,000 characters came back whole after the help commander shows.
 */
export const ARGUMENT_LIMIT = 200;

/**
 * The widest a column is padded to. Past a key of the longest names Kubernetes allows; a longer cell
 * (an object's data: a 1 MB node name in an attribute) overflows its row alone, rather than every
 * row being padded to it: 10,000 rows of a megabyte each are 10 GB on the terminal.
 */
export const MAX_PADDED_WIDTH = 600;

/** Columns padded to the widest cell (up to MAX_PADDED_WIDTH); the last column is not padded. */
export function formatTable(headers: readonly string[], rawRows: readonly (readonly string[])[]): string {
  const rows = rawRows.map((r) => r.map(printable));
  const fits = (cell: string) => (cell.length <= MAX_PADDED_WIDTH ? cell.length : 0);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => fits(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** kubectl's age: `45s`, `12m`, `5h`, `3d` (the largest whole unit; `2m30s` under 10 minutes). */
export function shortAge(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '<unknown>';
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
