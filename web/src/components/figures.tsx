// An answer whose figures were checked: each grounded figure a button that opens the ledger rows
// behind it (their sum shown beside the figure), each ungrounded one marked, with a sentence
// saying what that means.

import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { FigureRows, FiguresEvent } from '../api/types';
import { shortDate } from '../lib/format';
import { answerSegments, howWords, madeOfRows, ungroundedNote } from '../lib/figures';
import { formatAmount, formatMinor } from '../lib/money';
import { Note } from './paper';
import { THead } from './table';

type Checked = FiguresEvent['figures'][number];

/** The answer's prose with its figures placed; `runId` names where their rows are read from. */
export function CheckedProse({ text, check, runId }: { text: string; check: FiguresEvent | undefined; runId: string | null }) {
  const [open, setOpen] = useState<number | null>(null);
  const segments = answerSegments(text, check ?? null);
  const note = check ? ungroundedNote(check) : null;
  const grounded = check ? check.figures.filter((f) => f.grounding !== 'ungrounded').length : 0;
  return (
    <>
      <div class="prose" style={{ whiteSpace: 'pre-wrap' }}>
        {segments.map((s, i) => {
          const figure = s.figure === undefined ? undefined : check?.figures[s.figure];
          const inner = s.bold ? <strong>{s.text}</strong> : s.text;
          if (!figure || s.figure === undefined) return <span key={i}>{inner}</span>;
          if (figure.grounding === 'ungrounded') {
            return (
              <mark key={i} class="figure-ungrounded" title="Not found in your ledger's results">
                {inner}
              </mark>
            );
          }
          const n = s.figure;
          return (
            <button
              key={i}
              type="button"
              class={`figure-link${figure.grounding === 'approximate' ? ' approximate' : ''}`}
              aria-expanded={open === n}
              aria-controls={open === n ? `figure-rows-${n}` : undefined}
              title={figure.grounding === 'approximate' ? 'Rounded: select to see the rows behind it' : 'Select to see the rows behind it'}
              disabled={runId === null}
              onClick={() => setOpen(open === n ? null : n)}
            >
              {inner}
            </button>
          );
        })}
      </div>
      {note ? (
        <Note tone="warn" word="unchecked">
          {note}
        </Note>
      ) : null}
      {check && !note && grounded > 0 ? (
        <p class="tiny faint figures-checked">
          {grounded === 1 ? 'The figure here was' : grounded === 2 ? 'Both figures here were' : `All ${grounded} figures here were`} found in
          your ledger's results: select {grounded === 1 ? 'it' : 'one'} to see the rows behind it.
        </p>
      ) : null}
      {open !== null && runId !== null && check?.figures[open] ? (
        <FigureRowsView key={open} run={runId} n={open} figure={check.figures[open]} onClose={() => setOpen(null)} />
      ) : null}
    </>
  );
}

/** What the listed rows come to, beside the figure the tool returned. */
function RowsVerdict({ source: s }: { source: FigureRows['sources'][number] }) {
  if (!s.found) return null;
  const found = s.found;
  const made = madeOfRows(found.sum?.amount_minor ?? 0, found.count, s.aggregate);
  const same = made === BigInt(s.amount_minor) && (found.sum === undefined || found.sum === null || found.sum.currency === s.currency);
  const rows = found.count === 1 ? 'its one row' : `all ${found.count} rows`;
  return (
    <p class="small figure-sum">
      {found.count > found.rows.length ? `The first ${found.rows.length} of ${found.count} rows are listed; the ` : 'The '}
      {s.aggregate === 'average' ? `average of ${rows}, rounded,` : `sum of ${rows}`} is{' '}
      <span class="num">{formatMinor(made, s.currency)}</span>
      {same ? ', the figure the tool returned.' : `, not ${formatAmount(s)}: the ledger has changed since this answer.`}
    </p>
  );
}

function FigureRowsView({ run, n, figure, onClose }: { run: string; n: number; figure: Checked; onClose: () => void }) {
  const [found, setFound] = useState<FigureRows | null | 'loading' | 'failed'>('loading');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    let live = true;
    api
      .figureRows(run, n)
      .then((rows) => live && setFound(rows))
      .catch(() => live && setFound('failed'));
    return () => {
      live = false;
    };
  }, [run, n]);
  useEffect(() => heading.current?.focus(), []);
  const labels = found && typeof found === 'object' ? found.sources.map((s) => s.label) : [];
  return (
    <section class="figure-rows" id={`figure-rows-${n}`} aria-labelledby={`figure-rows-${n}-title`}>
      <div class="section-head">
        <h3 class="subhead" id={`figure-rows-${n}-title`} ref={heading} tabIndex={-1}>
          <span class="num">{figure.text}</span>
          {figure.grounding === 'approximate' ? <span class="tiny faint"> (rounded)</span> : null}
          {labels.length > 0 ? <span class="muted"> — {howWords(figure.how, labels)}</span> : null}
        </h3>
        <button type="button" class="btn compact btn-secondary" onClick={onClose}>
          Close
        </button>
      </div>
      {found === 'loading' ? <p class="small muted pulse">Reading the rows…</p> : null}
      {found === 'failed' ? <p class="small tone-danger">The rows could not be read just now. Try again.</p> : null}
      {found === null ? <p class="small muted">This figure's rows are no longer stored with its answer.</p> : null}
      {found && typeof found === 'object'
        ? found.sources.map((s, i) => (
            <div key={i} class="figure-source">
              <p class="small">
                <span class="mono">{s.tool}</span> returned {s.label}: <span class="num">{formatAmount(s)}</span>
              </p>
              {s.found ? (
                <>
                  <table class="ledger-table figure-rows-table">
                    <THead
                      columns={['Date', 'Description', { label: 'Account', wide: true }, { label: 'Posted to', wide: true }, { label: 'Amount', numeric: true }]}
                    />
                    <tbody>
                      {s.found.rows.map((r, k) => (
                        <tr key={`${r.transaction_id}-${k}`}>
                          <td class="num">{shortDate(r.date)}</td>
                          <td>{r.description}</td>
                          <td class="wide-only">{r.account || '—'}</td>
                          <td class="wide-only">{r.posted_to}</td>
                          <td class="n num">{formatAmount(r)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                  <RowsVerdict source={s} />
                </>
              ) : (
                <p class="small muted">No ledger row makes this figure: it is a setting (a budget) or a result worked out from one.</p>
              )}
            </div>
          ))
        : null}
      {found && typeof found === 'object' && found.sources.length === 0 ? (
        <p class="small muted">Nothing in this answer's tool results is this figure.</p>
      ) : null}
    </section>
  );
}
