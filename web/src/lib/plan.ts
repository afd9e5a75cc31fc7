// The message that asks the agent to commit a previewed plan: words first (the conversation is
// titled after them), the plan's id last (the agent needs it; titles leave it out).

import type { Figure, Figures, ImportPreview, TakenLine } from '../api/types';
import { formatMinor } from './money';

export function importMessage(
  p: Pick<ImportPreview, 'filename' | 'rows_to_add' | 'accounts' | 'plan_id'> & Partial<Pick<ImportPreview, 'corrections'>>,
): string {
  const rows = `${p.rows_to_add} ${p.rows_to_add === 1 ? 'row' : 'rows'}`;
  const accounts = p.accounts.map((a) => a.name);
  const into = accounts.length > 0 ? ` into ${accounts.join(' and ')}` : '';
  // The bank's corrections that take out rows of earlier statements are said too.
  const out = (p.corrections ?? []).filter((c) => c.transaction !== null).length;
  const corrected = out > 0 ? `, taking out the ${out} earlier ${out === 1 ? 'row' : 'rows'} the bank corrected` : '';
  return `Import ${p.filename}: ${rows}${into}${corrected} (plan ${p.plan_id}).`;
}

/** The figures chosen for a preview's refused rows, with `line`'s set to `take` (or taken away:
 * the row is left out again). Kept in line order, so the same choices ask for the same plan. */
export function figuresWith(figures: TakenLine[], line: number, take: Figure | null): TakenLine[] {
  const others = figures.filter((f) => f.line !== line);
  const chosen = take === null ? others : [...others, { line, take }];
  return chosen.sort((a, b) => a.line - b.line);
}

/** What a refused row's figure choice reads as: "−£5.97, the amount it states". */
export function figureLabel(figures: Figures, take: Figure): string {
  return take === 'amount'
    ? `${formatMinor(figures.amount_minor, figures.currency)}, the amount it states`
    : `${formatMinor(figures.balance_minor, figures.currency)}, the balance's change`;
}
