// /admin: the operator's room — the eight panels of GET /api/admin/overview and the actions
// (pause live chat, block a visitor, start an evaluation). For anyone but an operator the API
// answers 404, and so does this page. Actions are sent, then the panels are read again: nothing
// changes on the page before the server says it did.

import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { AdminAction, AdminActionDone, AdminOverview } from '../api/types';
import { ChartCanvas } from '../components/chart';
import { Page } from '../components/page';
import { RunsTable, THead } from '../components/table';
import { Badge, Card, EmptyState, Stat, type BadgeTone } from '../components/terminal';
import { BubbleController, Chart } from 'chart.js';
import { INK, capLine, reducedMotion, type ChartConfiguration } from '../lib/charts';
import { count, dateTime, percent, seconds, shortDate } from '../lib/format';
import { formatMicroUsd, formatUsd } from '../lib/money';
import { refusalSentence } from '../lib/refusals';
import { useSession } from '../session';
import { NotFound } from './not-found';

Chart.register(BubbleController);

export function AdminPage() {
  const { session } = useSession();
  const [overview, setOverview] = useState<AdminOverview | null | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  const [working, setWorking] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setOverview(await api.adminOverview());
      setFailed(null);
    } catch (e) {
      setFailed(e instanceof Error ? e.message : String(e));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load, session?.visitor?.id]);

  // While an evaluation runs — or was just started and has not taken its lock yet — the panels
  // are read again every few seconds, until a new report is there and nothing runs.
  const running = overview?.evaluation?.running ?? false;
  const latestAt = overview?.evaluation?.latest?.finished_at ?? null;
  const [awaiting, setAwaiting] = useState<{ since: string | null; until: number } | null>(null);
  useEffect(() => {
    if (awaiting && !running && latestAt !== awaiting.since) setAwaiting(null);
  }, [awaiting, running, latestAt]);
  useEffect(() => {
    if (!running && !awaiting) return;
    const timer = window.setInterval(() => {
      if (awaiting && Date.now() > awaiting.until) setAwaiting(null);
      void load();
    }, 3000);
    return () => window.clearInterval(timer);
  }, [running, awaiting, load]);

  /** Sends an action, then reads the panels again; whether the server took it. */
  async function act(key: string, action: AdminAction, done?: (answer: AdminActionDone) => string): Promise<boolean> {
    setWorking(key);
    setSaid(null);
    try {
      const answer = await api.adminAction(action);
      if (done) setSaid(done(answer));
      return true;
    } catch (e) {
      setSaid(refusalSentence(e).text);
      return false;
    } finally {
      await load();
      setWorking(null);
    }
  }

  if (overview === null) return <NotFound />;
  const email = session?.visitor?.email;
  return (
    <Page genre="terminal" title="Operator">
      <div class="admin-head">
        <div>
          <h1 class="term-title">Operator</h1>
          <p class="term-sub">Every visitor, unscoped. Trace payloads hold ledger contents (see the privacy page).</p>
        </div>
        {email ? <span class="mono t-muted small-t">{email}</span> : null}
      </div>
      {failed ? <p role="alert">failed: {failed}</p> : null}
      {overview === undefined && !failed ? <p class="t-muted">reading…</p> : null}
      {said ? (
        <p class="t-said" role="status">
          {said}
        </p>
      ) : null}
      {overview ? (
        <>
          <BudgetPanel o={overview} />
          <div class="switch-bar" role="group" aria-label="Live chat">
            <span>live chat</span>
            <Badge tone={overview.budget.paused ? 'warn' : 'ok'}>{overview.budget.paused ? 'paused' : 'running'}</Badge>
            <button
              type="button"
              class="t-button"
              disabled={working !== null}
              onClick={() => void act('pause', { action: 'pause_live_chat', paused: !overview.budget.paused })}
            >
              {working === 'pause' ? 'working…' : overview.budget.paused ? 'unpause' : 'pause'}
            </button>
          </div>
          <EvaluationPanel
            o={overview}
            working={working}
            awaiting={awaiting !== null}
            onStart={async () => {
              const since = latestAt;
              const started = await act('eval', { action: 'run_eval' }, (a) => ('started' in a ? a.started : 'An evaluation run started.'));
              if (started) setAwaiting({ since, until: Date.now() + 20 * 60_000 });
            }}
          />
          <div class="admin-grid">
            <TrafficPanel o={overview} />
            <HealthPanel o={overview} />
            <SafetyPanel o={overview} />
            <ToolsPanel o={overview} />
          </div>
          <MapPanel o={overview} />
          <RecentRuns o={overview} />
          <UsersPanel o={overview} working={working} onBlock={(id, blocked) => void act(`block-${id}`, { action: 'block_owner', owner_id: id, blocked })} />
          <p class="term-sub">Panels as of {dateTime(overview.generated_at)}; days are UTC.</p>
        </>
      ) : null}
    </Page>
  );
}

function BudgetPanel({ o }: { o: AdminOverview }) {
  const b = o.budget;
  const tone: BadgeTone = b.state === 'ok' ? 'ok' : b.state === 'tripped' ? 'danger' : 'warn';
  const config = useMemo<ChartConfiguration<'line'>>(
    () => ({
      type: 'line',
      data: {
        labels: b.last_30_days.map((d) => d.day),
        datasets: [{ data: b.last_30_days.map((d) => d.micro_usd / 1_000_000), borderColor: INK.accent, borderWidth: 1.5, pointRadius: 0, tension: 0 }],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: reducedMotion() ? false : { duration: 300 },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => formatUsd(Number(ctx.raw)) } } },
        scales: {
          x: { display: false },
          y: { display: false, beginAtZero: true, suggestedMax: (Math.max(b.daily_cap_micro_usd, ...b.last_30_days.map((d) => d.micro_usd)) / 1_000_000) * 1.05 },
        },
      },
      plugins: [capLine(b.daily_cap_micro_usd / 1_000_000, INK.warn)],
    }),
    [o.budget],
  );
  return (
    <Card title="Budget" aside={<Badge tone={tone}>{b.state}</Badge>}>
      <div class="stats three">
        <Stat
          label="today"
          value={formatMicroUsd(b.today_micro_usd)}
          hint={`cap ${formatMicroUsd(b.daily_cap_micro_usd)}; counted ${formatMicroUsd(b.budget_settled_micro_usd + b.in_flight_micro_usd)}, ${formatMicroUsd(b.in_flight_micro_usd)} held by calls in flight`}
        />
        <Stat label="month to date" value={formatMicroUsd(b.month_to_date_micro_usd)} />
        <Stat label="projected month" value={formatMicroUsd(b.projected_month_micro_usd)} hint={`ceiling ${formatMicroUsd(b.monthly_ceiling_micro_usd)}`} />
      </div>
      <div class="chart-box">
        <ChartCanvas config={config as ChartConfiguration} label="30-day spend against the daily cap" height={48} />
        <details class="t-details">
          <summary>30 days as a table</summary>
          <table class="t-table">
            <caption class="visually-hidden">Model spend per day, last 30 days</caption>
            <THead columns={['day', { label: 'spend', numeric: true }]} />
            <tbody>
              {b.last_30_days.map((d) => (
                <tr key={d.day}>
                  <td>{d.day}</td>
                  <td class="num n">{formatMicroUsd(d.micro_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </div>
    </Card>
  );
}

function EvaluationPanel({ o, working, awaiting, onStart }: { o: AdminOverview; working: string | null; awaiting: boolean; onStart: () => void }) {
  const e = o.evaluation;
  const latest = e?.latest;
  const busy = Boolean(e?.running) || awaiting;
  return (
    <Card title="Evaluation" aside={<Badge tone={busy ? 'warn' : 'neutral'}>{busy ? 'running' : 'idle'}</Badge>}>
      <div class="eval-panel">
        <p class="small-t">
          {latest
            ? `Latest report: ${latest.passed}/${latest.task_count} passed on ${latest.model}, finished ${dateTime(latest.finished_at)}${latest.complete ? '' : ' (incomplete)'}.`
            : 'No evaluation report yet.'}{' '}
          {busy ? 'A run is going now; this panel reads again until it finishes.' : ''}
        </p>
        <button type="button" class="t-button" disabled={working !== null || busy} onClick={onStart}>
          {working === 'eval' ? 'starting…' : busy ? 'running…' : 'start an evaluation'}
        </button>
        {latest ? <a href="/evals">read the report</a> : null}
      </div>
    </Card>
  );
}

function TrafficPanel({ o }: { o: AdminOverview }) {
  const t = o.traffic;
  return (
    <Card title="Traffic">
      <div class="stats three">
        <Stat label="today" value={count(t.active_today)} hint="visitors" />
        <Stat label="7d" value={count(t.active_7_days)} />
        <Stat label="30d" value={count(t.active_30_days)} />
      </div>
      <div class="stats three">
        <Stat label="anonymous" value={count(t.anonymous)} />
        <Stat label="signed in" value={count(t.signed_in)} hint={`${percent(t.conversion_pct)} conversion`} />
        <Stat label="returning" value={count(t.returning)} />
      </div>
    </Card>
  );
}

function HealthPanel({ o }: { o: AdminOverview }) {
  const h = o.health;
  const by = h.by_status;
  return (
    <Card title="Health">
      <p class="badges-row">
        <Badge tone="ok">ok {by.ok ?? 0}</Badge> <Badge tone="danger">error {by.error ?? 0}</Badge>{' '}
        <Badge tone="warn">blocked {by.blocked ?? 0}</Badge> <Badge>aborted {by.aborted ?? 0}</Badge>
      </p>
      <div class="stats">
        <Stat label="p50 latency" value={seconds(h.latency_p50_ms)} />
        <Stat label="p95 latency" value={seconds(h.latency_p95_ms)} />
      </div>
      <div class="stats">
        <Stat label="tool errors" value={percent(h.tool_error_pct)} />
        <Stat label="iteration limit hits" value={count(h.iteration_limit_hits)} />
      </div>
    </Card>
  );
}

function SafetyPanel({ o }: { o: AdminOverview }) {
  const s = o.safety;
  return (
    <Card title="Safety">
      <div class="stats five">
        <Stat label="proposed" value={count(s.writes_proposed)} />
        <Stat label="allowed" value={count(s.writes_allowed)} />
        <Stat label="declined" value={count(s.writes_declined)} />
        <Stat label="awaiting" value={count(s.writes_awaiting)} />
        <Stat label="imports" value={count(s.imports)} />
      </div>
      {s.blocked_runs.length === 0 ? (
        <p class="panel-note">No blocked runs in the last 30 days.</p>
      ) : (
        <ul class="panel-list">
          {s.blocked_runs.map((r) => (
            <li key={r.id}>
              <a href={`/runs/${r.id}`}>{r.id.slice(0, 8)}</a> <span class="t-muted">{dateTime(r.started_at)}</span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function ToolsPanel({ o }: { o: AdminOverview }) {
  return (
    <Card title="Tools">
      {o.tools.length === 0 ? (
        <p class="panel-note">No tool calls yet.</p>
      ) : (
        <div class="t-scroll" tabIndex={0} role="region" aria-label="Tool calls">
          <table class="t-table">
            <caption class="visually-hidden">Tool calls in the last 30 days</caption>
            <THead columns={['tool', { label: 'calls', numeric: true }, { label: 'errors', numeric: true }, { label: 'median', numeric: true }]} />
            <tbody>
              {o.tools.map((t) => (
                <tr key={t.name ?? '(unnamed)'}>
                  <td>{t.name ?? '(unnamed)'}</td>
                  <td class="num n">{count(t.calls)}</td>
                  <td class={`num n ${t.error_pct > 0 ? 'tone-t-danger' : 't-zero'}`}>{percent(t.error_pct)}</td>
                  <td class="num n">{t.median_latency_ms === null ? 'n/a' : `${count(t.median_latency_ms)} ms`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

function MapPanel({ o }: { o: AdminOverview }) {
  const busiest = Math.max(1, ...o.geo.map((g) => g.runs));
  const config = useMemo<ChartConfiguration<'bubble'>>(
    () => ({
      type: 'bubble',
      data: {
        datasets: [
          {
            data: o.geo.map((g) => ({ x: g.lon, y: g.lat, r: 2 + 8 * Math.sqrt(g.runs / busiest) })),
            backgroundColor: 'rgba(0, 191, 192, 0.25)',
            borderColor: INK.accent,
            borderWidth: 0.75,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const g = o.geo[ctx.dataIndex];
                return g ? `${g.country ?? '??'}: ${g.runs} turn${g.runs === 1 ? '' : 's'}` : '';
              },
            },
          },
        },
        scales: {
          x: { min: -180, max: 180, ticks: { stepSize: 60, color: INK.termText }, grid: { color: INK.termRule } },
          y: { min: -90, max: 90, ticks: { stepSize: 30, color: INK.termText }, grid: { color: INK.termRule } },
        },
      },
    }),
    [o.geo],
  );
  return (
    <Card title="Map">
      {o.geo.length === 0 ? (
        <EmptyState title="No located visits yet." hint="Locations come from the edge (CloudFront's viewer headers), city-level at most." />
      ) : (
        <div class="chart-box">
          <ChartCanvas config={config as ChartConfiguration} label="Visitor map: turns by coarse location" height={260} />
          <details class="t-details">
            <summary>Places as a table</summary>
            <table class="t-table">
              <caption class="visually-hidden">Turns by coarse location</caption>
              <THead columns={['country', 'lat, lon', { label: 'turns', numeric: true }]} />
              <tbody>
                {o.geo.map((g, i) => (
                  <tr key={i}>
                    <td>{g.country ?? '??'}</td>
                    <td>
                      {g.lat}, {g.lon}
                    </td>
                    <td class="num n">{g.runs}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </div>
      )}
    </Card>
  );
}

function RecentRuns({ o }: { o: AdminOverview }) {
  return (
    <Card title="Recent runs">
      {o.recent_runs.length === 0 ? (
        <p class="panel-note">No runs yet.</p>
      ) : (
        <RunsTable runs={o.recent_runs} caption="The latest runs of every visitor" owners />
      )}
    </Card>
  );
}

function UsersPanel({ o, working, onBlock }: { o: AdminOverview; working: string | null; onBlock: (id: string, blocked: boolean) => void }) {
  return (
    <Card title="Users">
      <div class="t-scroll" tabIndex={0} role="region" aria-label="Users">
        <table class="t-table">
          <caption class="visually-hidden">Visitors, most recently seen first</caption>
          <THead columns={['visitor', 'joined', 'last seen', { label: 'today', numeric: true }, { label: 'cost to date', numeric: true }, 'status', { label: '', name: 'action' }]} />
          <tbody>
            {o.users.map((u) => (
              <tr key={u.id}>
                <td>
                  {u.email ?? <span class="mono">{u.id.slice(0, 8)}</span>} {u.anonymous ? <Badge>anon</Badge> : null}
                </td>
                <td>{shortDate(u.joined)}</td>
                <td>{dateTime(u.last_seen)}</td>
                <td class="num n">{count(u.messages_today)}</td>
                <td class="num n">{formatMicroUsd(u.cost_to_date_micro_usd)}</td>
                <td>{u.blocked ? <Badge tone="danger">blocked</Badge> : <Badge tone="ok">active</Badge>}</td>
                <td>
                  <button
                    type="button"
                    class={`t-button${u.blocked ? '' : ' danger'}`}
                    disabled={working !== null}
                    aria-label={`${u.blocked ? 'Unblock' : 'Block'} ${u.email ?? u.id}`}
                    onClick={() => onBlock(u.id, !u.blocked)}
                  >
                    {working === `block-${u.id}` ? '…' : u.blocked ? 'unblock' : 'block'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Card>
  );
}
