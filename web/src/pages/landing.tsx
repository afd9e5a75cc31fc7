// /: a statement of account of the system itself. Every figure is read at load time from the
// latest evaluation report (GET /api/evals/latest) and the tool registry (GET /api/tools); none is
// typed into the page. Without a report the page says so and names the command that makes one.

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { EvalReport, ToolInfo } from '../api/types';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Failure, Loading, MetaLine, Section } from '../components/paper';
import { count, longDate, percent, seconds } from '../lib/format';
import { formatUsd } from '../lib/money';
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
  return (
    <Page genre="paper" title={null}>
      <div class="spread landing-head">
        <div>
          <h1 class="display">A finance agent that shows its working.</h1>
          <p class="lead">
            {tools ? `${tools.length} tools` : 'Its tools'} over a double-entry ledger, a hand-written loop, and a gate
            that stops the turn before anything is written. The margin prints every tool it called and the fraction of a
            cent each answer cost.
          </p>
          <div class="btn-row" style={{ marginTop: '28px' }}>
            <a class="btn btn-primary" href="/chat">
              Ask it something
            </a>
            <a class="btn btn-secondary" href="/runs">
              Read a trace
            </a>
            <span class="small faint">No account needed.</span>
          </div>
        </div>
        <aside class="rail" aria-labelledby="provenance">
          <h2 class="rail-head" id="provenance">
            Provenance
          </h2>
          <dl>
            <MetaLine label="figures from">{report ? longDate(report.finishedAt) : report === null ? 'no run recorded' : '…'}</MetaLine>
            <MetaLine label="agent">{report ? (scripted ? `scripted: ${report.model}` : report.model || 'not recorded') : '…'}</MetaLine>
            <MetaLine label="judge">{report ? report.judgeModel || 'not recorded' : '…'}</MetaLine>
          </dl>
          <p class="tiny faint" style={{ marginTop: '10px' }}>
            Every number on this page is read from the latest evaluation report (<span class="mono">GET /api/evals/latest</span>)
            or the tool registry (<span class="mono">GET /api/tools</span>). <span class="mono">cargo xtask eval</span>{' '}
            reproduces them.
          </p>
        </aside>
      </div>

      {failed ? <Failure message={failed} /> : null}

      <Section title="What it is made of" note="One line per claim, and no line for anything the repository cannot reproduce.">
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
                detail={`${Object.keys(report.byClass).length} classes: ${Object.keys(report.byClass).map((c) => c.replace(/_/g, ' ')).join(', ')}`}
                figure={`${report.passed}/${report.taskCount}`}
                note={`${percent(report.passRate)}${scripted ? ' · scripted' : ''}`}
                tone={report.passed < report.taskCount ? 'danger' : undefined}
              />
              <Item
                claim="Prompt-injection attempts blocked"
                figure={report.injectionBlockRate === null ? 'not run' : percent(report.injectionBlockRate)}
                note="blocked"
              />
              <Item claim="Prompt tokens served from cache" figure={percent(report.cacheSavingsPercent)} note="of input" />
              <Item
                claim="Median cost per task"
                detail={`${formatUsd(report.totalCostUsd)} for ${report.taskCount} tasks`}
                figure={formatUsd(report.medianCostUsd)}
                note="median"
              />
              <Item claim="Median latency per task" detail={`p95 ${seconds(report.p95LatencyMs)}`} figure={seconds(report.medianLatencyMs)} note="median" />
            </>
          ) : null}
        </ol>
        {report === null ? (
          <div class="empty">
            <p class="empty-title">No evaluation has run yet, so there are no figures to show.</p>
            <p class="empty-hint">
              <span class="mono">cargo xtask eval</span> runs one locally; the operator can start one from /admin.
            </p>
          </div>
        ) : null}
        {report ? (
          <div class="closing-total">
            <span>What the whole run cost</span>
            <span class="num closing-figure">{formatUsd(report.totalCostUsd)}</span>
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
