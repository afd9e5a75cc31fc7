import { describe, expect, it } from 'vitest';
import { NO_FILTERS, addressOf, apiQuery, filtersFrom, leftToPlace, parseMajor, ruleAddress, rowsText } from './register';

describe('amounts a person types', () => {
  it('read in the currency’s own decimals, with grouping and decimal commas', () => {
    expect(parseMajor('500', 'INR')).toBe(50_000);
    expect(parseMajor('1,234.50', 'USD')).toBe(123_450);
    expect(parseMajor('₹ 12,34,567.89', 'INR')).toBe(123_456_789);
    expect(parseMajor('1234,50', 'EUR')).toBe(123_450);
    expect(parseMajor('1500', 'JPY')).toBe(1500);
  });

  it('are refused when they are not amounts', () => {
    expect(parseMajor('', 'INR')).toBeNull();
    expect(parseMajor('abc', 'INR')).toBeNull();
    expect(parseMajor('-5', 'INR')).toBeNull();
    expect(parseMajor('1.234', 'USD')).toBeNull();
    expect(parseMajor('1.5', 'JPY')).toBeNull();
    expect(parseMajor('99999999999999999999', 'USD')).toBeNull();
  });
});

describe('the search', () => {
  it('goes from the address to the API and back', () => {
    const f = filtersFrom({ q: 'bigbasket', min: '500', sort: 'amount', page: '2', from: '2025-03-01', to: 'soon' });
    expect(f).toEqual({ ...NO_FILTERS, q: 'bigbasket', min: '500', sort: 'amount', page: 2, from: '2025-03-01' });
    expect(addressOf(f)).toBe('q=bigbasket&from=2025-03-01&min=500&sort=amount&page=2');
    expect(apiQuery(f, 'INR')).toEqual({ query: 'q=bigbasket&from=2025-03-01&min_minor=50000&sort=amount&page=2&per_page=50' });
    expect(addressOf(NO_FILTERS)).toBe('');
  });

  it('says so when an amount does not read', () => {
    expect(apiQuery({ ...NO_FILTERS, max: 'lots' }, 'INR')).toEqual({ problem: '“lots” is not an amount.' });
    // Before a row names the register's currency, amounts read with two decimals; JPY has none.
    expect(apiQuery({ ...NO_FILTERS, min: '12.5' }, null)).toEqual({ query: 'min_minor=1250&page=1&per_page=50' });
    expect(apiQuery({ ...NO_FILTERS, min: '1250' }, 'JPY')).toEqual({ query: 'min_minor=1250&page=1&per_page=50' });
  });

  it('counts the rows on the page', () => {
    expect(rowsText({ page: 2, per_page: 50, total: 352, rows: new Array(50) })).toBe('Rows 51–100 of 352');
    expect(rowsText({ page: 1, per_page: 50, total: 0, rows: [] })).toBe('No rows');
    expect(rowsText({ page: 9, per_page: 50, total: 352, rows: [] })).toBe('No rows on page 9; 352 in all');
  });
});

describe('a split', () => {
  it('shows what is left to place, and nothing while a share does not read', () => {
    expect(leftToPlace(50_000, ['300', ''], 'INR')).toBe(20_000);
    expect(leftToPlace(50_000, ['300', '200'], 'INR')).toBe(0);
    expect(leftToPlace(50_000, ['3x'], 'INR')).toBeNull();
  });
});

describe('a rule drafted from a row', () => {
  const params = (address: string) => new URL(address, 'https://x.example').searchParams;
  it('takes the merchant, not the order number', () => {
    const address = ruleAddress('SWIGGY ORDER 4471829', 'Dining');
    expect(address.startsWith('/categories?')).toBe(true);
    expect(address.endsWith('#rule-form')).toBe(true);
    expect(params(address).get('pattern')).toBe('SWIGGY ORDER');
    expect(params(address).get('category')).toBe('Dining');
  });
  it('skips numbers and marks, keeps letters of any script', () => {
    expect(params(ruleAddress('12/03 * Café Müller 99', null)).get('pattern')).toBe('Café Müller');
    expect(params(ruleAddress('スターバックス 渋谷', 'Dining')).get('pattern')).toBe('スターバックス 渋谷');
  });
  it('a split or no category leaves the category to choose', () => {
    expect(params(ruleAddress('Costco', 'Split')).get('category')).toBeNull();
    expect(params(ruleAddress('Costco', null)).get('category')).toBeNull();
  });
  it('a description of numbers alone is kept as it is', () => {
    expect(params(ruleAddress('  4471829  ', null)).get('pattern')).toBe('4471829');
  });
});
