import { describe, expect, it } from 'vitest';
import type { BudgetLine } from '../api/types';
import { shiftMonth, standing } from './budgets';

describe('months either side', () => {
  it('crosses years both ways', () => {
    expect(shiftMonth('2025-01', -1)).toBe('2024-12');
    expect(shiftMonth('2024-12', 1)).toBe('2025-01');
    expect(shiftMonth('2025-03', 0)).toBe('2025-03');
    expect(shiftMonth('2025-03', 25)).toBe('2027-04');
  });
  it('refuses what is not a month', () => {
    expect(shiftMonth('March', 1)).toBeNull();
    expect(shiftMonth('2025-3', 1)).toBeNull();
    expect(shiftMonth('0001-01', -1)).toBeNull();
  });
});

const line = (budget: BudgetLine['budget'], spent: BudgetLine['spent']): BudgetLine => ({
  category_id: 'c',
  category: 'Dining',
  budget,
  spent,
  transactions: spent.length,
});

describe('what is left of a budget', () => {
  it('counts spending in the budget currency only', () => {
    const s = standing(line({ id: 'b', amount_minor: 500_000, currency: 'INR' }, [
      { currency: 'INR', amount_minor: 320_000 },
      { currency: 'EUR', amount_minor: 4_000 },
    ]));
    expect(s).toEqual({ spent: 320_000, left: 180_000, others: [{ currency: 'EUR', amount_minor: 4_000 }] });
  });
  it('goes below zero when over', () => {
    expect(standing(line({ id: 'b', amount_minor: 100, currency: 'INR' }, [{ currency: 'INR', amount_minor: 250 }])).left).toBe(-150);
  });
  it('a budget with nothing spent is whole', () => {
    expect(standing(line({ id: 'b', amount_minor: 100, currency: 'EUR' }, [])).left).toBe(100);
  });
  it('without a budget there is nothing left to show', () => {
    expect(standing(line(null, [{ currency: 'INR', amount_minor: 7 }]))).toEqual({ spent: 7, left: null, others: [] });
  });
});
