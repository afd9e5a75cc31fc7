import { describe, expect, it } from 'vitest';
import { formatMicroUsd, formatMinor, formatUsd } from './money';

describe('formatMinor', () => {
  // The same cases as the ledger's own formatter (crates/money/src/money.rs), so the page and the
  // agent never print one amount two ways.
  it('groups INR the Indian way', () => {
    expect(formatMinor(123_456_700, 'INR')).toBe('₹12,34,567.00');
    expect(formatMinor(-2_335_000, 'INR')).toBe('-₹23,350.00');
    expect(formatMinor(99_900, 'INR')).toBe('₹999.00');
    expect(formatMinor(100_000, 'INR')).toBe('₹1,000.00');
    expect(formatMinor(5, 'INR')).toBe('₹0.05');
    expect(formatMinor(0, 'INR')).toBe('₹0.00');
    expect(formatMinor(-1, 'INR')).toBe('-₹0.01');
    expect(formatMinor(1_000_000_000_000, 'INR')).toBe('₹10,00,00,00,000.00');
    expect(formatMinor(14_908_800, 'INR')).toBe('₹1,49,088.00');
  });

  it('groups other currencies the Western way with their own decimals', () => {
    expect(formatMinor(123_450, 'USD')).toBe('$1,234.50');
    expect(formatMinor(-100_000_000, 'EUR')).toBe('-€1,000,000.00');
    expect(formatMinor(99, 'GBP')).toBe('£0.99');
    expect(formatMinor(1_234_567, 'JPY')).toBe('¥1,234,567');
    expect(formatMinor(-500, 'JPY')).toBe('-¥500');
    expect(formatMinor(1_234_567, 'KWD')).toBe('KWD 1,234.567');
    expect(formatMinor(100, 'CHF')).toBe('CHF 1.00');
  });

  it('never rounds: an amount past exact integers is refused', () => {
    expect(formatMinor(9_007_199_254_740_993n, 'USD')).toBe('$90,071,992,547,409.93');
    expect(() => formatMinor(2 ** 60, 'USD')).toThrow(RangeError);
    expect(() => formatMinor(1.5, 'USD')).toThrow(RangeError);
  });
});

describe('formatUsd', () => {
  it('prints fractions of a cent with six decimals and larger costs with four', () => {
    expect(formatUsd(0)).toBe('$0');
    expect(formatUsd(0.009838)).toBe('$0.009838');
    expect(formatUsd(0.577836)).toBe('$0.5778');
    expect(formatUsd(0.000123, 6)).toBe('$0.000123');
    expect(formatUsd(null)).toBe('not recorded');
  });
});

describe('formatMicroUsd', () => {
  it('shows integer micro-dollars as formatUsd shows dollars', () => {
    expect(formatMicroUsd(0)).toBe('$0');
    expect(formatMicroUsd(9_838)).toBe('$0.009838');
    expect(formatMicroUsd(577_836)).toBe('$0.5778');
    expect(formatMicroUsd(667_000)).toBe('$0.6670');
    expect(formatMicroUsd(undefined)).toBe('not recorded');
  });
});
