import { describe, expect, it } from 'vitest';
import { argumentRows, gloss, resultLine, unfence } from './gloss';

describe('gloss', () => {
  it('formats money keys and drops their suffix', () => {
    expect(gloss({ category: 'Groceries', month: '2025-06', amount_minor: 2_000_000, currency: 'INR' })).toBe(
      'category Groceries · month 2025-06 · amount ₹20,000.00 · currency INR',
    );
    expect(gloss({ minMinor: 500, currency: 'USD' })).toBe('min $5.00 · currency USD');
    expect(gloss({ period: { from: '2025-01-01', to: '2025-06-30' } })).toBe(
      'period {"from":"2025-01-01","to":"2025-06-30"}',
    );
  });

  it('puts raw minor units beside a formatted amount in the argument table', () => {
    expect(argumentRows({ amount_minor: 2_000_000, category: 'Groceries', currency: 'INR' })).toEqual([
      { key: 'amount', value: '₹20,000.00', raw: '2000000 minor units' },
      { key: 'category', value: 'Groceries' },
      { key: 'currency', value: 'INR' },
    ]);
  });

  it('never names a currency the call did not: bare minor units instead', () => {
    expect(gloss({ category: 'Groceries', amount_minor: 2_000_000 })).toBe('category Groceries · amount 2000000 minor units');
    expect(argumentRows({ amount_minor: 2_000_000 })).toEqual([{ key: 'amount', value: '2000000 minor units' }]);
  });
});

describe('resultLine', () => {
  it('strips the tool_data fence', () => {
    expect(unfence('<tool_data>{"a":1}</tool_data>')).toBe('{"a":1}');
    expect(unfence('<tool_data source="x">{"a":1}')).toBe('{"a":1}');
  });

  it('counts rows and quotes the first formatted amount', () => {
    const payload = JSON.stringify({ total: { amount_minor: 1, formatted: '₹23,350.00' }, groups: [{}, {}, {}] });
    expect(resultLine(`<tool_data>${payload}</tool_data>`, false)).toBe('3 rows · ₹23,350.00');
    expect(resultLine(JSON.stringify({ transactions: [{}] }), false)).toBe('1 row');
  });

  it('says nothing of a clipped payload, and shows an error as it is', () => {
    expect(resultLine('<tool_data>{"groups": [{"group": "Gro', false)).toBeNull();
    expect(resultLine('period: not a month', true)).toBe('period: not a month');
    expect(resultLine('42', false)).toBe('42');
  });
});
