// /budgets: one month of every spending category — its budget, what was spent (net of refunds;
// money moved between one's own accounts is never spent) and what is left — from GET
// /api/budgets. Each spent figure leads to the register's rows behind it. A budget is set,
// changed or removed in place.

import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api/client';
import type { BudgetLine, BudgetMonth } from '../api/types';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Empty, Failure, Loading, Section } from '../components/paper';
import { Settled, problemOf, useSettled } from '../components/settled';
import { shiftMonth, standing } from '../lib/budgets';
import { count, monthName } from '../lib/format';
import { decimals, formatMinor } from '../lib/money';
import { parseMajor } from '../lib/register';
import { refusalSentence } from '../lib/refusals';

type Settle = ReturnType<typeof useSettled>['settle'];

export function Budgets() {
  const { query, route } = useLocation();
  const asked = typeof query.month === 'string' && /^\d{4}-\d{2}$/.test(query.month) ? query.month : null;
  const [data, setData] = useState<BudgetMonth | null | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const status = useSettled(() => {
    setOpen(null);
    setVersion((v) => v + 1);
  });

  useEffect(() => {
    let live = true;
    setFailed(null);
    api
      .budgets(asked)
      .then((view) => live && setData(view))
      .catch((e) => live && setFailed(refusalSentence(e).text));
    return () => {
      live = false;
    };
  }, [asked, version]);

  const month = data?.month ?? asked ?? '';
  const previous = shiftMonth(month, -1);
  const next = shiftMonth(month, 1);
  return (
    <Page genre="paper" title={month ? `Budgets · ${monthName(month)}` : 'Budgets'} mainClass="register-main">
      <header class="page-head">
        <h1 class="headline">Budgets{month ? ` · ${monthName(month)}` : ''}</h1>
        <p class="lead">
          What you mean to spend on each category in a month, against what you did. Spent is net of refunds, and money moved
          between your own accounts is never spending. Each figure opens the rows behind it.
        </p>
        <nav aria-label="Month" class="month-nav small btn-row">
          {previous ? <a href={`/budgets?month=${previous}`}>← {monthName(previous)}</a> : null}
          <form
            class="month-pick"
            onSubmit={(e) => {
              e.preventDefault();
              const value = (e.currentTarget.elements.namedItem('month') as HTMLInputElement).value;
              if (/^\d{4}-\d{2}$/.test(value)) route(`/budgets?month=${value}`);
            }}
          >
            <label class="visually-hidden" for="b-month">
              Month
            </label>
            <input id="b-month" name="month" type="month" value={month} key={month} />
            <button type="submit" class="btn btn-secondary compact">
              Show
            </button>
          </form>
          {next ? <a href={`/budgets?month=${next}`}>{monthName(next)} →</a> : null}
        </nav>
      </header>
      <Settled state={status} />
      {data === undefined && !failed ? <Loading what="your budgets" /> : null}
      {failed ? <Failure message={failed} /> : null}
      {data === null && !failed ? (
        <Empty title="No ledger yet" hint={<>Your ledger starts with your first question on the <a href="/chat">chat</a> page.</>} />
      ) : null}
      {data ? <BudgetTable view={data} open={open} onOpen={(id) => setOpen((o) => (o === id ? null : id))} settle={status.settle} /> : null}
    </Page>
  );
}

/** The register's rows of `category` in the month. */
function rowsOf(view: BudgetMonth, category: string): string {
  const q = new URLSearchParams({ category, from: view.from, to: view.to });
  return `/transactions?${q.toString()}`;
}

function BudgetTable({
  view,
  open,
  onOpen,
  settle,
}: {
  view: BudgetMonth;
  open: string | null;
  onOpen: (id: string) => void;
  settle: Settle;
}) {
  if (view.lines.length === 0) {
    return <Empty title="No spending categories" hint={<>Add one on the <a href="/categories">categories</a> page.</>} />;
  }
  const budgeted = view.lines.filter((l) => l.budget !== null);
  // Totals in the currency of the first budget: a sum never mixes two.
  const currency = budgeted[0]?.budget?.currency ?? null;
  const inIt = budgeted.filter((l) => l.budget?.currency === currency);
  const totalBudget = inIt.reduce((sum, l) => sum + (l.budget?.amount_minor ?? 0), 0);
  const totalSpent = inIt.reduce((sum, l) => sum + standing(l).spent, 0);
  return (
    <Section
      title={`${monthName(view.month)}: ${count(budgeted.length)} of ${count(view.lines.length)} categories budgeted`}
      id="budgets"
      note={
        currency !== null
          ? `Budgeted categories together: ${formatMinor(totalSpent, currency)} spent of ${formatMinor(totalBudget, currency)}.`
          : 'No budget this month yet: set one on any category.'
      }
    >
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Budgets">
        <table class="ledger-table register-table">
          <caption class="visually-hidden">Budgets of {monthName(view.month)}</caption>
          <thead>
            <tr>
              <th scope="col">Category</th>
              <th scope="col" class="n">
                Budget
              </th>
              <th scope="col" class="n">
                Spent
              </th>
              <th scope="col" class="n register-wide">
                Left
              </th>
            </tr>
          </thead>
          <tbody>
            {view.lines.flatMap((line) => {
              const s = standing(line);
              const spentCurrency = line.budget?.currency ?? line.spent[0]?.currency ?? view.currency;
              const row = (
                <tr key={line.category_id} data-id={line.category_id} class={open === line.category_id ? 'is-open' : undefined}>
                  <td>
                    {line.category}
                    <span class="tiny faint block">{line.transactions === 1 ? '1 row' : `${count(line.transactions)} rows`}</span>
                  </td>
                  <td class="num n">
                    <button
                      type="button"
                      class="btn btn-secondary compact budget-button"
                      aria-expanded={open === line.category_id}
                      aria-label={
                        line.budget
                          ? `${formatMinor(line.budget.amount_minor, line.budget.currency)}: change the budget of ${line.category}`
                          : `Set a budget for ${line.category}`
                      }
                      onClick={() => onOpen(line.category_id)}
                    >
                      {line.budget ? formatMinor(line.budget.amount_minor, line.budget.currency) : 'Set'}
                    </button>
                  </td>
                  <td class="num n">
                    {line.transactions > 0 && spentCurrency ? (
                      <a href={rowsOf(view, line.category)} aria-label={`${line.category}: the rows of ${formatMinor(s.spent, spentCurrency)} spent`}>
                        {formatMinor(s.spent, spentCurrency)}
                      </a>
                    ) : spentCurrency ? (
                      formatMinor(0, spentCurrency)
                    ) : (
                      <span class="faint">—</span>
                    )}
                    {s.left !== null ? (
                      <span class="tiny block register-inline">
                        <LeftOf left={s.left} currency={line.budget?.currency ?? view.currency} />
                      </span>
                    ) : null}
                    {s.others.map((o) => (
                      <span class="tiny faint block" key={o.currency}>
                        and {formatMinor(o.amount_minor, o.currency)}
                      </span>
                    ))}
                  </td>
                  <td class="num n register-wide">
                    <LeftOf left={s.left} currency={line.budget?.currency ?? view.currency} />
                  </td>
                </tr>
              );
              if (open !== line.category_id) return [row];
              return [
                row,
                <tr key={`${line.category_id}-editor`} class="editor-row">
                  <td colSpan={4}>
                    <BudgetEditor view={view} line={line} settle={settle} />
                  </td>
                </tr>,
              ];
            })}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

/** What is left of a budget, or by how much it is over. */
function LeftOf({ left, currency }: { left: number | null; currency: string | null | undefined }) {
  if (left === null || currency == null) return <span class="faint">—</span>;
  if (left < 0) return <span class="tone-danger">over by {formatMinor(-left, currency)}</span>;
  return <>{formatMinor(left, currency)} left</>;
}

/** The amount as a person types it: "5000", "5,000.50". */
function majorText(minor: number, currency: string): string {
  const places = decimals(currency);
  if (places === 0) return String(minor);
  const whole = Math.trunc(minor / 10 ** places);
  const fraction = minor % 10 ** places;
  return fraction === 0 ? String(whole) : `${whole}.${String(fraction).padStart(places, '0')}`;
}

function BudgetEditor({ view, line, settle }: { view: BudgetMonth; line: BudgetLine; settle: Settle }) {
  const currency = line.budget?.currency ?? view.currency;
  if (currency == null) {
    return (
      <p class="small row-editor">
        Your books have no home currency yet, so a budget would not know its currency: choose one on the{' '}
        <a href="/dashboard">dashboard</a> (an import sets it too).
      </p>
    );
  }
  return <BudgetForm view={view} line={line} settle={settle} currency={currency} />;
}

function BudgetForm({ view, line, settle, currency }: { view: BudgetMonth; line: BudgetLine; settle: Settle; currency: string }) {
  const [amount, setAmount] = useState(line.budget ? majorText(line.budget.amount_minor, currency) : '');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const id = `budget-${line.category_id}`;

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setProblem(null);
    try {
      await work();
    } catch (e) {
      setProblem(problemOf(e, 'That budget is gone: it was removed since. The page is read again.'));
      setBusy(false);
    }
  }

  function save(e: Event) {
    e.preventDefault();
    const minor = parseMajor(amount, currency);
    if (minor === null) {
      setProblem(`“${amount}” does not read as an amount of ${currency}.`);
      return;
    }
    void act(async () => {
      const set = await api.setBudget(line.category_id, view.month, minor, currency);
      settle(`${line.category}: ${formatMinor(set.amount_minor, set.currency)} for ${monthName(view.month)}.`, null);
    });
  }

  return (
    <form class="row-editor" aria-label={`The budget of ${line.category}`} onSubmit={save}>
      <div class="editor-fields">
        <div class="field">
          <label class="label" for={`${id}-amount`}>
            {line.category} in {monthName(view.month)} ({currency})
          </label>
          <input id={`${id}-amount`} ref={field} inputMode="decimal" value={amount} size={12} disabled={busy} onInput={(e) => setAmount((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="btn-row">
          <button type="submit" class="btn btn-primary compact" disabled={busy || amount.trim() === ''}>
            Save the budget
          </button>
          {line.budget ? (
            <button
              type="button"
              class="btn btn-secondary compact"
              disabled={busy}
              onClick={() =>
                void act(async () => {
                  if (!line.budget) return;
                  await api.deleteBudget(line.budget.id);
                  settle(`${line.category} has no budget for ${monthName(view.month)} now.`, null);
                })
              }
            >
              Remove the budget
            </button>
          ) : null}
        </div>
      </div>
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">refused</Mark> {problem}
        </p>
      ) : null}
    </form>
  );
}
