// Money moved between a person's own accounts, as the pages ask about it: the answers to a
// preview's questions, and the start of what a person tells the agent about a row in transit.

import type { PlannedTransfer } from '../api/types';
import { formatAmount, type Amount } from './money';

/** Every answer of a preview, with `line`'s set to `candidate` (or taken away: it waits in transit). */
export function answersWith(transfers: PlannedTransfer[], line: number, candidate: number | null): { line: number; candidate: number }[] {
  const answers = transfers
    .filter((t) => t.status === 'ask' && t.row.line !== null && t.row.line !== line && typeof t.answer === 'number')
    .map((t) => ({ line: t.row.line as number, candidate: t.answer as number }));
  return candidate === null ? answers : [...answers, { line, candidate }];
}

/** The start of what a person tells the agent about a row in transit; they finish the sentence. */
export function transitQuestion(t: Amount & { transaction_id: string; date: string; account: string; description: string }): string {
  return `The row in transit ${t.transaction_id} (${t.date}, ${t.account}, “${t.description}”, ${formatAmount(t)}) was `;
}
