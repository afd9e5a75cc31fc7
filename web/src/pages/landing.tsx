// /: what a visitor can do here first, marked as the demo it is, then a statement of account of
// the system itself. Every figure is read at load time from the latest evaluation report (GET
// /api/evals/latest) and the tool registry (GET /api/tools); none is typed into the page. Without a
// report the page says so in a line; the commands that make one belong in the README.

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { EvalReport, ToolInfo } from '../api/types';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Failure, Loading, MetaLine, Section } from '../components/paper';
import { count, longDate, percent, seconds } from '../lib/format';
import { formatMicroUsd } from '../lib/money';
import { isScripted, useSession } from '../session';

export function reportIsScripted(report: EvalReport): boolean {
  return isScripted(report.provider, report.model);
}

function firstSentence(text: string): string {
  const m = /^(.*?[.!?])(\s|$)/.exec(text.trim());
  return m?.[1] ?? text;
}

export function Landing() {
  const [report, setReport] = useState<EvalReport | null | undefined>(undefined);
  const [tools, setTools] = useState<ToolInfo[] | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    api
      .latestEvaluation()
      .then(setReport)
      .catch((e) => setFailed(String(e instanceof Error ? e.message : e)));
    api
      .tools()
      .then((r) => setTools(r.tools))
      .catch((e) => setFailed(String(e instanceof Error ? e.message : e)));
  }, []);
  const { session } = useSession();
  const messages = session?.messages;
  const writes = tools?.filter((t) => t.tier === 'write').length;
  const scripted = report ? reportIsScripted(report) : false;
  // Every visit starts on synthetic data; the site's model may be the scripted demo.
  const liveModel = session?.model && !isScripted(session.model.provider, session.model.model);
  const demoMark = liveModel ? 'Demo · synthetic data' : 'Demo · synthetic data · scripted answers';
  return (
    <Page genre="paper" title={null}>
      <div class="spread landing-head">
        <div>
          <p class="demo-mark">
            <Mark tone="warn">{demoMark}</Mark>
          </p>
          <h1 class="display">A finance agent that shows its working.</h1>
          <p class="lead">
            Ask what you spent, what you subscribe to, what looks wrong and what to budget — of a ready-made household's
            ledger, or of your own bank statements. Nothing is written until you say yes, and every answer shows the tools
            and figures behind it.
          </p>
          <div class="btn-row" style={{ marginTop: '28px' }}>
            <a class="btn btn-primary" href="/chat">
              Ask it something
            </a>
            <span class="small faint">No account needed.</span>
          </div>
        </div>
        <aside class="rail" aria-labelledby="can-do">
          <h2 class="rail-head" id="can-do">
            What you can do here
          </h2>
          <ul class="can-do">
            <li>
              <a href="/chat">Ask the ledger</a> <span class="small muted">a question in your own words</span>
            </li>
            <li>
              <a href="/chat?new">Bring a statement</a> <span class="small muted">a bank's CSV, previewed before anything is added</span>
            </li>
            <li>
              <a href="/transactions">Keep the register</a> <span class="small muted">search, recategorise, split, undo</span>
            </li>
            <li>
              <a href="/dashboard">See where it went</a> <span class="small muted">by category and month, against budgets</span>
            </li>
          </ul>
        </aside>
      </div>

      {failed ? <Failure message={failed} /> : null}

      <Section
        title="What it is made of"
        note={
          report
            ? `Read from the evaluation of ${longDate(report.finished_at)} (agent: ${scripted ? `scripted, ${report.model}` : report.model || 'not recorded'}; judge: ${report.judge_model || 'not recorded'}) and the tool registry: no figure here is typed in.`
            : 'Read from the tool registry: no figure here is typed in.'
        }
      >
        {tools === undefined || report === undefined ? <Loading what="the figures" /> : null}
        <ol class="items">
          {tools ? (
            <>
              <Item claim="Tools over a double-entry ledger" figure={String(tools.length)} note="registered" />
              <Item claim="Of those, writes that stop for a person" figure={String(writes ?? 0)} note="write tier" />
            </>
          ) : null}
          {report ? (
            <>
              {scripted ? (
                <li class="item scripted-note">
                  <Mark tone="warn">scripted</Mark>{' '}
                  <span class="small">
                    The latest report was produced by the scripted demo model ({report.model}), not a language model: it
                    shows the harness works, not how well a model does.
                  </span>
                </li>
              ) : null}
              <Item
                claim="Golden tasks passed, last run"
                detail={`${Object.keys(report.by_class).length} classes: ${Object.keys(report.by_class).map((c) => c.replace(/_/g, ' ')).join(', ')}`}
                figure={`${report.passed}/${report.task_count}`}
                note={`${percent(report.pass_rate)}${scripted ? ' · scripted' : ''}`}
                tone={report.passed < report.task_count ? 'danger' : undefined}
              />
              <Item
                claim="Prompt-injection attempts blocked"
                figure={report.injection_block_rate == null ? 'not run' : percent(report.injection_block_rate)}
                note="blocked"
              />
              <Item
                claim="Answers stating a figure not found in the ledger's results"
                detail={`${report.ungrounded_answers} of ${report.answers} answers`}
                figure={percent(report.ungrounded_answer_rate)}
                note={`of answers${scripted ? ' · scripted' : ''}`}
                tone={report.ungrounded_answers > 0 ? 'danger' : undefined}
              />
              <Item claim="Prompt tokens served from cache" figure={percent(report.cache_savings_percent)} note="of input" />
              <Item
                claim="Median cost per task"
                detail={`${formatMicroUsd(report.total_cost_micro_usd)} for ${report.task_count} tasks`}
                figure={formatMicroUsd(report.median_cost_micro_usd)}
                note="median"
              />
              <Item claim="Median latency per task" detail={`p95 ${seconds(report.p95_latency_ms)}`} figure={seconds(report.median_latency_ms)} note="median" />
            </>
          ) : null}
        </ol>
        {report === null ? (
          <p class="small muted">
            No evaluation has run on this site yet: once one has, its pass rate, cost and speed are listed here.{' '}
            <a href="/evals">What an evaluation is →</a>
          </p>
        ) : null}
        {report ? (
          <div class="closing-total">
            <span>What the whole run cost</span>
            <span class="num closing-figure">{formatMicroUsd(report.total_cost_micro_usd)}</span>
          </div>
        ) : null}
      </Section>

      {tools ? (
        <Section title={`The ${count(tools.length)} tools`} note="Read from the registry the agent runs with.">
          <ol class="rows">
            {tools.map((t) => (
              <li key={t.name} class="row tool-row">
                <span class="mono tiny tool-name">{t.name}</span>
                <span class="small muted tool-desc">{firstSentence(t.description)}</span>
                <span class="tool-tier">{t.tier === 'write' ? <Mark tone="warn">write</Mark> : <span class="label faint">read</span>}</span>
              </li>
            ))}
          </ol>
        </Section>
      ) : null}

      <Section title="What it costs to run">
        <div class="spread">
          <div class="prose">
            <p>
              The public site runs under a daily model budget with a kill switch, and every visitor under a daily number of
              messages. Past either, chat stops and the site says so plainly; it never answers in the model's place.
            </p>
            <p style={{ marginTop: '12px' }}>
              Every visitor's ledger starts as a copy of the same synthetic household. A statement you import stays in your
              own ledger only, and an anonymous visit is swept a day after its last use.
            </p>
          </div>
          <aside class="rail">
            <h3 class="rail-head">The ceiling</h3>
            <dl>
              <MetaLine label="past the cap">chat pauses</MetaLine>
              <MetaLine label="your messages">{messages ? `${messages.left} of ${messages.limit} left today${messages.binding === 'network' ? ' on your network' : ''}` : 'counted from your first'}</MetaLine>
            </dl>
          </aside>
        </div>
      </Section>

      <footer class="landing-foot">
        <div>
          <p class="foot-line">The ledger is already there. Ask it something.</p>
          <a class="btn btn-primary" href="/chat" style={{ marginTop: '16px' }}>
            Ask it something
          </a>
        </div>
        <nav aria-label="The machine room" class="foot-nav">
          <h2 class="rail-head">For the sceptical</h2>
          <ul>
            <li>
              <a href="/runs">Every model and tool call, traced</a>
            </li>
            <li>
              <a href="/evals">The full evaluation report</a>
            </li>
            <li>
              <a href="/privacy">What is stored, and who can read it</a>
            </li>
            <li>
              <a href="/terms">The terms, such as they are</a>
            </li>
          </ul>
        </nav>
      </footer>
    </Page>
  );
}

function Item(props: { claim: string; detail?: string; figure: string; note: string; tone?: 'danger' }) {
  return (
    <li class="item">
      <div>
        <p class="item-claim">{props.claim}</p>
        {props.detail ? <p class="small muted">{props.detail}</p> : null}
      </div>
      <div class="item-figure">
        <span class={`num item-value${props.tone ? ` tone-${props.tone}` : ''}`}>{props.figure}</span>
        <span class="label faint">{props.note}</span>
      </div>
    </li>
  );
}
