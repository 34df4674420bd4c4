// A table whose columns sort on a click (again: the other way). On a narrow screen each row
// becomes a card, its cells labelled by their column (dashboard.css).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { visible } from './format.js';

const shown = (value: string | number) => (typeof value === 'string' ? visible(value) : value);

export interface Column<T> {
  readonly label: string;
  /** What the column sorts by. */
  readonly value: (row: T) => string | number;
  readonly show?: (row: T) => ComponentChildren;
}

export function SortableTable<T>(props: {
  label: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  /** Rows shown of how many match (the server sends at most its limit). */
  matched: number;
  empty: string;
  actions?: (row: T) => ComponentChildren;
}) {
  const [sort, setSort] = useState<{ column: number; descending: boolean } | undefined>(undefined);
  const rows = [...props.rows];
  if (sort) {
    const value = props.columns[sort.column]!.value;
    const direction = sort.descending ? -1 : 1;
    // stable: ties keep the server's address order
    rows.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      return x < y ? -direction : x > y ? direction : 0;
    });
  }
  const toggle = (column: number) =>
    setSort(
      sort?.column === column ? { column, descending: !sort.descending } : { column, descending: false },
    );
  if (rows.length === 0) return <p class="empty">{props.empty}</p>;
  return (
    <div class="table-wrap">
      <table aria-label={props.label}>
        <thead>
          <tr>
            {props.columns.map((c, i) => (
              <th
                key={c.label}
                aria-sort={sort?.column === i ? (sort.descending ? 'descending' : 'ascending') : 'none'}
              >
                <button type="button" onClick={() => toggle(i)}>
                  {c.label}
                </button>
              </th>
            ))}
            {props.actions ? <th aria-label="actions" /> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((c) => (
                <td key={c.label} data-label={c.label}>
                  {c.show ? c.show(row) : shown(c.value(row))}
                </td>
              ))}
              {props.actions ? <td class="actions">{props.actions(row)}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
      {props.matched > rows.length ? (
        <p class="more">
          {rows.length} of {props.matched} shown: search to narrow them down
        </p>
      ) : null}
    </div>
  );
}
