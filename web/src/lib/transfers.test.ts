import { describe, expect, it } from 'vitest';
import type { PlannedTransfer } from '../api/types';
import { answersWith, transitQuestion } from './transfers';

const usd = (amount_minor: number) => ({ amount_minor, currency: 'USD', formatted: `$${(amount_minor / 100).toFixed(2)}` });
const side = (line: number | null, account: string, date: string, amount_minor: number) => ({
  transaction_id: line === null ? `t-${date}` : null,
  line,
  account,
  date,
  description: 'ONLINE TRANSFER',
  amount: usd(amount_minor),
});
const question = (line: number, answer: number | null): PlannedTransfer => ({
  row: side(line, 'Savings', '2025-10-04', 50_000),
  why: 'it says “transfer”',
  status: 'ask',
  in_words: '2 rows fit equally',
  with: null,
  candidates: [side(null, 'Checking', '2025-10-02', -50_000), side(null, 'Checking', '2025-10-06', -50_000)],
  answer,
});

describe('answersWith', () => {
  it('keeps the other answers and sets, changes or takes away this one', () => {
    const transfers = [question(2, 1), question(3, null), { ...question(4, 0), status: 'paired' as const }];
    expect(answersWith(transfers, 3, 0)).toEqual([
      { line: 2, candidate: 1 },
      { line: 3, candidate: 0 },
    ]);
    expect(answersWith(transfers, 2, 0)).toEqual([{ line: 2, candidate: 0 }]);
    // "None of these": the row waits in transit, and only the other answer is sent.
    expect(answersWith(transfers, 2, null)).toEqual([]);
  });
});

describe('transitQuestion', () => {
  it('names the row by its id and figures, and leaves the sentence for the person to finish', () => {
    const text = transitQuestion({ transaction_id: 'abc', date: '2025-10-05', account: 'Checking', description: 'TRANSFER TO BROKER', ...usd(-100_000) });
    expect(text).toBe('The row in transit abc (2025-10-05, Checking, “TRANSFER TO BROKER”, -$1,000.00) was ');
  });
});
