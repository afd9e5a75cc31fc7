// /evals: the latest evaluation report, by class and task, with the model that produced it. A
// report of the scripted model is labelled "scripted" everywhere on the page: it shows that the
// harness works, never how good a model is.

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { EvalReport } from '../api/types';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { THead } from '../components/table';
import { Empty, Failure, Figure, Loading, MetaLine, Section } from '../components/paper';
import { percent, seconds, shortDate } from '../lib/format';
import { formatMicroUsd } from '../lib/money';
import { reportIsScripted } from './landing';

export function Evals() {
  const [report, setReport] = useState<EvalReport | null | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    api
      .latestEvaluation()
      .then(setReport)
      .catch((e) => setFailed(e instanceof Error ? e.message : String(e)));
  }, []);
  return (
    <Page genre="paper" title="Evals">
      {report === undefined ? <h1 class="visually-hidden">Evals</h1> : null}
      {failed ? <Failure message={failed} /> : null}
      {report === undefined && !failed ? <Loading what="the latest report" /> : null}
      {report === null ? (
        <>
          <h1 class="headline">Evals</h1>
          <div style={{ marginTop: '32px' }}>
            <Empty
              title="No evaluation has run on this site yet."
              hint={
                <>
                  An evaluation puts the agent through a fixed set of household-finance questions whose answers are known
                  — spending, subscriptions, anomalies, budgets, and statements that try to trick it into writing — and
                  grades every answer, its cost and its speed. This page shows the latest one once it has run: nightly, or
                  when the site's operator starts one.
                </>
              }
            />
          </div>
        </>
      ) : null}
      {report ? <Report report={report} /> : null}
    </Page>
  );
}

function Report({ report: r }: { report: EvalReport }) {
  const scripted = reportIsScripted(r);
  const classes = Object.entries(r.by_class)
    .flatMap(([name, c]) => (c ? [[name, c] as const] : []))
    .sort(([a], [b]) => a.localeCompare(b));
  const failed = r.results.filter((t) => !t.passed);
  return (
    <>
      <header class="spread page-head ruled">
        <div>
          <h1 class="headline">
            Evals{' '}
            {scripted ? (
              <span class="headline-mark">
                <Mark tone="warn">scripted</Mark>
              </span>
            ) : null}
          </h1>
          <p class="lead muted">
            {r.task_count} golden tasks across {classes.length} classes, run end to end against a fresh copy of the demo ledger.
            Deterministic checks gate every verdict; the judge only refines.
          </p>
          {scripted ? (
            <p class="small" style={{ marginTop: '12px' }}>
              <Mark tone="warn">scripted</Mark> This run used the scripted demo model ({r.model}), which plays fixed rules
              instead of a language model. Its pass rate says the harness and tools work; it is not a model's score.
            </p>
          ) : null}
          {!r.complete ? (
            <p class="small" style={{ marginTop: '12px' }}>
              <Mark tone="warn">incomplete</Mark> {r.not_run.length} task{r.not_run.length === 1 ? '' : 's'} did not run before
              the run's time ran out.
            </p>
          ) : null}
        </div>
        <aside class="rail" aria-labelledby="this-run">
          <h2 class="rail-head" id="this-run">
            This run
          </h2>
          <dl>
            <MetaLine label="finished">{shortDate(r.finished_at)}</MetaLine>
            <MetaLine label="agent">{scripted ? `scripted: ${r.model}` : `${r.provider ? `${r.provider} ` : ''}${r.model}`}</MetaLine>
            <MetaLine label="judge">{r.judge_model}</MetaLine>
            <MetaLine label="run cost">{formatMicroUsd(r.total_cost_micro_usd)}</MetaLine>
            <MetaLine label="ungrounded">
              {percent(r.ungrounded_answer_rate)} of answers ({r.ungrounded_answers} of {r.answers})
            </MetaLine>
            <MetaLine label="trigger">{r.trigger}</MetaLine>
          </dl>
        </aside>
      </header>

      <div class="figures six">
        <Figure value={`${r.passed}/${r.task_count}`} label="Passed" note={`${percent(r.pass_rate)}${scripted ? ' · scripted' : ''}`} tone={r.passed < r.task_count ? 'danger' : undefined} />
        <Figure value={seconds(r.median_latency_ms)} label="Median latency" note={`p95 ${seconds(r.p95_latency_ms)}`} />
        <Figure value={formatMicroUsd(r.median_cost_micro_usd)} label="Median cost" note="per task" />
        <Figure value={String(r.median_turns)} label="Median turns" note="model calls" />
        <Figure value={percent(r.cache_savings_percent)} label="Cache savings" note="of prompt tokens" />
        <Figure
          value={r.injection_block_rate == null ? 'not run' : percent(r.injection_block_rate)}
          label="Injection blocked"
          note={r.injection_block_rate == null ? 'not measured' : 'of attempts'}
          tone={r.injection_block_rate != null && r.injection_block_rate < 100 ? 'danger' : undefined}
        />
      </div>

      <Section title="By class" note="What the suite covers, and where a regression would show first." first>
        <ol class="rows">
          {classes.map(([name, c]) => (
            <li key={name} class="row class-row">
              <span>{name.replace(/_/g, ' ')}</span>
              <span>
                {c.passed < c.total ? <Mark tone="danger">{c.total - c.passed} failing</Mark> : null}
                {c.ungrounded_answers > 0 ? (
                  <>
                    {' '}
                    <span title={`${c.ungrounded_answers} of ${c.answers} answers state a figure not found in the ledger's results`}>
                      <Mark tone="warn">{c.ungrounded_answers} ungrounded</Mark>
                    </span>
                  </>
                ) : null}
              </span>
              <span class="num">
                {c.passed}/{c.total}
              </span>
            </li>
          ))}
        </ol>
      </Section>

      <Section title="Every task" note="Latency is the agent's time only; costs are list-price estimates from the tokens each run reported.">
        <div class="table-scroll task-table-wrap" tabIndex={0} role="region" aria-label="Every task">
          <table class="ledger-table task-table">
            <caption class="visually-hidden">Every task of the run</caption>
            <THead columns={['task', 'class', 'result', { label: 'judge', numeric: true }, { label: 'latency', numeric: true }, { label: 'cost', numeric: true }]} />
            <tbody>
              {r.results.map((t) => (
                <tr key={t.task}>
                  <td class="mono tiny" title={t.description}>
                    {t.task}
                  </td>
                  <td class="tiny muted">{t.class}</td>
                  <td>{t.passed ? <span class="label faint">pass</span> : <Mark tone="danger">fail</Mark>}</td>
                  <td class="num n">{t.judge_score == null ? 'not scored' : `${t.judge_score.toFixed(1)}/5`}</td>
                  <td class="num n">{seconds(t.latency_ms)}</td>
                  <td class="num n">{formatMicroUsd(t.cost_micro_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <ol class="rows task-list">
          {r.results.map((t) => (
            <li key={t.task} class="row task-item">
              <span class="mono tiny task-id">{t.task}</span>
              <span>{t.passed ? <span class="label faint">pass</span> : <Mark tone="danger">fail</Mark>}</span>
              <span class="tiny muted task-meta">
                {t.class} · {seconds(t.latency_ms)} · {formatMicroUsd(t.cost_micro_usd)} · {t.judge_score == null ? 'no judge' : `judge ${t.judge_score.toFixed(1)}/5`}
              </span>
            </li>
          ))}
        </ol>
      </Section>

      <Section title="Task by task" note="Each task's checks and the agent's answers, as the run recorded them.">
        <ol class="rows">
          {r.results.map((t) => (
            <li key={t.task} class="task-detail">
              <details>
                <summary>
                  <span class="mono small">{t.task}</span> {t.passed ? <span class="label faint">pass</span> : <Mark tone="danger">fail</Mark>}
                  {t.description ? <span class="small muted"> {t.description}</span> : null}
                </summary>
                <ul class="task-checks">
                  {t.checks.map((c, i) => (
                    <li key={i} class={`tiny${c.passed ? '' : ' tone-danger'}`}>
                      {c.passed ? 'passed' : 'failed'} · {c.type}
                      {c.score !== undefined && c.score !== null ? ` (${c.score}/5)` : ''}: {c.detail}
                    </li>
                  ))}
                </ul>
                {t.answers.map((a, i) => (
                  <blockquote key={i} class="task-answer small">
                    {a}
                  </blockquote>
                ))}
                {t.run_ids.length > 0 ? (
                  <p class="tiny faint">
                    {t.run_ids.length} run{t.run_ids.length === 1 ? '' : 's'}, kept in the evaluation owner's traces (the operator's room)
                  </p>
                ) : null}
              </details>
            </li>
          ))}
        </ol>
      </Section>

      {failed.length > 0 ? (
        <Section title="What failed" note="Each failed task with the checks it did not pass.">
          <ol class="rows">
            {failed.map((t) => (
              <li key={t.task} class="failed-task">
                <p>
                  <span class="mono small">{t.task}</span>
                  {t.description ? <span class="small muted"> {t.description}</span> : null}
                </p>
                {t.error ? <p class="tiny tone-danger">error: {t.error}</p> : null}
                {t.checks
                  .filter((c) => !c.passed)
                  .map((c, i) => (
                    <p key={i} class="tiny tone-danger">
                      {c.type}: {c.detail}
                    </p>
                  ))}
              </li>
            ))}
          </ol>
        </Section>
      ) : null}

      <p class="tiny faint dash-foot">
        Costs are list-price estimates computed from the tokens each run reported. <span class="mono">cargo xtask eval</span>{' '}
        reproduces the page; the report is read from <span class="mono">GET /api/evals/latest</span>.
      </p>
    </>
  );
}
