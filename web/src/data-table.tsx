import type { ComponentChildren } from 'preact';

/** One column of a list table: its heading, its cell for a row, and a class for both. */
export interface Column<Row> {
  readonly label: string;
  /** `num` right-aligns; `wide-only` hides the column on a phone. */
  readonly class?: string;
  readonly cell: (row: Row) => ComponentChildren;
}

/** A list as a table that scrolls sideways inside its box when a phone is too narrow for it. */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  rowClass,
  tableClass = 'list',
}: {
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  rowKey: (row: Row) => string | number;
  rowClass?: (row: Row) => string;
  tableClass?: string;
}) {
  return (
    <div class="table-wrap">
      <table class={tableClass}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col" class={column.class}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} class={rowClass?.(row)}>
              {columns.map((column) => (
                <td key={column.label} class={column.class}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
