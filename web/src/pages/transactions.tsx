// /transactions: the register. Every transaction of the person's ledger, searched, sorted and
// paged (GET /api/transactions); from a row the person changes its category or description,
// splits it, deletes it, or undoes the import it came from. Their own edits need no confirmation
// card — each is recorded (GET /api/edits) and can be reverted from this page.

import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api/client';
import type { LedgerEdit, RegisterPage, RegisterRow } from '../api/types';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Empty, Failure, Loading, Section } from '../components/paper';
import { Settled, problemOf as problemIn, useSettled } from '../components/settled';
import { dateTime } from '../lib/format';
import { formatMinor } from '../lib/money';
import { addressOf, apiQuery, filtersFrom, leftToPlace, parseMajor, ruleAddress, rowsText, type Filters } from '../lib/register';
import { refusalSentence } from '../lib/refusals';

/** A refusal in the register's own words. */
function problemOf(e: unknown): string {
  return problemIn(e, 'That row is gone: it was deleted or undone since. The list is read again.');
}

/** A row's category as the register shows it. */
function categoryText(r: RegisterRow): string {
  return r.category ?? (r.kind === 'transit' ? 'waiting for its other side' : r.kind === 'transfer' ? 'transfer' : '—');
}

const KIND_WORD: Record<RegisterRow['kind'], string> = {
  spending: 'out',
  income: 'in',
  transfer: 'moved',
  transit: 'in transit',
  other: 'other',
};

export function Transactions() {
  const { query, route } = useLocation();
  const filters = filtersFrom(query as Record<string, string | undefined>);
  const address = addressOf(filters);
  const [draft, setDraft] = useState<Filters>(filters);
  const [data, setData] = useState<RegisterPage | null | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  const [edits, setEdits] = useState<LedgerEdit[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  // The currency amounts typed in the search are read in: the register's own rows', once one is
  // read; before that none is named (amounts are read with two decimals).
  const [currency, setCurrency] = useState<string | null>(null);
  // After an edit or a revert: the sentence, in view and focused; the list read again.
  const status = useSettled(() => {
    setOpen(null);
    setVersion((v) => v + 1);
  });

  useEffect(() => setDraft(filters), [address]);

  useEffect(() => {
    let live = true;
    const asked = apiQuery(filters, currency);
    if ('problem' in asked) {
      setFailed(asked.problem);
      setData(null);
      return;
    }
    setFailed(null);
    const started = performance.now();
    api
      .transactions(asked.query)
      .then((page) => {
        if (!live) return;
        setData(page);
        const first = page?.rows[0]?.currency;
        if (first) setCurrency(first);
        // Measured by the journey: the register's page on screen after its request went out.
        requestAnimationFrame(() => performance.mark('kakeibo:register-page', { detail: { ms: performance.now() - started } }));
      })
      .catch((e) => live && setFailed(refusalSentence(e).text));
    api
      .edits()
      .then((r) => live && setEdits(r?.edits ?? []))
      .catch(() => live && setEdits([]));
    return () => {
      live = false;
    };
  }, [address, version]);

  function search(next: Filters) {
    setOpen(null);
    route(`/transactions${addressOf(next) ? `?${addressOf(next)}` : ''}`);
  }

  const visiting = data !== null || failed !== null;
  return (
    <Page genre="paper" title="Register" mainClass="register-main">
      <header class="page-head">
        <h1 class="headline">Register</h1>
        <p class="lead">
          Every transaction in your ledger. Change a category, a description or a split here, delete a row or undo an import:
          your own edits need no confirmation, and each one is kept below, where it can be put back.
        </p>
      </header>
      <SearchForm
        draft={draft}
        currency={currency}
        accounts={data?.accounts ?? []}
        categories={data?.categories ?? []}
        onChange={setDraft}
        onSearch={() => search({ ...draft, page: 1 })}
        onClear={() => search({ ...filtersFrom({}) })}
      />
      <Settled state={status} />
      {data === undefined && !failed ? <Loading what="your register" /> : null}
      {failed ? <Failure message={failed} /> : null}
      {data === null && !failed ? (
        <Empty title="No ledger yet" hint={<>Your ledger starts with your first question on the <a href="/chat">chat</a> page.</>} />
      ) : null}
      {data ? (
        <RegisterTable
          page={data}
          filters={filters}
          open={open}
          onOpen={(id) => setOpen((o) => (o === id ? null : id))}
          onSettled={status.settle}
          onPage={(page) => search({ ...filters, page })}
          onImport={(id) => search({ ...filtersFrom({}), import: id })}
        />
      ) : null}
      {visiting ? <EditsList edits={edits} onRevert={(e) => void status.revert(e)} /> : null}
    </Page>
  );
}

function SearchForm({
  draft,
  currency,
  accounts,
  categories,
  onChange,
  onSearch,
  onClear,
}: {
  draft: Filters;
  currency: string | null;
  accounts: string[];
  categories: string[];
  onChange: (f: Filters) => void;
  onSearch: () => void;
  onClear: () => void;
}) {
  const set = (key: keyof Filters) => (e: Event) => onChange({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
  return (
    <form
      class="register-search"
      role="search"
      aria-label="Search the register"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch();
      }}
    >
      <div class="field wide">
        <label class="label" for="r-q">
          Words
        </label>
        <input id="r-q" type="search" value={draft.q} onInput={set('q')} placeholder="bigbasket, rent, salary…" maxLength={200} />
      </div>
      <div class="field">
        <label class="label" for="r-from">
          From
        </label>
        <input id="r-from" type="date" value={draft.from} onInput={set('from')} />
      </div>
      <div class="field">
        <label class="label" for="r-to">
          To
        </label>
        <input id="r-to" type="date" value={draft.to} onInput={set('to')} />
      </div>
      <div class="field">
        <label class="label" for="r-account">
          Account
        </label>
        <select id="r-account" value={draft.account} onChange={set('account')}>
          <option value="">any</option>
          {accounts.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label class="label" for="r-category">
          Category
        </label>
        <select id="r-category" value={draft.category} onChange={set('category')}>
          <option value="">any</option>
          <option value="Transfer">Transfer (between your accounts)</option>
          {categories.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label class="label" for="r-min">
          At least{currency ? ` (${currency})` : ''}
        </label>
        <input id="r-min" inputMode="decimal" value={draft.min} onInput={set('min')} size={8} />
      </div>
      <div class="field">
        <label class="label" for="r-max">
          At most{currency ? ` (${currency})` : ''}
        </label>
        <input id="r-max" inputMode="decimal" value={draft.max} onInput={set('max')} size={8} />
      </div>
      <div class="field">
        <label class="label" for="r-sort">
          Sort by
        </label>
        <select id="r-sort" value={`${draft.sort}:${draft.ascending ? 'up' : 'down'}`} onChange={(e) => {
          const [sort, way] = (e.currentTarget as HTMLSelectElement).value.split(':');
          onChange({ ...draft, sort: (sort as Filters['sort']) ?? 'date', ascending: way === 'up' });
        }}>
          <option value="date:down">newest first</option>
          <option value="date:up">oldest first</option>
          <option value="amount:down">largest first</option>
          <option value="amount:up">smallest first</option>
          <option value="description:up">description A–Z</option>
          <option value="description:down">description Z–A</option>
        </select>
      </div>
      <div class="btn-row">
        <button type="submit" class="btn btn-primary compact">
          Search
        </button>
        <button type="button" class="btn btn-secondary compact" onClick={onClear}>
          Clear
        </button>
      </div>
    </form>
  );
}

function RegisterTable({
  page,
  filters,
  open,
  onOpen,
  onSettled,
  onPage,
  onImport,
}: {
  page: RegisterPage;
  filters: Filters;
  open: string | null;
  onOpen: (id: string) => void;
  onSettled: (text: string, edit: LedgerEdit | null, tone?: 'ok' | 'danger') => void;
  onPage: (page: number) => void;
  onImport: (id: string) => void;
}) {
  const pages = Math.max(1, Math.ceil(page.total / page.per_page));
  if (page.total === 0) {
    return <Empty title="No transactions match" hint="Fewer words or a wider period find more." />;
  }
  return (
    <Section title={rowsText(page)} id="rows">
      {filters.import ? (
        <p class="small muted">
          Only the rows of one import. <a href="/transactions">Every row →</a>
        </p>
      ) : null}
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Transactions">
        <table class="ledger-table register-table">
          <caption class="visually-hidden">Transactions, {rowsText(page)}</caption>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Description</th>
              <th scope="col" class="register-wide">
                Account
              </th>
              <th scope="col" class="register-wide">
                Category
              </th>
              <th scope="col" class="n">
                Amount
              </th>
              <th scope="col">
                <span class="visually-hidden">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.rows.flatMap((r) => {
              const row = (
                <tr key={r.id} data-id={r.id} class={open === r.id ? 'is-open' : undefined}>
                  <td class="num">{r.date}</td>
                  <td>
                    <span class="register-description">{r.description}</span>
                    {r.raw_description !== r.description ? <span class="tiny faint block">statement: {r.raw_description}</span> : null}
                    <span class="tiny faint block register-inline">
                      {r.account} · {categoryText(r)}
                    </span>
                  </td>
                  <td class="muted register-wide">{r.account}</td>
                  <td class="muted register-wide">{categoryText(r)}</td>
                  <td class="num n">
                    {formatMinor(r.amount_minor, r.currency)}
                    <span class="tiny faint block">{KIND_WORD[r.kind]}</span>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="btn btn-secondary compact"
                      aria-expanded={open === r.id}
                      aria-label={`Change ${r.description} of ${r.date}`}
                      onClick={() => onOpen(r.id)}
                    >
                      Change
                    </button>
                  </td>
                </tr>
              );
              if (open !== r.id) return [row];
              return [
                row,
                <tr key={`${r.id}-editor`} class="editor-row">
                  <td colSpan={6}>
                    <RowEditor row={r} categories={page.categories} onSettled={onSettled} onImport={onImport} />
                  </td>
                </tr>,
              ];
            })}
          </tbody>
        </table>
      </div>
      {pages > 1 ? (
        <nav class="btn-row pager" aria-label="Pages">
          <button type="button" class="btn btn-secondary compact" disabled={page.page <= 1} onClick={() => onPage(page.page - 1)}>
            Previous
          </button>
          <span class="small muted">
            Page {page.page} of {pages}
          </span>
          <button type="button" class="btn btn-secondary compact" disabled={page.page >= pages} onClick={() => onPage(page.page + 1)}>
            Next
          </button>
        </nav>
      ) : null}
    </Section>
  );
}

function RowEditor({
  row,
  categories,
  onSettled,
  onImport,
}: {
  row: RegisterRow;
  categories: string[];
  onSettled: (text: string, edit: LedgerEdit | null, tone?: 'ok' | 'danger') => void;
  onImport: (id: string) => void;
}) {
  const categorised = row.kind === 'spending' || row.kind === 'income';
  const [category, setCategory] = useState(row.category && row.category !== 'Split' ? row.category : '');
  const [description, setDescription] = useState(row.description);
  const [splitting, setSplitting] = useState(false);
  const [shares, setShares] = useState<{ category: string; amount: string }[]>(
    row.parts.length > 1
      ? row.parts.map((p) => ({ category: p.category, amount: formatMinor(p.amount_minor, row.currency).replace(/[^\d.]/g, '') }))
      : [
          { category: row.category ?? '', amount: '' },
          { category: '', amount: '' },
        ],
  );
  const [arming, setArming] = useState<'delete' | 'undo' | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const size = Math.abs(row.amount_minor);
  const left = leftToPlace(size, shares.map((s) => s.amount), row.currency);

  async function act(work: () => Promise<LedgerEdit | LedgerEdit[]>) {
    setBusy(true);
    setProblem(null);
    try {
      const made = await work();
      const list = Array.isArray(made) ? made : [made];
      onSettled(list.map((e) => e.summary).join('; ') || 'Nothing to change.', list[list.length - 1] ?? null);
    } catch (e) {
      setProblem(problemOf(e));
      setBusy(false);
    }
  }

  function save() {
    const change: { category?: string; description?: string } = {};
    if (categorised && category && category !== row.category) change.category = category;
    if (description.trim() !== row.description) change.description = description.trim();
    if (!change.category && !change.description) {
      setProblem('Nothing changed: choose another category or write another description.');
      return;
    }
    void act(async () => (await api.changeTransaction(row.id, change)).edits);
  }

  function split() {
    const typed = shares.filter((s) => s.category !== '' || s.amount.trim() !== '');
    const parsed = typed.map((s) => ({ category: s.category, amount_minor: parseMajor(s.amount, row.currency) }));
    const bad = parsed.find((s) => s.category === '' || s.amount_minor === null || s.amount_minor <= 0);
    if (bad || parsed.length === 0) {
      setProblem('Each share needs a category and an amount above zero.');
      return;
    }
    void act(() => api.splitTransaction(row.id, parsed.map((s) => ({ category: s.category, amount_minor: s.amount_minor ?? 0 }))));
  }

  const id = `editor-${row.id}`;
  return (
    <section class="row-editor" aria-labelledby={`${id}-title`}>
      <h3 class="subhead" id={`${id}-title`} ref={heading} tabIndex={-1}>
        Change “{row.description}”
      </h3>
      {categorised ? null : (
        <p class="small muted">
          {row.kind === 'other'
            ? 'An opening balance or a conversion takes no category.'
            : 'Money moved between your own accounts is not spending or income, so it takes no category.'}
        </p>
      )}
      <div class="editor-fields">
        {categorised && !splitting ? (
          <div class="field">
            <label class="label" for={`${id}-category`}>
              Category
            </label>
            <select id={`${id}-category`} value={category} onChange={(e) => setCategory((e.currentTarget as HTMLSelectElement).value)} disabled={busy}>
              {row.category === 'Split' ? <option value="">split across several</option> : null}
              {categories.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        {!splitting ? (
          <div class="field wide">
            <label class="label" for={`${id}-description`}>
              Description
            </label>
            <input id={`${id}-description`} value={description} maxLength={200} onInput={(e) => setDescription((e.currentTarget as HTMLInputElement).value)} disabled={busy} />
          </div>
        ) : null}
      </div>
      {!splitting ? (
        <div class="btn-row">
          <button type="button" class="btn btn-primary compact" onClick={save} disabled={busy}>
            Save
          </button>
          {categorised ? (
            <button type="button" class="btn btn-secondary compact" onClick={() => setSplitting(true)} disabled={busy}>
              Split across categories…
            </button>
          ) : null}
          {categorised ? (
            <a class="btn btn-secondary compact" href={ruleAddress(row.description, category || (row.category ?? null))}>
              All like this…
            </a>
          ) : null}
        </div>
      ) : (
        <fieldset class="split" disabled={busy}>
          <legend class="label">
            Split {formatMinor(size, row.currency)} across categories
          </legend>
          {shares.map((s, i) => (
            <div class="split-share" key={i}>
              <div class="field">
                <label class="label" for={`${id}-share-${i}-category`}>
                  Share {i + 1} category
                </label>
                <select
                  id={`${id}-share-${i}-category`}
                  value={s.category}
                  onChange={(e) => setShares(shares.map((x, j) => (j === i ? { ...x, category: (e.currentTarget as HTMLSelectElement).value } : x)))}
                >
                  <option value="">choose</option>
                  {categories.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label class="label" for={`${id}-share-${i}-amount`}>
                  Share {i + 1} amount ({row.currency})
                </label>
                <input
                  id={`${id}-share-${i}-amount`}
                  inputMode="decimal"
                  value={s.amount}
                  size={10}
                  onInput={(e) => setShares(shares.map((x, j) => (j === i ? { ...x, amount: (e.currentTarget as HTMLInputElement).value } : x)))}
                />
              </div>
            </div>
          ))}
          <p class={`small ${left === 0 ? 'tone-ok' : 'tone-warn'}`} aria-live="polite">
            {left === null ? 'A share does not read as an amount.' : left === 0 ? 'Every bit is placed.' : left > 0 ? `${formatMinor(left, row.currency)} still to place.` : `${formatMinor(-left, row.currency)} too much.`}
          </p>
          <div class="btn-row">
            <button type="button" class="btn btn-secondary compact" onClick={() => setShares([...shares, { category: '', amount: '' }])} disabled={shares.length >= 20}>
              Add a share
            </button>
            <button type="button" class="btn btn-primary compact" onClick={split} disabled={left !== 0}>
              Save the split
            </button>
            <button type="button" class="link-button small" onClick={() => setSplitting(false)}>
              Not now
            </button>
          </div>
        </fieldset>
      )}
      <div class="btn-row danger-zone">
        {arming === 'delete' ? (
          <>
            <span class="small">Delete this row? It can be put back from “Your edits”.</span>
            <button type="button" class="btn btn-danger compact" onClick={() => void act(() => api.deleteTransaction(row.id))} disabled={busy}>
              Delete it
            </button>
            <button type="button" class="link-button small" onClick={() => setArming(null)}>
              Keep it
            </button>
          </>
        ) : arming === 'undo' && row.import_batch_id ? (
          <>
            <span class="small">Remove every row {row.import_file} added? A transfer it completed waits for its other side again.</span>
            <button
              type="button"
              class="btn btn-danger compact"
              onClick={() => row.import_batch_id && void act(() => api.undoImport(row.import_batch_id ?? ''))}
              disabled={busy}
            >
              Undo the import
            </button>
            <button type="button" class="link-button small" onClick={() => setArming(null)}>
              Keep it
            </button>
          </>
        ) : (
          <>
            <button type="button" class="btn btn-secondary compact" onClick={() => setArming('delete')} disabled={busy}>
              Delete this row…
            </button>
            {row.import_batch_id ? (
              <>
                <button type="button" class="btn btn-secondary compact" onClick={() => setArming('undo')} disabled={busy}>
                  Undo the import of {row.import_file}…
                </button>
                <button type="button" class="link-button small" onClick={() => row.import_batch_id && onImport(row.import_batch_id)}>
                  Its rows
                </button>
              </>
            ) : null}
          </>
        )}
      </div>
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">refused</Mark> {problem}
        </p>
      ) : null}
    </section>
  );
}

function EditsList({ edits, onRevert }: { edits: LedgerEdit[]; onRevert: (e: LedgerEdit) => void }) {
  return (
    <Section title="Your edits" id="edits" note="What you changed here, newest first. Putting one back works while nothing has changed those rows since.">
      {edits.length === 0 ? (
        <p class="small muted">None yet.</p>
      ) : (
        <ol class="rows edit-list">
          {edits.map((e) => (
            <li key={e.id} class="row edit-row">
              <span>
                {e.summary}
                <span class="tiny faint block">{dateTime(e.made_at)}</span>
              </span>
              {e.reverted_at ? (
                <span class="tiny faint">put back</span>
              ) : (
                <button type="button" class="btn btn-secondary compact" aria-label={`Put back: ${e.summary}`} onClick={() => onRevert(e)}>
                  Put back
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}
