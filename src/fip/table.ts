// The human output of kubectl fip: tables aligned as kubectl aligns them (columns padded to their
// widest cell, three spaces apart, no trailing blanks), and kubectl's short ages.

/** Columns padded to the widest cell; the last column is not padded. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
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
