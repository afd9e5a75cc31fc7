import { describe, expect, it } from 'vitest';
import { figureLabel, figuresWith, importMessage } from './plan';

const account = (name: string) => ({ name, currency: 'INR', exists: true, kind: 'checking' as const, kind_from: '', takes_currency: false });

describe('the message that commits a previewed plan', () => {
  it('says what and where in words, and ends with the plan for the agent', () => {
    expect(importMessage({ filename: 'july.csv', rows_to_add: 12, accounts: [account('Checking')], plan_id: 'p-1' })).toBe(
      'Import july.csv: 12 rows into Checking (plan p-1).',
    );
  });

  it('counts one row as a row, and names every account', () => {
    expect(importMessage({ filename: 'a.csv', rows_to_add: 1, accounts: [account('Checking'), account('Checking (USD)')], plan_id: 'p' })).toBe(
      'Import a.csv: 1 row into Checking and Checking (USD) (plan p).',
    );
  });

  it('says the earlier rows the bank corrected that the commit takes out', () => {
    const correction = (transaction: string | null) => ({ line: 9, bank_ref: 'A3', action: 'replace' as const, transaction, amount_minor: -10000, in_words: '' });
    expect(
      importMessage({ filename: 'feb.qfx', rows_to_add: 2, accounts: [account('Checking')], plan_id: 'p', corrections: [correction('t-1'), correction(null)] }),
    ).toBe('Import feb.qfx: 2 rows into Checking, taking out the 1 earlier row the bank corrected (plan p).');
  });
});

describe('the figures chosen for rows the balance column refuses', () => {
  it('sets, replaces and takes away one row, keeping the others in line order', () => {
    const chosen = figuresWith([{ line: 9, take: 'amount' }], 6, 'balance');
    expect(chosen).toEqual([
      { line: 6, take: 'balance' },
      { line: 9, take: 'amount' },
    ]);
    expect(figuresWith(chosen, 6, 'amount')).toEqual([
      { line: 6, take: 'amount' },
      { line: 9, take: 'amount' },
    ]);
    expect(figuresWith(chosen, 6, null)).toEqual([{ line: 9, take: 'amount' }]);
  });

  it('names each figure with its money', () => {
    const figures = { amount_minor: -597, balance_minor: -1009, currency: 'GBP' };
    expect(figureLabel(figures, 'amount')).toBe('-£5.97, the amount it states');
    expect(figureLabel(figures, 'balance')).toBe("-£10.09, the balance's change");
  });
});
