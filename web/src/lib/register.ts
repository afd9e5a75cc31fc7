// The register's search and edits, apart from the page so they can be tested alone: the search as
// it lives in the address bar and as the API takes it, amounts typed by a person in major units,
// and what a split still has to place.

import type { RegisterPage } from '../api/types';
import { decimals } from './money';

export type SortBy = 'date' | 'amount' | 'description';

/** The search as the page holds it: what the person typed, amounts in major units. */
export interface Filters {
  q: string;
  from: string;
  to: string;
  account: string;
  category: string;
  min: string;
  max: string;
  sort: SortBy;
  ascending: boolean;
  page: number;
  /** Only one import's rows. */
  import: string;
}

export const NO_FILTERS: Filters = {
  q: '',
  from: '',
  to: '',
  account: '',
  category: '',
  min: '',
  max: '',
  sort: 'date',
  ascending: false,
  page: 1,
  import: '',
};

/**
 * "1,234.50" (or "1234,50", "₹ 500") as minor units of `currency`; null for anything that is not
 * an amount, or has more decimals than the currency. Integers only: no floating point.
 */
export function parseMajor(text: string, currency: string): number | null {
  // A symbol or a currency's code may lead ("₹ 500", "USD 12.50"); nothing else but digits.
  let t = text.replace(/\s/g, '').replace(/^(?:[A-Z]{3}|[^\d.,A-Za-z-])/, '');
  if (!/^[\d.,]+$/.test(t)) return null;
  const places = decimals(currency);
  // A comma followed by exactly the currency's decimals at the end is a decimal comma.
  const comma = t.lastIndexOf(',');
  if (comma >= 0 && !t.includes('.') && places > 0 && t.length - comma - 1 === places) {
    t = `${t.slice(0, comma).replace(/,/g, '')}.${t.slice(comma + 1)}`;
  } else {
    t = t.replace(/,/g, '');
  }
  const match = /^(\d+)(?:\.(\d*))?$/.exec(t);
  if (!match) return null;
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > places) return null;
  const minor = BigInt(whole) * 10n ** BigInt(places) + BigInt(fraction.padEnd(places, '0') || '0');
  return minor <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(minor) : null;
}

/** The search from the page's address (`/transactions?q=…`). */
export function filtersFrom(query: Record<string, string | undefined>): Filters {
  const text = (key: string) => (typeof query[key] === 'string' ? (query[key] as string).slice(0, 200) : '');
  const sort = query.sort === 'amount' || query.sort === 'description' ? query.sort : 'date';
  const page = Number.parseInt(text('page'), 10);
  return {
    q: text('q'),
    from: /^\d{4}-\d{2}-\d{2}$/.test(text('from')) ? text('from') : '',
    to: /^\d{4}-\d{2}-\d{2}$/.test(text('to')) ? text('to') : '',
    account: text('account'),
    category: text('category'),
    min: text('min'),
    max: text('max'),
    sort,
    ascending: query.ascending === 'true',
    page: Number.isSafeInteger(page) && page > 0 ? page : 1,
    import: /^[0-9a-f-]{36}$/.test(text('import')) ? text('import') : '',
  };
}

/** The search for the address bar: only what differs from no search. */
export function addressOf(f: Filters): string {
  const params = new URLSearchParams();
  for (const key of ['q', 'from', 'to', 'account', 'category', 'min', 'max', 'import'] as const) {
    if (f[key].trim() !== '') params.set(key, f[key].trim());
  }
  if (f.sort !== 'date') params.set('sort', f.sort);
  if (f.ascending) params.set('ascending', 'true');
  if (f.page > 1) params.set('page', String(f.page));
  return params.toString();
}

/** The search as the API takes it: amounts in minor units of `currency` (with two decimals while
 * no row has named one). An amount that does not read is a problem to show, not a filter to drop
 * silently. */
export function apiQuery(f: Filters, currency: string | null, perPage = 50): { query: string } | { problem: string } {
  const params = new URLSearchParams();
  for (const key of ['q', 'from', 'to', 'account', 'category', 'import'] as const) {
    if (f[key].trim() !== '') params.set(key, f[key].trim());
  }
  for (const [key, name] of [
    ['min', 'min_minor'],
    ['max', 'max_minor'],
  ] as const) {
    if (f[key].trim() === '') continue;
    const minor = parseMajor(f[key], currency ?? '');
    if (minor === null) return { problem: `“${f[key]}” is not an amount.` };
    params.set(name, String(minor));
  }
  if (f.sort !== 'date') params.set('sort', f.sort);
  if (f.ascending) params.set('ascending', 'true');
  params.set('page', String(f.page));
  params.set('per_page', String(perPage));
  return { query: params.toString() };
}

/** "Rows 51–100 of 352", "No rows". */
export function rowsText(p: Pick<RegisterPage, 'page' | 'per_page' | 'total' | 'rows'>): string {
  if (p.total === 0) return 'No rows';
  if (p.rows.length === 0) return `No rows on page ${p.page}; ${p.total} in all`;
  const first = (p.page - 1) * p.per_page + 1;
  return `Rows ${first}–${first + p.rows.length - 1} of ${p.total}`;
}

/** What a split still has to place: the row's size less the shares typed so far (null while a
 * share does not read as an amount). */
export function leftToPlace(size: number, shares: string[], currency: string): number | null {
  let placed = 0;
  for (const share of shares) {
    if (share.trim() === '') continue;
    const minor = parseMajor(share, currency);
    if (minor === null) return null;
    placed += minor;
  }
  return size - placed;
}

/**
 * The rules page with a rule drafted from a row: the first two words of its description (a
 * merchant's name, mostly, without the order number after it) and the category it is in.
 */
export function ruleAddress(description: string, category: string | null): string {
  const words = description
    .split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w) && !/^[\d#*/-]+$/.test(w))
    .slice(0, 2)
    .join(' ');
  const params = new URLSearchParams({ pattern: words || description.trim().slice(0, 40) });
  if (category && category !== 'Split') params.set('category', category);
  return `/categories?${params.toString()}#rule-form`;
}
