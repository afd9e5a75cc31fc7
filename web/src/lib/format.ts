// Numbers, times and dates as the pages print them.

/** Milliseconds as seconds with one decimal: "1.2s". */
export function seconds(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 'not recorded';
  return `${(ms / 1000).toFixed(1)}s`;
}

/** A count with thousands separators (en-GB, so the page reads the same everywhere). */
export function count(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '0';
  return Math.round(n).toLocaleString('en-GB');
}

/** `part` of `whole` as a whole percentage; 0 of nothing is 0%. */
export function percentOf(part: number, whole: number, places = 0): string {
  if (!whole) return '0%';
  return `${((100 * part) / whole).toFixed(places)}%`;
}

/** A percentage the API already computed. */
export function percent(value: number | null | undefined, places = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'not measured';
  return `${Number(value.toFixed(places))}%`;
}

/** "14 August 2026". */
export function longDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric' });
}

/** "14 Aug 2026". */
export function shortDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });
}

/** A date and time in the reader's own zone: "14 Aug 2026, 09:12:03". */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A time of day in the reader's own zone. */
export function timeOfDay(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString('en-GB');
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** "2025-06" → "June 2025"; anything else as it is. */
export function monthName(month: string, withYear = true): string {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  const name = m ? MONTHS[Number(m[2]) - 1] : undefined;
  if (!m || name === undefined) return month;
  return withYear ? `${name} ${m[1]}` : name;
}

/** Every month from `from` to `to` (both "YYYY-MM" or dates), inclusive. */
export function monthsBetween(from: string, to: string): string[] {
  const start = /^(\d{4})-(\d{2})/.exec(from);
  const end = /^(\d{4})-(\d{2})/.exec(to);
  if (!start || !end) return [];
  const out: string[] = [];
  let y = Number(start[1]);
  let m = Number(start[2]);
  const endKey = Number(end[1]) * 12 + Number(end[2]);
  while (y * 12 + m <= endKey && out.length < 600) {
    out.push(`${y}-${String(m).padStart(2, '0')}`);
    m += 1;
    if (m > 12) {
      m = 1;
      y += 1;
    }
  }
  return out;
}
