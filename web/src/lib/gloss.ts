// How a tool call reads in the margin: its arguments as a short gloss, its result as one line.

import { formatMinor } from './money';

function isMoneyKey(key: string): boolean {
  return key.endsWith('_minor') || key.endsWith('Minor');
}

function moneyLabel(key: string): string {
  return key.replace(/_minor$|Minor$/, '');
}

/** An amount of `currency`, or its bare minor units when the call named no currency (the gloss
 * never guesses one). */
function money(value: number, currency: string | null): string {
  return currency ? formatMinor(value, currency) : `${value} minor units`;
}

function currencyOf(args: Record<string, unknown>): string | null {
  return typeof args.currency === 'string' ? args.currency : null;
}

/** A value as the gloss shows it: money keys formatted, objects as JSON. */
export function glossValue(key: string, value: unknown, currency: string | null = null): string {
  if (isMoneyKey(key) && typeof value === 'number' && Number.isSafeInteger(value)) return money(value, currency);
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The arguments as "key value" pairs joined by " · " (`amount_minor: 2000000` → `amount ₹20,000.00`). */
export function gloss(args: Record<string, unknown> | null | undefined): string {
  if (!args) return '';
  const currency = currencyOf(args);
  return Object.entries(args)
    .map(([key, value]) => `${isMoneyKey(key) ? moneyLabel(key) : key} ${glossValue(key, value, currency)}`)
    .join(' · ');
}

/** Rows of an argument table: money shown formatted with its raw minor units beside it. */
export function argumentRows(args: Record<string, unknown>): { key: string; value: string; raw?: string }[] {
  const currency = currencyOf(args);
  return Object.entries(args).map(([key, value]) =>
    isMoneyKey(key) && typeof value === 'number' && Number.isSafeInteger(value)
      ? currency
        ? { key: moneyLabel(key), value: formatMinor(value, currency), raw: `${value} minor units` }
        : { key: moneyLabel(key), value: money(value, null) }
      : { key, value: glossValue(key, value, currency) },
  );
}

/** The tool's payload without the `<tool_data>` fence the model sees it in. */
export function unfence(summary: string): string {
  const m = /^\s*<tool_data[^>]*>([\s\S]*?)(<\/tool_data>\s*)?$/.exec(summary);
  return m ? (m[1] ?? '').trim() : summary.trim();
}

function longestArray(value: unknown, depth = 0): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (depth > 1 || value === null || typeof value !== 'object') return null;
  let best: unknown[] | null = null;
  for (const v of Object.values(value)) {
    const found = longestArray(v, depth + 1);
    if (found && (!best || found.length > best.length)) best = found;
  }
  return best;
}

function firstFormatted(value: unknown, depth = 0): string | null {
  if (value === null || typeof value !== 'object' || depth > 2) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.formatted === 'string') return record.formatted;
  for (const v of Object.values(record)) {
    if (Array.isArray(v)) continue;
    const found = firstFormatted(v, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * One line for a tool's result: the error itself; or "N rows" and the first formatted amount of
 * the payload; or nothing when the summary was clipped and cannot be read as JSON.
 */
export function resultLine(summary: string, isError: boolean): string | null {
  const text = unfence(summary);
  if (isError) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object') return String(value);
  const parts: string[] = [];
  const rows = longestArray(value);
  if (rows) parts.push(`${rows.length} row${rows.length === 1 ? '' : 's'}`);
  const formatted = firstFormatted(value);
  if (formatted) parts.push(formatted);
  return parts.length ? parts.join(' · ') : null;
}
