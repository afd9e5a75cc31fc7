// Money as the API sends it: integer minor units of a currency. Formatting mirrors the ledger's
// own (crates/money/src/money.rs): the symbol where one is unambiguous, Indian digit grouping for
// INR, the currency's own number of decimals, a leading "-" for negatives. No floating point
// touches an amount: the digits are split as integers.

const ZERO_DECIMALS = new Set(['JPY', 'KRW', 'VND', 'CLP', 'ISK', 'UGX', 'PYG', 'XAF', 'XOF']);
const THREE_DECIMALS = new Set(['BHD', 'KWD', 'OMR', 'JOD', 'TND', 'IQD', 'LYD']);
const SYMBOLS: Record<string, string> = { INR: '₹', USD: '$', EUR: '€', GBP: '£', JPY: '¥' };

/** An amount as the API serialises it. */
export interface Amount {
  amount_minor: number;
  currency: string;
  formatted?: string;
}

export function decimals(currency: string): number {
  if (ZERO_DECIMALS.has(currency)) return 0;
  if (THREE_DECIMALS.has(currency)) return 3;
  if (currency === 'BTC') return 8;
  return 2;
}

function groupWestern(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `1234567` → `12,34,567`: the last three digits, then pairs. */
function groupIndian(digits: string): string {
  if (digits.length <= 3) return digits;
  const head = digits.slice(0, -3);
  const tail = digits.slice(-3);
  return `${head.replace(/\B(?=(\d{2})+(?!\d))/g, ',')},${tail}`;
}

/** Formats `minor` units of `currency`; an amount beyond exact integers is refused, not rounded. */
export function formatMinor(minor: number | bigint, currency: string): string {
  const value = typeof minor === 'bigint' ? minor : toBigInt(minor);
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  const places = decimals(currency);
  const scale = 10n ** BigInt(places);
  const whole = (magnitude / scale).toString();
  const grouped = currency === 'INR' ? groupIndian(whole) : groupWestern(whole);
  const number = places === 0 ? grouped : `${grouped}.${(magnitude % scale).toString().padStart(places, '0')}`;
  const sign = negative ? '-' : '';
  const symbol = SYMBOLS[currency];
  return symbol === undefined ? `${sign}${currency} ${number}` : `${sign}${symbol}${number}`;
}

function toBigInt(minor: number): bigint {
  if (!Number.isSafeInteger(minor)) {
    throw new RangeError(`${minor} is not a whole number of minor units that can be shown exactly`);
  }
  return BigInt(minor);
}

/** An API amount, formatted from its minor units (never from its `formatted` text). */
export function formatAmount(amount: Amount): string {
  return formatMinor(amount.amount_minor, amount.currency);
}

/**
 * A list-price estimate in US dollars, as the traces keep it (a float of dollars): "$0" for
 * nothing, six decimals below a cent (a turn costs fractions of one), four otherwise.
 */
/** A cost the server keeps in integer micro-dollars (`1_500_000` is $1.50), as [`formatUsd`] shows it. */
export function formatMicroUsd(micro: number | null | undefined, places?: number): string {
  if (micro === null || micro === undefined || !Number.isFinite(micro)) return 'not recorded';
  return formatUsd(micro / 1_000_000, places);
}

export function formatUsd(usd: number | null | undefined, places?: number): string {
  if (usd === null || usd === undefined || !Number.isFinite(usd)) return 'not recorded';
  if (usd === 0) return '$0';
  const digits = places ?? (Math.abs(usd) < 0.01 ? 6 : 4);
  return `${usd < 0 ? '-' : ''}$${Math.abs(usd).toFixed(digits)}`;
}

/** The currencies a person can name: the ledger's (`kakeibo_ledger::Currency`). */
export const CURRENCIES = ['INR', 'USD', 'EUR', 'GBP', 'JPY'];
