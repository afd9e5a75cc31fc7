// Tables shared by several pages: the head row, the runs of the machine room, and a ledger's
// entries on paper.

import type { Amount } from '../lib/money';
import { formatAmount, formatMicroUsd } from '../lib/money';
import { count, dateTime, percentOf, seconds, timeOfDay } from '../lib/format';
import { isScripted } from '../session';
import { Badge, StatusBadge } from './terminal';

/** A column: its label, whether it holds figures (right-aligned), and whether a phone leaves it
 * out (its content then shows under the row's description). */
export type Column = string | { label: string; numeric?: boolean; name?: string; wide?: boolean };

export function THead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => {
          const col = typeof c === 'string' ? { label: c } : c;
          return (
            <th
              key={col.label || col.name}
              scope="col"
              class={[col.numeric ? 'n' : '', col.wide ? 'wide-only' : ''].filter(Boolean).join(' ') || undefined}
              aria-label={col.name}
            >
              {col.label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

export interface RunRow {
  id: string;
  started_at: string;
  channel: string;
  model: string;
  provider?: string;
  status: string;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  cost_micro_usd: number;
  latency_ms: number;
  email?: string | null;
  anonymous?: boolean;
  /** The person's message that began the run. */
  question?: string | null;
}

/** A question cut to one table cell. */
export function shortQuestion(q: string | null | undefined): string {
  if (!q) return '—';
  const line = q.split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

const n = (label: string): Column => ({ label, numeric: true });

/** One row per turn; with `owners`, who ran it (the operator's view of every visitor). */
export function RunsTable({ runs, caption, owners }: { runs: RunRow[]; caption: string; owners?: boolean }) {
  // On a phone the time, question, cost and status stay; the rest steps aside.
  const wide = (label: string, numeric = false): Column => ({ label, numeric, wide: true });
  const columns: Column[] = [
    'time',
    'question',
    ...(owners ? [wide('owner')] : []),
    wide('channel'),
    wide('model'),
    wide('in', true),
    wide('cached', true),
    wide('out', true),
    n('cost'),
    wide('latency', true),
    'status',
  ];
  return (
    <div class="t-scroll" tabIndex={0} role="region" aria-label={caption}>
      <table class="t-table">
        <caption class="visually-hidden">{caption}</caption>
        <THead columns={columns} />
        <tbody>
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={`/runs/${r.id}`}>{owners ? dateTime(r.started_at) : timeOfDay(r.started_at)}</a>
              </td>
              <td class="t-question" title={r.question ?? undefined}>
                {shortQuestion(r.question)}
              </td>
              {owners ? (
                <td class="wide-only">
                  {r.email ?? '(anonymous)'} {r.anonymous ? <Badge>anon</Badge> : null}
                </td>
              ) : null}
              <td class="t-muted wide-only">{r.channel}</td>
              <td class="t-muted wide-only">{isScripted(r.provider, r.model) ? `${r.model} (scripted)` : r.model}</td>
              <td class="num n wide-only">{count(r.input_tokens)}</td>
              <td class={`num n wide-only ${r.cached_tokens > 0 ? 't-accent' : 't-zero'}`}>{percentOf(r.cached_tokens, r.input_tokens)}</td>
              <td class="num n wide-only">{count(r.output_tokens)}</td>
              <td class="num n">{formatMicroUsd(r.cost_micro_usd)}</td>
              <td class="num n wide-only">{seconds(r.latency_ms)}</td>
              <td>
                <StatusBadge status={r.status} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export interface EntryRow {
  key: string;
  line?: number;
  date: string;
  description: string;
  category: string;
  amount: Amount;
  /** Money in or out, for a preview a person checks before saying yes. */
  direction?: 'in' | 'out';
}

/** Rows left out of the middle of a preview: after which row, and how many. */
export interface Omitted {
  after: number;
  count: number;
}

/** A ledger's entries: date, description, category, amount (and the file's line and the direction, for a preview). */
export function EntriesTable({ rows, caption, visibleCaption, omitted }: { rows: EntryRow[]; caption: string; visibleCaption?: boolean; omitted?: Omitted }) {
  const lines = rows.some((r) => r.line !== undefined);
  const directions = rows.some((r) => r.direction !== undefined);
  const columns: Column[] = [
    ...(lines ? [{ label: 'line', wide: true }] : []),
    'date',
    'description',
    ...(directions ? ['in/out'] : []),
    { label: 'category', wide: true },
    n('amount'),
  ];
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={caption}>
      <table class="ledger-table">
        <caption class={visibleCaption ? 'label faint' : 'visually-hidden'}>{caption}</caption>
        <THead columns={columns} />
        <tbody>
          {rows.flatMap((r, i) => {
            const row = (
              <tr key={r.key}>
                {lines ? <td class="num wide-only">{r.line}</td> : null}
                <td class="num">{r.date}</td>
                <td>
                  {r.description}
                  <span class="tiny faint narrow-only">
                    {lines ? `line ${r.line} · ` : ''}
                    {r.category}
                  </span>
                </td>
                {directions ? <td class="muted">{r.direction}</td> : null}
                <td class="muted wide-only">{r.category}</td>
                <td class="num n">{formatAmount(r.amount)}</td>
              </tr>
            );
            if (!omitted || omitted.count === 0 || i !== omitted.after) return [row];
            return [
              row,
              <tr key="omitted" class="omitted">
                <td colSpan={columns.length} class="muted small">
                  … {omitted.count} more row{omitted.count === 1 ? '' : 's'}
                </td>
              </tr>,
            ];
          })}
        </tbody>
      </table>
    </div>
  );
}
