// Bringing a statement: choose or drop a CSV, upload it, and read the importer's preview — rows
// to add, duplicates skipped, rows it could not read with their line numbers — before anything is
// written. Importing is a write like any other: it goes through the agent and its confirmation.

import { useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api/client';
import type { ImportPreview, LineCount, Upload } from '../api/types';
import { formatAmount } from '../lib/money';
import { refusalSentence } from '../lib/refusals';
import { Mark } from './mark';
import { Note } from './paper';
import { EntriesTable } from './table';

interface Props {
  /** Asks the agent to import the previewed plan (the write is confirmed like any other). */
  onImport: (message: string) => void;
  onClose: () => void;
  ensureVisit: () => Promise<void>;
  busy: boolean;
}

type Stage =
  | { kind: 'idle' }
  | { kind: 'working'; what: string }
  | { kind: 'previewed'; upload: Upload; preview: ImportPreview }
  | { kind: 'failed'; text: string; upload?: Upload };

export const SAMPLE_STATEMENT = '/sample-statement.csv';

/** The currencies a statement's unnamed amounts may be read in (the ledger's). */
export const CURRENCIES = ['INR', 'USD', 'EUR', 'GBP', 'JPY'];

/** Whether the statement leaves its currency unnamed, so a person may say which it is: its
 * currency came from the account it goes into, or from an earlier choice here. */
export function currencyIsChosen(currencyFrom: string | null | undefined): boolean {
  return !!currencyFrom && (currencyFrom.startsWith('the account') || currencyFrom.endsWith(', as asked'));
}

/** The currency the unnamed amounts were read in, from where the preview says it came. */
export function currencyRead(currencyFrom: string | null | undefined, fallback: string): string {
  const match = /^([A-Z]{3}), as asked$/.exec(currencyFrom ?? '') ?? /holds ([A-Z]{3})/.exec(currencyFrom ?? '');
  return match?.[1] ?? fallback;
}

/** A refusal that a currency would lift. */
export function needsCurrency(text: string): boolean {
  return text.includes('states no currency');
}

export function UploadPanel({ onImport, onClose, ensureVisit, busy }: Props) {
  const [stage, setStage] = useState<Stage>({ kind: 'idle' });
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  async function take(file: File) {
    if (file.size === 0) {
      setStage({ kind: 'failed', text: `${file.name} is empty.` });
      return;
    }
    if (file.size > 10 * 1024 * 1024) {
      setStage({ kind: 'failed', text: `${file.name} is larger than 10 MiB, the most a statement may be.` });
      return;
    }
    let upload: Upload | undefined;
    try {
      setStage({ kind: 'working', what: `Uploading ${file.name}…` });
      await ensureVisit();
      upload = await api.upload(file);
      setStage({ kind: 'working', what: `Reading ${file.name}…` });
      const preview = await api.preview(upload.id);
      setStage({ kind: 'previewed', upload, preview });
    } catch (e) {
      // The upload routes' own sentences say what is wrong with the file or the room left
      // (409: twenty statements or 50 MiB kept already; 413; 422: a file the importer cannot read).
      const own = e instanceof ApiError && [400, 409, 413, 422, 429].includes(e.status);
      setStage({ kind: 'failed', text: own ? (e as ApiError).message : refusalSentence(e).text, upload });
    }
  }

  async function reread(upload: Upload, currency: string) {
    try {
      setStage({ kind: 'working', what: `Reading ${upload.filename} in ${currency}…` });
      const preview = await api.preview(upload.id, currency);
      setStage({ kind: 'previewed', upload, preview });
    } catch (e) {
      const own = e instanceof ApiError && [400, 409, 413, 422, 429].includes(e.status);
      setStage({ kind: 'failed', text: own ? (e as ApiError).message : refusalSentence(e).text, upload });
    }
  }

  async function sample() {
    try {
      const response = await fetch(SAMPLE_STATEMENT);
      if (!response.ok) throw new Error(`the sample statement could not be fetched (HTTP ${response.status})`);
      const blob = await response.blob();
      await take(new File([blob], 'sample-statement.csv', { type: 'text/csv' }));
    } catch (e) {
      setStage({ kind: 'failed', text: e instanceof Error ? e.message : String(e) });
    }
  }

  async function discard(upload: Upload) {
    try {
      await api.deleteUpload(upload.id);
    } catch {
      // Already gone, or the session ended: nothing to keep either way.
    }
    setStage({ kind: 'idle' });
  }

  return (
    <section class="upload" aria-labelledby="upload-title">
      <div class="section-head">
        <h2 class="section-title" id="upload-title">
          Bring a statement
        </h2>
        <button type="button" class="link-button small" onClick={onClose}>
          Close
        </button>
      </div>
      <p class="section-note">
        A bank statement as CSV, up to 10 MiB. You see what it would add before anything is written; importing asks for
        your confirmation like every other write.
      </p>
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          const file = e.dataTransfer?.files?.[0];
          if (file) void take(file);
        }}
      >
        <label class="btn btn-secondary compact file-label">
          Choose a CSV file
          <input
            ref={input}
            class="visually-hidden"
            type="file"
            accept=".csv,text/csv,text/plain"
            onChange={(e) => {
              const file = (e.currentTarget as HTMLInputElement).files?.[0];
              if (file) void take(file);
              (e.currentTarget as HTMLInputElement).value = '';
            }}
          />
        </label>
        <span class="small muted">or drop one here, or</span>
        <button type="button" class="btn btn-secondary compact" onClick={() => void sample()}>
          Use the sample statement
        </button>
        <a class="small" href={SAMPLE_STATEMENT} download>
          download it
        </a>
      </div>
      {stage.kind === 'working' ? (
        <p class="small muted" role="status">
          <span class="pulse">{stage.what}</span>
        </p>
      ) : null}
      {stage.kind === 'failed' ? (
        <Note tone="danger" word="failed">
          {stage.text}
          {stage.upload && needsCurrency(stage.text) ? (
            <span class="btn-row">
              <label class="small" for="failed-currency">
                Read its amounts as
              </label>{' '}
              <select
                id="failed-currency"
                class="compact"
                onChange={(e) => {
                  const upload = stage.upload;
                  if (upload) void reread(upload, (e.currentTarget as HTMLSelectElement).value);
                }}
              >
                <option value="">choose a currency</option>
                {CURRENCIES.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </span>
          ) : null}
        </Note>
      ) : null}
      {stage.kind === 'previewed' ? (
        <PreviewView
          preview={stage.preview}
          busy={busy}
          onCurrency={(currency) => void reread(stage.upload, currency)}
          onImport={() => {
            const p = stage.preview;
            onImport(`Import the statement ${p.filename} (plan ${p.plan_id}).`);
            setStage({ kind: 'idle' });
          }}
          onDiscard={() => void discard(stage.upload)}
        />
      ) : null}
    </section>
  );
}

/** "12 lines in the file: 1 header, 10 to add, 1 blank" — every line accounted for. */
export function linesText(l: LineCount): string {
  const parts: [number, string][] = [
    [l.header, 'header'],
    [l.banner, 'banner'],
    [l.rows, 'to add'],
    [l.duplicates, 'already in the ledger'],
    [l.skipped, 'skipped (not transactions)'],
    [l.unreadable, 'unreadable'],
    [l.notes, l.notes === 1 ? 'note' : 'notes'],
    [l.blank, 'blank'],
    [l.continued, 'continuing a quoted cell'],
  ];
  const named = parts.filter(([k]) => k > 0).map(([k, what]) => `${k} ${what}`);
  return `${l.total} line${l.total === 1 ? '' : 's'} in the file: ${named.join(', ')}`;
}

function PreviewView({
  preview: p,
  busy,
  onImport,
  onDiscard,
  onCurrency,
}: {
  preview: ImportPreview;
  busy: boolean;
  onImport: () => void;
  onDiscard: () => void;
  onCurrency: (currency: string) => void;
}) {
  const nothingNew = p.rows_to_add === 0;
  const unnamed = currencyIsChosen(p.format?.currency_from);
  const shown = currencyRead(p.format?.currency_from, p.accounts[0]?.currency ?? 'INR');
  const choices = CURRENCIES.includes(shown) ? CURRENCIES : [shown, ...CURRENCIES];
  return (
    <div class="preview" aria-label={`Preview of ${p.filename}`}>
      <h3 class="subhead">
        {nothingNew ? 'Nothing new' : `${p.rows_to_add} row${p.rows_to_add === 1 ? '' : 's'} to add`} from{' '}
        <span class="mono small">{p.filename}</span>
      </h3>
      {nothingNew ? (
        <p class="small muted preview-nothing" role="status">
          {p.duplicates_skipped > 0
            ? `Nothing new: all ${p.duplicates_skipped} row${p.duplicates_skipped === 1 ? ' is' : 's are'} already in your ledger.`
            : 'Nothing new: the file holds no rows that could be read.'}
        </p>
      ) : null}
      <dl class="preview-figures">
        <div class="metaline">
          <dt>rows to add</dt>
          <dd class="num">{p.rows_to_add}</dd>
        </div>
        <div class="metaline">
          <dt>duplicates skipped</dt>
          <dd class="num">{p.duplicates_skipped}</dd>
        </div>
        <div class="metaline">
          <dt>could not be read</dt>
          <dd class={`num${p.parse_errors > 0 ? ' tone-danger' : ''}`}>{p.parse_errors}</dd>
        </div>
        {p.date_range ? (
          <div class="metaline">
            <dt>dates</dt>
            <dd class="num">
              {p.date_range.from} to {p.date_range.to}
              {p.format?.date_order_assumed ? (
                <span class="tone-danger">
                  {' '}
                  (every date reads either way: read {p.format.date_order === 'month_first' ? 'month-first' : p.format.date_order === 'year_first' ? 'year-first' : 'day-first'}; check them)
                </span>
              ) : null}
            </dd>
          </div>
        ) : null}
        {p.rows_to_add > 0
          ? p.money_in.map((m) => (
              <div class="metaline" key={`in-${m.currency}`}>
                <dt>money in</dt>
                <dd class="num">{formatAmount(m)}</dd>
              </div>
            ))
          : null}
        {p.rows_to_add > 0
          ? p.money_out.map((m) => (
              <div class="metaline" key={`out-${m.currency}`}>
                <dt>money out</dt>
                <dd class="num">{formatAmount(m)}</dd>
              </div>
            ))
          : null}
        {p.format?.reconciliation && p.balance_check ? (
          <div class="metaline">
            <dt>balance check</dt>
            <dd class={p.format.reconciliation.reconciled < p.format.reconciliation.checked ? 'tone-danger' : undefined}>{p.balance_check}</dd>
          </div>
        ) : null}
        {unnamed ? (
          <div class="metaline">
            <dt>
              <label for="preview-currency">currency</label>
            </dt>
            <dd>
              <select id="preview-currency" class="compact" value={shown} onChange={(e) => onCurrency((e.currentTarget as HTMLSelectElement).value)}>
                {choices.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>{' '}
              <span class="small muted">the statement names none; read as {shown} ({p.format?.currency_from})</span>
            </dd>
          </div>
        ) : null}
        <div class="metaline">
          <dt>into</dt>
          <dd>{p.accounts.map((a) => `${a.name} (${a.currency}${a.exists ? '' : ', new'})`).join(', ') || 'no account'}</dd>
        </div>
      </dl>
      <p class="small muted preview-layout">{p.layout}</p>
      {p.first_rows.length > 0 ? (
        <EntriesTable
          visibleCaption
          caption={p.first_rows.length + p.last_rows.length < p.rows_to_add ? `The first and last rows of ${p.rows_to_add}` : 'The rows'}
          rows={[...p.first_rows, ...p.last_rows].map((r) => ({ ...r, key: String(r.line) }))}
          omitted={{ after: p.first_rows.length - 1, count: p.rows_to_add - p.first_rows.length - p.last_rows.length }}
        />
      ) : null}
      {p.errors.length > 0 ? (
        <div class="preview-errors">
          <h4 class="label tone-danger">Rows that could not be read</h4>
          <ul>
            {p.errors.map((e) => (
              <li key={`${e.line}-${e.column ?? ''}`} class="small">
                <Mark tone="danger">line {e.line}</Mark> {e.column ? `${e.column}: ` : ''}
                {e.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {p.skipped.length > 0 ? (
        <details class="preview-skipped">
          <summary class="small">Skipped: not transactions ({p.lines.skipped})</summary>
          <ul>
            {p.skipped.map((e) => (
              <li key={e.line} class="small muted">
                line {e.line}: {e.message}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {p.duplicates.length > 0 ? (
        <details class="preview-duplicates">
          <summary class="small">Duplicates skipped ({p.duplicates_skipped})</summary>
          <ul>
            {p.duplicates.map((d) => (
              <li key={d.line} class="small muted">
                line {d.line}: {d.date} {d.description}: {d.reason}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      <p class="tiny faint preview-lines">{linesText(p.lines)}</p>
      <div class="btn-row" style={{ marginTop: '16px' }}>
        {nothingNew ? null : (
          <button type="button" class="btn btn-primary compact" disabled={busy} onClick={onImport}>
            Import {p.rows_to_add} row{p.rows_to_add === 1 ? '' : 's'}
          </button>
        )}
        <button type="button" class="btn btn-secondary compact" onClick={onDiscard}>
          {nothingNew ? 'Done' : 'Discard'}
        </button>
      </div>
      {nothingNew ? null : <p class="tiny faint">Importing asks the agent, which stops for your confirmation before it writes.</p>}
    </div>
  );
}
