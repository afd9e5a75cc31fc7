// The budgets page's arithmetic: months either side of one, and what is left of a budget. Integer
// minor units only.

import type { BudgetLine } from '../api/types';

/** "2025-03" moved by `delta` months; null for anything that is not a month. */
export function shiftMonth(month: string, delta: number): string | null {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  if (!m) return null;
  const index = Number(m[1]) * 12 + Number(m[2]) - 1 + delta;
  const year = Math.floor(index / 12);
  if (year < 1 || year > 9999) return null;
  return `${String(year).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** A line's budget against its spending in the budget's currency, and the spending in others. */
export interface Standing {
  /** In the budget's currency; zero when nothing was spent in it. */
  spent: number;
  /** Budget less spent: below zero when over. Null without a budget. */
  left: number | null;
  /** Spending in currencies other than the budget's (or all of it, without a budget, past the first). */
  others: { currency: string; amount_minor: number }[];
}

export function standing(line: BudgetLine): Standing {
  if (!line.budget) {
    const [first, ...others] = line.spent;
    return { spent: first?.amount_minor ?? 0, left: null, others };
  }
  const currency = line.budget.currency;
  const spent = line.spent.find((s) => s.currency === currency)?.amount_minor ?? 0;
  return { spent, left: line.budget.amount_minor - spent, others: line.spent.filter((s) => s.currency !== currency) };
}
