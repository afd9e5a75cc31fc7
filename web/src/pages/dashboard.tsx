// /dashboard: the ledger read rather than asked — spend by category and by month, budgets
// against actuals, recurring commitments, anomalies and the month's entries, from GET
// /api/dashboard. Every chart has the table it draws; amounts are formatted here from the minor
// units the API returns.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api } from '../api/client';
import type { Dashboard, SpendGroup, SpendReport } from '../api/types';
import { ChartCanvas } from '../components/chart';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { EntriesTable, THead } from '../components/table';
import { Empty, Failure, Figure, Loading, Section } from '../components/paper';
import { INK, horizontalBars, reducedMotion, targetLine, valueLabels, type ChartConfiguration } from '../lib/charts';
import { monthName, monthsBetween } from '../lib/format';
import { CURRENCIES, formatAmount, formatMinor } from '../lib/money';
import { transitQuestion } from '../lib/transfers';
import { refusalSentence } from '../lib/refusals';
import { useSession } from '../session';

export function DashboardPage() {
  const { query } = useLocation();
  const month = typeof query.month === 'string' && /^\d{4}-\d{2}$/.test(query.month) ? query.month : null;
  const { session } = useSession();
  const [data, setData] = useState<Dashboard | null | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setData(undefined);
    setFailed(null);
    api
      .dashboard(month)
      .then((d) => live && setData(d))
      .catch((e) => {
        if (!live) return;
        if (e instanceof ApiError && e.status === 400) setFailed(`There is no month ${month ?? ''} to show: months are written YYYY-MM, from 01 to 12.`);
        else setFailed(refusalSentence(e).text);
      });
    return () => {
      live = false;
    };
  }, [month, session?.visitor?.id]);

  if (failed) {
    return (
      <Page genre="paper" title="Dashboard">
        <h1 class="headline">Dashboard</h1>
        <Failure message={failed} />
        <p class="small">
          <a href="/dashboard">Show the latest month</a>
        </p>
      </Page>
    );
  }
  if (data === null) return <SignedOut />;
  return (
    <Page genre="paper" title="Dashboard">
      {data === undefined ? (
        <>
          <h1 class="visually-hidden">Dashboard</h1>
          <Loading what="your ledger" />
        </>
      ) : data.empty ? (
        <EmptyLedger />
      ) : (
        <Filled data={data} />
      )}
    </Page>
  );
}

function SignedOut() {
  return (
    <Page genre="paper" title="Dashboard">
      <div class="signed-out">
        <h1 class="signed-out-title">Your ledger, at a glance.</h1>
        <p class="muted" style={{ marginTop: '12px' }}>
          A ledger is made for you the first time you ask the agent something: a copy of a synthetic household's six months,
          which you can then change and add statements to.
        </p>
        <a class="serif-link" href="/chat">
          Ask about your ledger →
        </a>
      </div>
    </Page>
  );
}

function EmptyLedger() {
  return (
    <>
      <h1 class="headline">Dashboard</h1>
      <Empty title="Your ledger has no transactions." hint="Import a statement on the chat page to fill it." />
    </>
  );
}

/** The currency a report's chart and figures are drawn in: its total's, else the one spent most
 * in, else the home currency; none when nothing was spent and the books have no home currency
 * (the page then says so instead of showing a currency nobody chose). */
function mainCurrency(report: SpendReport | undefined, home: string | null | undefined): string | null {
  const totals = report?.totals_by_currency ?? [];
  return report?.total?.currency ?? [...totals].sort((a, b) => b.amount_minor - a.amount_minor)[0]?.currency ?? home ?? null;
}

function Filled({ data }: { data: Dashboard }) {
  const month = data.month ?? '';
  const months = data.months ?? [];
  const at = months.indexOf(month);
  const previous = at > 0 ? months[at - 1] : undefined;
  const next = at >= 0 && at < months.length - 1 ? months[at + 1] : undefined;
  // Amounts of different currencies are never added or drawn on one scale: the chart and the
  // figures are in the month's main currency, and spending in any other is listed beside them.
  const report = data.spend_by_category;
  const totals = report?.totals_by_currency ?? [];
  const currency = mainCurrency(report, data.balances?.home_currency);
  const zero = currency ? formatMinor(0, currency) : 'nothing';
  const spending = (report?.groups ?? []).filter((g) => g.amount_minor > 0);
  const categories = spending.filter((g) => g.currency === currency);
  const elsewhere = spending.filter((g) => g.currency !== currency);
  const spent = totals.find((t) => t.currency === currency) ?? report?.total ?? null;
  const otherTotals = totals.filter((t) => t.currency !== currency && t.amount_minor !== 0);
  const largest = categories[0];
  // What the recurring charges cost a month, as the ledger's own detect_recurring counts it (money
  // out only: salary and interest recur too and are left out).
  const charges = (data.recurring?.merchants ?? []).filter((m) => m.amount_minor < 0);
  const commitment = data.recurring?.monthly_commitment.find((a) => a.currency === currency) ?? data.recurring?.monthly_commitment[0];
  const flagged = data.anomalies?.count ?? 0;
  return (
    <>
      <header class="page-head ruled dash-head">
        <div>
          <h1 class="dash-month">{monthName(month)}</h1>
          <p class="small muted">
            Your own ledger: the synthetic household you started with, January to June 2025, and whatever you changed or
            imported since.
          </p>
        </div>
        <nav aria-label="Month" class="month-nav small">
          {previous ? <a href={`/dashboard?month=${previous}`}>← {monthName(previous, false)}</a> : <span class="faint">← earlier</span>}
          {next ? <a href={`/dashboard?month=${next}`}>{monthName(next, false)} →</a> : <span class="faint">later →</span>}
        </nav>
      </header>

      <div class="figures four">
        <Figure
          value={spent ? formatAmount(spent) : zero}
          label="Spent"
          note={otherTotals.length > 0 ? `and ${otherTotals.map(formatAmount).join(', ')}` : undefined}
        />
        <Figure value={largest ? formatAmount(largest) : zero} label="Largest category" note={largest?.group ?? 'none'} />
        <Figure
          value={commitment ? formatAmount(commitment) : zero}
          label="Monthly commitments"
          note={`${charges.length} recurring charge${charges.length === 1 ? '' : 's'}`}
        />
        <Figure value={String(flagged)} label="Flagged" tone={flagged > 0 ? 'warn' : undefined} note={flagged > 0 ? 'needs a look' : 'nothing unusual'} />
      </div>

      <Section title="Where it went" note="Money out by category, refunds taken off. Money in — income, and money in with no category — is never netted into it." id="where" first>
        {categories.length === 0 ? <Empty title="No spending recorded this month." /> : <CategoryChart groups={categories} currency={currency ?? ''} month={month} />}
        {elsewhere.length > 0 ? <SpendTable caption="In other currencies" first="category" groups={elsewhere} open /> : null}
      </Section>

      <Section title="Accounts" note="What each account holds today, money owed on a card or loan negative; net worth is assets less liabilities, per currency. Money moved between your own accounts is never spending." id="accounts">
        <AccountsPanel data={data} />
      </Section>

      <Section title="By month" note="Spending of the six months up to this one, by month." id="by-month">
        <MonthChart data={data} />
      </Section>

      <Section title="Against budget" note="The line marks the budget; a bar past it is an overrun. The share used is printed beside each bar, the amounts in the table under it." id="budgets">
        <BudgetChart data={data} />
      </Section>

      <Section title="Recurring" note="Merchants seen at a steady rhythm, with reference numbers stripped; amounts as the account sees them, money out negative. Salary and interest recur too, marked in." id="recurring">
        {(data.recurring?.merchants ?? []).length === 0 ? (
          <Empty title="Nothing recurring found yet." hint="A merchant needs three occurrences to count." />
        ) : (
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Recurring merchants">
            <table class="ledger-table">
              <caption class="visually-hidden">Recurring merchants</caption>
              <THead columns={['merchant', 'cadence', { label: 'seen', numeric: true }, { label: 'average', numeric: true }]} />
              <tbody>
                {(data.recurring?.merchants ?? []).map((m) => (
                  <tr key={m.merchant}>
                    <td>{m.merchant}</td>
                    <td class="muted">{m.cadence}</td>
                    <td class="num n">{m.occurrences}×</td>
                    <td class="num n">
                      {m.amount_minor > 0 ? <span class="label faint">in </span> : null}
                      {formatMinor(m.amount_minor, m.currency)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>

      <Section title="Worth a look" note="Three kinds, reported apart: a charge far above its category's usual, the same charge twice in a day, and money that came back." id="anomalies">
        {(data.anomalies?.anomalies ?? []).length === 0 ? (
          <Empty title="Nothing unusual this month." hint="April 2025 holds the planted ones." />
        ) : (
          <ol class="rows">
            {(data.anomalies?.anomalies ?? []).map((a) => (
              <li key={`${a.transaction_id}-${a.kind}`} class="row anomaly-row">
                <span class="num small anomaly-date">{a.date.slice(5)}</span>
                <span class="anomaly-desc">
                  {a.description}
                  <span class="tiny muted anomaly-detail">{a.detail}</span>
                </span>
                <span class="anomaly-kind">
                  <Mark tone={a.kind === 'refund' ? 'ok' : 'warn'}>{a.kind}</Mark>
                </span>
                <span class="num anomaly-amount">{formatMinor(a.amount_minor, a.currency)}</span>
              </li>
            ))}
          </ol>
        )}
      </Section>

      <Section title="Entries" note={`The month's transactions, newest first, money out negative${(data.transactions?.length ?? 0) >= 200 ? ' (the first 200)' : ''}.`} id="entries">
        {(data.transactions ?? []).length === 0 ? (
          <Empty title="No transactions this month." />
        ) : (
          <EntriesTable caption={`Transactions of ${monthName(month)}`} rows={(data.transactions ?? []).map((t) => ({ ...t, key: t.id }))} />
        )}
      </Section>

      <p class="tiny faint dash-foot">Every figure comes from the same ledger functions the agent's tools call, so the page and the agent never disagree.</p>
    </>
  );
}

/** Each account's balance, net worth per currency and at each month's end, and what waits in
 * transit for the other side of a transfer. */
function AccountsPanel({ data }: { data: Dashboard }) {
  const balances = data.balances;
  const accounts = (balances?.accounts ?? []).filter((a) => a.postings > 0);
  if (!balances || accounts.length === 0) return <Empty title="No accounts hold money yet." />;
  const currencies = [...new Set(balances.history.map((h) => h.currency))];
  const months = [...new Set(balances.history.map((h) => h.month))];
  return (
    <>
      <div class="figures">
        {balances.net_worth.map((w) => (
          <Figure key={w.currency} value={formatAmount(w)} label="Net worth" note={w.currency} />
        ))}
      </div>
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Accounts">
        <table class="ledger-table accounts-table">
          <caption class="visually-hidden">Accounts and their balances</caption>
          <THead columns={['account', 'kind', { label: 'postings', numeric: true }, { label: 'balance', numeric: true }]} />
          <tbody>
            {accounts.map((a) => (
              <tr key={a.name}>
                <th scope="row" class="row-head">
                  {a.name}
                </th>
                <td class="muted">{a.kind}</td>
                <td class="num n">{a.postings}</td>
                <td class="num n">{formatAmount(a)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {months.length > 0 ? (
        <details class="chart-table">
          <summary class="small">Net worth at each month's end</summary>
          <table class="ledger-table net-worth-table">
            <caption class="visually-hidden">Net worth at each month's end</caption>
            <THead columns={['month', ...currencies.map((c) => ({ label: c, numeric: true }))]} />
            <tbody>
              {months.map((m) => (
                <tr key={m}>
                  <th scope="row" class="row-head">
                    {monthName(m)}
                  </th>
                  {currencies.map((c) => {
                    const point = balances.history.find((h) => h.month === m && h.currency === c);
                    return (
                      <td key={c} class="num n">
                        {point ? formatAmount(point) : '—'}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
      {balances.in_transit.length > 0 ? (
        <div class="in-transit">
          <h3 class="label">In transit</h3>
          <p class="tiny faint">
            Rows that look like a transfer whose other side is not imported yet: neither spending nor income. Import the other
            account's statement and they pair; or say what one was — spending after all, or money to an account of yours — and
            the agent records it once you allow it.
          </p>
          <ul>
            {balances.in_transit.map((t) => (
              <li key={t.transaction_id} class="small">
                {t.date} {t.account}: {t.description} <span class="num">{formatAmount(t)}</span>{' '}
                <a class="in-transit-ask" href={`/chat?ask=${encodeURIComponent(transitQuestion(t))}`}>
                  Say what it was
                </a>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <HomeCurrency current={balances.home_currency ?? null} />
    </>
  );
}

/** The currency new accounts and budgets take, and a way to change it. Money already in an
 * account keeps its currency. */
function HomeCurrency({ current }: { current: string | null }) {
  const [chosen, setChosen] = useState(current ?? '');
  const [said, setSaid] = useState<string | null>(null);
  const choices = current && !CURRENCIES.includes(current) ? [current, ...CURRENCIES] : CURRENCIES;
  return (
    <form
      class="home-currency metaline"
      onSubmit={(e) => {
        e.preventDefault();
        api
          .setHomeCurrency(chosen)
          .then((r) => setSaid(`Your home currency is now ${r.home_currency}; accounts keep the money they hold.`))
          .catch((err: unknown) => setSaid(refusalSentence(err).text));
      }}
    >
      <label class="small" for="home-currency">
        Home currency
      </label>{' '}
      <select id="home-currency" class="compact" value={chosen} onChange={(e) => setChosen((e.currentTarget as HTMLSelectElement).value)}>
        {current ? null : <option value="">not set yet</option>}
        {choices.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>{' '}
      <button type="submit" class="btn btn-secondary compact" disabled={!chosen || chosen === current}>
        Change
      </button>{' '}
      <span class="tiny faint" role="status">
        {said ?? 'New accounts and budgets take it.'}
      </span>
    </form>
  );
}

function CategoryChart({ groups, currency, month }: { groups: SpendGroup[]; currency: string; month: string }) {
  const config = useMemo(
    () =>
      horizontalBars({
        labels: groups.map((g) => g.group),
        values: groups.map((g) => g.amount_minor),
        thickness: 14,
        tooltip: (v) => formatMinor(v, currency),
        label: (v, i) => `${formatMinor(v, currency)}  ${groups[i]?.transactions ?? 0}×`,
      }),
    [groups],
  );
  return (
    <>
      <ChartCanvas config={config as ChartConfiguration} label={`Spending by category in ${monthName(month)}; the table below lists every amount.`} height={groups.length * 28 + 24} />
      <SpendTable caption={`Spending by category, ${monthName(month)}`} first="category" groups={groups} />
    </>
  );
}

function MonthChart({ data }: { data: Dashboard }) {
  const currency = mainCurrency(data.spend_by_month, data.balances?.home_currency);
  return currency ? <MonthBars data={data} currency={currency} /> : <Empty title="No spending recorded in these months." />;
}

function MonthBars({ data, currency }: { data: Dashboard; currency: string }) {
  const report = data.spend_by_month;
  const months = report ? monthsBetween(report.period.from, report.period.to) : [];
  const byMonth = new Map((report?.groups ?? []).filter((g) => g.currency === currency).map((g) => [g.group, g]));
  const elsewhere = (report?.groups ?? []).filter((g) => g.currency !== currency && g.amount_minor !== 0);
  const rows: SpendLine[] = months.map(
    (m) => byMonth.get(m) ?? { group: m, transactions: 0, amount_minor: 0, currency },
  );
  const config = useMemo<ChartConfiguration<'bar'>>(
    () => ({
      type: 'bar',
      data: {
        labels: rows.map((r) => monthName(r.group)),
        datasets: [
          {
            data: rows.map((r) => r.amount_minor),
            backgroundColor: rows.map((r) => (r.group === data.month ? INK.barHover : INK.bar)),
            borderRadius: { topLeft: 3, topRight: 3 },
            borderSkipped: false,
            maxBarThickness: 40,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: reducedMotion() ? false : { duration: 500 },
        layout: { padding: { top: 20 } },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => formatMinor(Number(ctx.raw), currency) } } },
        scales: {
          x: { grid: { display: false }, border: { color: INK.ruleStrong }, ticks: { color: INK.text } },
          y: { display: false, beginAtZero: true },
        },
      },
      plugins: [valueLabels((v) => formatMinor(v, currency))],
    }),
    [report, data.month],
  );
  if (rows.length === 0) return <Empty title="No months to compare." />;
  return (
    <>
      <ChartCanvas config={config as ChartConfiguration} label="Spending by month; the table below lists every amount." height={180} />
      <SpendTable caption="Spending by month" first="month" groups={rows.map((r) => ({ ...r, group: monthName(r.group) }))} />
      {elsewhere.length > 0 ? (
        <SpendTable caption="In other currencies" first="month" groups={elsewhere.map((r) => ({ ...r, group: monthName(r.group) }))} open />
      ) : null}
    </>
  );
}

/** What a spending table shows of a group. */
type SpendLine = Pick<SpendGroup, 'group' | 'transactions' | 'amount_minor' | 'currency'>;

function SpendTable({ caption, first, groups, open }: { caption: string; first: string; groups: SpendLine[]; open?: boolean }) {
  return (
    <details class="chart-table" open={open}>
      <summary class="small">{open ? caption : 'As a table'}</summary>
      <table class="ledger-table">
        <caption class="visually-hidden">{caption}</caption>
        <THead columns={[first, { label: 'transactions', numeric: true }, { label: 'amount', numeric: true }]} />
        <tbody>
          {groups.map((g) => (
            <tr key={`${g.group}-${g.currency}`}>
              <th scope="row" class="row-head">
                {g.group}
              </th>
              <td class="num n">{g.transactions}</td>
              <td class="num n">{formatAmount(g)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

function BudgetChart({ data }: { data: Dashboard }) {
  const rows = (data.budgets?.categories ?? []).filter((c) => c.budget !== null);
  const config = useMemo(
    () =>
      horizontalBars({
        labels: rows.map((r) => r.category),
        values: rows.map((r) => Math.min(r.percent_used ?? 0, 125)),
        colors: rows.map((r) => (r.over_budget ? INK.danger : INK.bar)),
        thickness: 16,
        max: 125,
        tooltip: (v) => `${v.toFixed(0)}% of the budget`,
        label: (_, i) => `${rows[i]?.percent_used?.toFixed(0) ?? '0'}%${rows[i]?.over_budget ? ' over' : ''}`,
        plugins: [targetLine(100, INK.ruleStrong)],
      }),
    [data.budgets],
  );
  if (rows.length === 0) {
    return <Empty title="No budgets set for this month." hint="Ask the agent to set one: it shows you what will change before it writes." />;
  }
  return (
    <>
      <ChartCanvas config={config as ChartConfiguration} label="Each budget's share used; the table below gives actual against budget." height={rows.length * 30 + 24} />
      <table class="ledger-table budget-table">
        <caption class="visually-hidden">Budgets of {monthName(data.month ?? '')}: actual against budget</caption>
        <THead columns={['category', { label: 'actual', numeric: true }, { label: 'budget', numeric: true }, { label: 'used', numeric: true }]} />
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.category}-${r.actual.currency}`}>
              <th scope="row" class="row-head">
                {r.category}
              </th>
              <td class="num n">{formatAmount(r.actual)}</td>
              <td class="num n faint">{r.budget ? formatAmount(r.budget) : ''}</td>
              <td class="num n">
                {r.percent_used == null ? 'not set' : `${r.percent_used.toFixed(0)}%`}
                {r.over_budget ? (
                  <>
                    {' '}
                    <Mark tone="danger">over</Mark>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
