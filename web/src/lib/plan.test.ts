import { describe, expect, it } from 'vitest';
import { importMessage } from './plan';

const account = (name: string) => ({ name, currency: 'INR', exists: true, kind: 'checking' as const, kind_from: '' });

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
});
