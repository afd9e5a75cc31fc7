// Bringing a statement: choose or drop a statement file (any format the importer reads), upload it, and read the importer's preview — rows
// to add, duplicates skipped, rows it could not read with their line numbers — before anything is
// written. Importing is a write like any other: it goes through the agent and its confirmation.

import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, type PreviewOptions } from '../api/client';
import type { AccountKind, Figure, ImportPreview, LineCount, PlannedTransfer, RowError, TakenFigure, Upload } from '../api/types';
import { CURRENCIES, formatAmount, formatMinor } from '../lib/money';
import { answersWith } from '../lib/transfers';
import { figureLabel, figuresWith, importMessage } from '../lib/plan';
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
  | { kind: 'previewed'; upload: Upload; preview: ImportPreview; options: PreviewOptions }
  | { kind: 'failed'; text: string; upload?: Upload }
  /** A file of several statements (accounts): the person picks the one to read. */
  | { kind: 'choose'; text: string; upload: Upload; statements: string[] };

/** What a refused upload or preview leaves on the page: the choice of a statement when the file
 * holds several, else the refusal's own sentence (for `statuses`), else a general one. */
function refused(e: unknown, upload: Upload | undefined, statuses: number[]): Stage {
  if (e instanceof ApiError && e.reason === 'several_statements' && upload && e.statements.length > 0) {
    return { kind: 'choose', text: e.message, upload, statements: e.statements };
  }
  const own = e instanceof ApiError && statuses.includes(e.status);
  return { kind: 'failed', text: own ? (e as ApiError).message : refusalSentence(e).text, upload };
}

export const SAMPLE_STATEMENT = '/sample-statement.csv';

/** The currencies a statement's unnamed amounts may be read in (the ledger's). */

/** Whether the statement leaves its currency unnamed, so a person may say which it is: its
 * currency came from the account it goes into, or from an earlier choice here. */
export function currencyIsChosen(currencyFrom: string | null | undefined): boolean {
  return (
    !!currencyFrom &&
    (currencyFrom.startsWith('the account') || currencyFrom.startsWith('your home currency') || currencyFrom.endsWith(', as asked'))
  );
}

/** The currency the unnamed amounts were read in, from where the preview says it came. */
export function currencyRead(currencyFrom: string | null | undefined, fallback: string): string {
  const match =
    /^([A-Z]{3}), as asked$/.exec(currencyFrom ?? '') ??
    /holds ([A-Z]{3})/.exec(currencyFrom ?? '') ??
    /home currency, ([A-Z]{3})/.exec(currencyFrom ?? '');
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
  const panel = useRef<HTMLElement>(null);

  // What the panel says next is brought into view with the focus on it: the panel's heading when
  // it opens, the preview's heading, or the refusal — never left below the composer.
  useEffect(() => {
    const root = panel.current;
    if (!root) return;
    const target =
      stage.kind === 'previewed'
        ? root.querySelector<HTMLElement>('.preview .subhead')
        : stage.kind === 'failed'
          ? root.querySelector<HTMLElement>('.note')
          : stage.kind === 'choose'
            ? root.querySelector<HTMLElement>('.statement-choice')
            : stage.kind === 'idle'
              ? root.querySelector<HTMLElement>('#upload-title')
              : null;
    if (!target) return;
    const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    target.scrollIntoView({ block: 'start', behavior: reduce ? 'auto' : 'smooth' });
    target.focus({ preventScroll: true });
  }, [stage.kind]);

  async function take(file: File) {
    if (file.size === 0) {
      setStage({ kind: 'failed', text: `${file.name} is empty.` });
      return;
    }
    if (file.size > 10 * 1024 * 1024) {
      setStage({ kind: 'failed', text: `${file.name} is larger than 10 MiB, the most a statement may be.` });
      return;
    }
    await keep(file.name, () => api.upload(file));
  }

  /** Stores a statement (or finds the same bytes kept already) and previews it. */
  async function keep(name: string, store: () => Promise<Upload>) {
    let upload: Upload | undefined;
    try {
      setStage({ kind: 'working', what: `Uploading ${name}…` });
      await ensureVisit();
      upload = await store();
      setStage({ kind: 'working', what: `Reading ${name}…` });
      const preview = await api.preview(upload.id);
      setStage({ kind: 'previewed', upload, preview, options: {} });
    } catch (e) {
      // The upload routes' own sentences say what is wrong with the file or the room left
      // (409: twenty statements or 50 MiB kept already; 413; 422: a file the importer cannot read).
      setStage(refused(e, upload, [400, 409, 413, 422, 429]));
    }
  }

  async function answer(upload: Upload, preview: ImportPreview, options: PreviewOptions, answers: { line: number; candidate: number }[]) {
    try {
      const answered = await api.answer(preview.plan_id, answers);
      setStage({ kind: 'previewed', upload, preview: answered, options });
    } catch (e) {
      const own = e instanceof ApiError && [400, 404, 422].includes(e.status);
      setStage({ kind: 'failed', text: own ? (e as ApiError).message : refusalSentence(e).text, upload });
    }
  }

  async function reread(upload: Upload, options: PreviewOptions) {
    try {
      const into = options.account ? ` into ${options.account}` : '';
      const currency = options.currency ? ` in ${options.currency}` : '';
      setStage({ kind: 'working', what: `Reading ${upload.filename}${into}${currency}…` });
      const preview = await api.preview(upload.id, options);
      setStage({ kind: 'previewed', upload, preview, options });
    } catch (e) {
      setStage(refused(e, upload, [400, 409, 413, 422, 429]));
    }
  }

  /** The shipped sample, kept by the server once and counted against none of the visitor's
   * uploads. */
  async function sample() {
    await keep('sample-statement.csv', () => api.uploadSample());
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
    <section class="upload" aria-labelledby="upload-title" ref={panel}>
      <div class="section-head">
        <h2 class="section-title" id="upload-title" tabIndex={-1}>
          Bring a statement
        </h2>
        <button type="button" class="link-button small" onClick={onClose}>
          Close
        </button>
      </div>
      <p class="section-note">
        A bank statement as CSV, OFX (QFX, QBO), camt, MT940 or QIF, up to 10 MiB. You see what it would add before anything is written; importing asks for
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
          Choose a statement file
          <input
            ref={input}
            class="visually-hidden"
            type="file"
            accept=".csv,.txt,.ofx,.qfx,.qbo,.xml,.sta,.mt940,.940,.qif,text/csv,text/plain,text/xml,application/xml,application/x-ofx"
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
          {stage.text.includes('delete one first') ? (
            <>
              {' '}
              <a href="/privacy#statements">Your statements →</a>
            </>
          ) : null}
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
                  if (upload) void reread(upload, { currency: (e.currentTarget as HTMLSelectElement).value });
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
      {stage.kind === 'choose' ? (
        <div class="statement-choice" role="group" tabIndex={-1} aria-label={`The statements of ${stage.upload.filename}`}>
          <p class="small">{stage.text}</p>
          <ul>
            {stage.statements.map((statement, i) => (
              <li key={statement}>
                <button type="button" class="btn btn-secondary compact" onClick={() => void reread(stage.upload, { statement: i + 1 })}>
                  Read statement {i + 1}
                </button>{' '}
                <span class="small">{statement}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {stage.kind === 'previewed' ? (
        <PreviewView
          preview={stage.preview}
          busy={busy}
          onCurrency={(currency) => void reread(stage.upload, { ...stage.options, currency })}
          onAccount={(account, kind) => void reread(stage.upload, { ...stage.options, account, kind })}
          onAnswer={(answers) => void answer(stage.upload, stage.preview, stage.options, answers)}
          onFigure={(line, take) =>
            void reread(stage.upload, { ...stage.options, figures: figuresWith(stage.options.figures ?? [], line, take) })
          }
          onImport={() => {
            onImport(importMessage(stage.preview));
            setStage({ kind: 'idle' });
          }}
          onDiscard={() => void discard(stage.upload)}
        />
      ) : null}
    </section>
  );
}

/** The kinds a person picks from for a new account. */
export const KINDS: { kind: AccountKind; label: string }[] = [
  { kind: 'checking', label: 'Checking' },
  { kind: 'savings', label: 'Savings' },
  { kind: 'card', label: 'Credit card (owed)' },
  { kind: 'cash', label: 'Cash' },
  { kind: 'loan', label: 'Loan (owed)' },
];

const NEW_ACCOUNT = '\u0000new';

/** Which account the statement belongs to: one of the person's, or a new one with its name and
 * kind. A choice reads the statement again into that account. */
function AccountChooser({ preview: p, onAccount }: { preview: ImportPreview; onAccount: (account: string, kind?: AccountKind) => void }) {
  const planned = p.accounts[0];
  const existing = p.account_choices ?? [];
  const isNew = planned ? !planned.exists : false;
  const [choosing, setChoosing] = useState<string>(isNew ? NEW_ACCOUNT : (planned?.name ?? ''));
  const [name, setName] = useState(isNew ? (planned?.name ?? '') : '');
  // A new account's kind: what the statement says it is (a card's rows), else the planned one's.
  const [kind, setKind] = useState<AccountKind>(p.format?.account_kind?.kind ?? planned?.kind ?? 'checking');
  return (
    <div class="metaline preview-account">
      <dt>
        <label for="preview-account">into</label>
      </dt>
      <dd>
        <select
          id="preview-account"
          class="compact"
          value={choosing}
          onChange={(e) => {
            const value = (e.currentTarget as HTMLSelectElement).value;
            setChoosing(value);
            if (value !== NEW_ACCOUNT) onAccount(value);
          }}
        >
          {existing.map((a) => (
            <option key={a.name} value={a.name}>
              {a.name} ({a.kind}, {a.currency})
            </option>
          ))}
          <option value={NEW_ACCOUNT}>A new account…</option>
        </select>
        {choosing === NEW_ACCOUNT ? (
          <span class="btn-row">
            <label class="visually-hidden" for="preview-account-name">
              New account's name
            </label>
            <input
              id="preview-account-name"
              class="compact"
              placeholder="Its name, e.g. Joint Savings"
              value={name}
              maxLength={80}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
            <label class="visually-hidden" for="preview-account-kind">
              New account's kind
            </label>
            <select
              id="preview-account-kind"
              class="compact"
              value={kind}
              onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as AccountKind)}
            >
              {KINDS.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.label}
                </option>
              ))}
            </select>
            <button type="button" class="btn btn-secondary compact" disabled={!name.trim()} onClick={() => onAccount(name.trim(), kind)}>
              Read it into this account
            </button>
          </span>
        ) : null}
        {planned ? (
          <span class="small muted preview-kind">
            {' '}
            {planned.name}: {planned.exists ? 'an existing' : 'a new'} {planned.kind ?? 'checking'} account in {planned.currency}
            {planned.kind_from ? ` (${planned.kind_from})` : ''}
            {p.account_from ? ` — into this account because ${p.account_from}` : ''}
          </span>
        ) : null}
      </dd>
    </div>
  );
}

/** A row that fits several others equally: the person says which it is one transfer with, or
 * leaves it waiting in transit. Never guessed. */
function Question({ transfer: t, onAnswer }: { transfer: PlannedTransfer; onAnswer: (candidate: number | null) => void }) {
  const name = `transfer-${t.row.line ?? 0}`;
  return (
    <fieldset class="transfer-question">
      <legend class="visually-hidden">Which row is line {t.row.line} one transfer with?</legend>
      {t.candidates.map((c, i) => (
        <label key={`${c.account}-${c.date}-${i}`} class="small transfer-candidate">
          <input type="radio" name={name} checked={t.answer === i} onChange={() => onAnswer(i)} /> {c.account} {c.date} {c.description}{' '}
          <span class="num">{formatAmount(c.amount)}</span>
        </label>
      ))}
      <label class="small transfer-candidate">
        <input type="radio" name={name} checked={typeof t.answer !== 'number'} onChange={() => onAnswer(null)} /> none of these: it waits in transit
      </label>
    </fieldset>
  );
}

/** A row the balance column refuses, though it reads: its two figures, and a choice of which is
 * right. Nothing is taken in until the person picks one; the preview is then read again. */
function FigureChoice({ error: e, onFigure }: { error: RowError; onFigure: (line: number, take: Figure | null) => void }) {
  const figures = e.figures;
  if (!figures) return null;
  const heading = `figures-${e.line}`;
  return (
    <div class="figure-choice" role="group" aria-labelledby={heading}>
      <p class="small" id={heading}>
        Line {e.line} reads fine; only the bank's balance disagrees. Which figure is right?
      </p>
      <span class="btn-row">
        {(['amount', 'balance'] as const).map((take) => (
          <button key={take} type="button" class="btn btn-secondary compact" onClick={() => onFigure(e.line, take)}>
            Take {figureLabel(figures, take)}
          </button>
        ))}
      </span>
    </div>
  );
}

/** The refused rows taken in at the figure the person chose: recorded with the plan, and each can
 * be left out again. */
function TakenRows({ taken, onFigure }: { taken: TakenFigure[]; onFigure: (line: number, take: Figure | null) => void }) {
  if (taken.length === 0) return null;
  return (
    <div class="preview-taken">
      <h4 class="label">Taken in on your word</h4>
      <p class="tiny faint">The balance column disagrees with these rows; each goes in at the figure you chose, and the import records it.</p>
      <ul>
        {taken.map((t) => (
          <li key={t.line} class="small">
            <Mark tone="warn">line {t.line}</Mark>{' '}
            {t.take === 'balance' && t.balance_minor === 0 ? 'left out: its balance did not move' : `at ${figureLabel(t, t.take)}`} (
            {t.take === 'amount' ? 'the balance moved ' : 'the row states '}
            <span class="num">{formatMinor(t.take === 'amount' ? t.balance_minor : t.amount_minor, t.currency)}</span>)
            <span class="btn-row">
              <button type="button" class="btn btn-secondary compact" onClick={() => onFigure(t.line, null)}>
                {t.take === 'balance' && t.balance_minor === 0 ? `Ask about line ${t.line} again` : `Leave line ${t.line} out`}
              </button>
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The rows that look like money moved between the person's own accounts: never spending. */
function Transfers({
  transfers,
  days,
  onAnswer,
}: {
  transfers: PlannedTransfer[];
  days: number;
  onAnswer: (answers: { line: number; candidate: number }[]) => void;
}) {
  if (transfers.length === 0) return null;
  return (
    <div class="preview-transfers">
      <h4 class="label">Transfers between your accounts</h4>
      <p class="tiny faint">
        Neither spending nor income. A row pairs with its other side when that side is within {days} days; until then it waits
        in transit.
      </p>
      <ul>
        {transfers.map((t) => (
          <li key={`${t.row.line ?? t.row.date}-${t.row.description}`} class="small" data-status={t.status}>
            <Mark tone={t.status === 'paired' ? 'ok' : t.status === 'ask' ? 'danger' : 'warn'}>
              {t.status === 'paired' ? 'paired' : t.status === 'ask' ? 'which one?' : 'in transit'}
            </Mark>{' '}
            line {t.row.line} {t.row.date} {t.row.description} <span class="num">{formatAmount(t.row.amount)}</span>: {t.in_words}
            {t.status === 'ask' && t.row.line !== null ? (
              <Question transfer={t} onAnswer={(candidate) => onAnswer(answersWith(transfers, t.row.line as number, candidate))} />
            ) : null}
          </li>
        ))}
      </ul>
    </div>
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
  onAccount,
  onAnswer,
  onFigure,
}: {
  preview: ImportPreview;
  busy: boolean;
  onImport: () => void;
  onDiscard: () => void;
  onCurrency: (currency: string) => void;
  onAccount: (account: string, kind?: AccountKind) => void;
  onAnswer: (answers: { line: number; candidate: number }[]) => void;
  /** Takes a refused row in at a figure (or leaves it out again, `null`): the preview is read again. */
  onFigure: (line: number, take: Figure | null) => void;
}) {
  // The bank's corrections that take out a row of an earlier statement: work even with no row to add.
  const corrections = p.corrections.filter((c) => c.transaction !== null).length;
  const nothingNew = p.rows_to_add === 0 && corrections === 0;
  const unnamed = currencyIsChosen(p.format?.currency_from);
  // The currency the rows are read in; none named when the preview plans no account.
  const shown = currencyRead(p.format?.currency_from, p.accounts[0]?.currency ?? '');
  const choices = shown === '' || CURRENCIES.includes(shown) ? CURRENCIES : [shown, ...CURRENCIES];
  return (
    <div class="preview" aria-label={`Preview of ${p.filename}`}>
      <h3 class="subhead" tabIndex={-1}>
        {nothingNew
          ? 'Nothing new'
          : p.rows_to_add > 0
            ? `${p.rows_to_add} row${p.rows_to_add === 1 ? '' : 's'} to add`
            : `${corrections} correction${corrections === 1 ? '' : 's'} to apply`}{' '}
        from{' '}
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
        <AccountChooser preview={p} onAccount={onAccount} />
        {p.opening_balance ? (
          <div class="metaline">
            <dt>opening balance</dt>
            <dd class="num">
              {formatAmount(p.opening_balance.amount)} on {p.opening_balance.date}, against Opening Balances
            </dd>
          </div>
        ) : null}
        {p.closing_balance ? (
          <div class="metaline">
            <dt>closing balance</dt>
            <dd class={p.closing_balance.agrees ? undefined : 'tone-danger'}>{p.closing_balance.in_words}</dd>
          </div>
        ) : null}
        {p.elsewhere ? (
          <div class="metaline">
            <dt>already imported</dt>
            <dd class="tone-danger">
              {p.elsewhere.rows} of these rows are already in {p.elsewhere.account}: they are not added again
            </dd>
          </div>
        ) : null}
      </dl>
      <Transfers transfers={p.transfers ?? []} days={p.transfer_window_days ?? 5} onAnswer={onAnswer} />
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
                {e.figures ? <FigureChoice error={e} onFigure={onFigure} /> : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <TakenRows taken={p.format?.taken ?? []} onFigure={onFigure} />
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
      {p.corrections.length > 0 ? (
        <div class="preview-corrections">
          <h4 class="label">The bank's corrections of earlier rows ({p.corrections.length})</h4>
          <ul>
            {p.corrections.map((c) => (
              <li key={c.line} class={`small${c.transaction === null ? ' muted' : ''}`}>
                {c.in_words}
              </li>
            ))}
          </ul>
        </div>
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
            {p.rows_to_add > 0
              ? `Import ${p.rows_to_add} row${p.rows_to_add === 1 ? '' : 's'}`
              : `Apply ${corrections} correction${corrections === 1 ? '' : 's'}`}
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
