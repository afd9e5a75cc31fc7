// The message that asks the agent to commit a previewed plan: words first (the conversation is
// titled after them), the plan's id last (the agent needs it; titles leave it out).

import type { ImportPreview } from '../api/types';

export function importMessage(p: Pick<ImportPreview, 'filename' | 'rows_to_add' | 'accounts' | 'plan_id'>): string {
  const rows = `${p.rows_to_add} ${p.rows_to_add === 1 ? 'row' : 'rows'}`;
  const accounts = p.accounts.map((a) => a.name);
  const into = accounts.length > 0 ? ` into ${accounts.join(' and ')}` : '';
  return `Import ${p.filename}: ${rows}${into} (plan ${p.plan_id}).`;
}
