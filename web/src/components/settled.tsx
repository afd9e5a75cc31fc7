// The line that says what a person's own edit did, on the register, categories and budgets pages:
// brought into view and focused (so a click never seems to do nothing), with "Put it back" for a
// recorded edit.

import { useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api/client';
import type { LedgerEdit } from '../api/types';
import { refusalSentence } from '../lib/refusals';
import { Mark } from './mark';

export interface Done {
  text: string;
  edit: LedgerEdit | null;
  tone: 'ok' | 'danger';
}

/** A refusal in the page's own words: the route's sentence for what the person can fix. */
export function problemOf(e: unknown, gone = 'That is gone: it was changed or deleted since. The page is read again.'): string {
  if (e instanceof ApiError && [400, 404, 409, 422].includes(e.status)) {
    return e.status === 404 ? gone : e.message;
  }
  return refusalSentence(e).text;
}

/** The status line's state: `settle` shows a sentence (and reloads through `onSettled`), `revert`
 * puts a recorded edit back. */
export function useSettled(onSettled: () => void) {
  const [done, setDone] = useState<Done | null>(null);
  const line = useRef<HTMLDivElement>(null);

  function settle(text: string, edit: LedgerEdit | null, tone: Done['tone'] = 'ok') {
    setDone({ text, edit, tone });
    onSettled();
    requestAnimationFrame(() => {
      line.current?.scrollIntoView({ block: 'nearest' });
      line.current?.focus();
    });
  }

  async function revert(edit: LedgerEdit) {
    try {
      settle(`Put back: ${edit.summary}`, await api.revertEdit(edit.id));
    } catch (e) {
      settle(problemOf(e), null, 'danger');
    }
  }

  return { done, line, settle, revert };
}

export function Settled({ state }: { state: ReturnType<typeof useSettled> }) {
  const { done, line, revert } = state;
  return (
    <div ref={line} tabIndex={-1} class="register-status" role="status" aria-live="polite">
      {done ? (
        <p class="small">
          <Mark tone={done.tone === 'ok' ? 'ok' : 'danger'}>{done.tone === 'ok' ? 'done' : 'failed'}</Mark> {done.text}{' '}
          {done.edit && done.edit.kind !== 'revert' ? (
            <button type="button" class="link-button small" onClick={() => done.edit && void revert(done.edit)}>
              Put it back
            </button>
          ) : null}
        </p>
      ) : null}
    </div>
  );
}
