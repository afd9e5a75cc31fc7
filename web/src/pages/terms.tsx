import { Page } from '../components/page';
import { Section } from '../components/paper';

export function Terms() {
  return (
    <Page genre="paper" title="Terms" narrow>
      <header class="page-head">
        <h1 class="headline">Terms</h1>
        <p class="lead">Short, because the honest version is short.</p>
      </header>
      <Section title="What this is" first>
        <p class="prose">
          A demonstration of a finance agent over a synthetic ledger. Nothing it says is financial advice, and its numbers
          are only as right as the ledger they are read from.
        </p>
      </Section>
      <Section title="What it costs, and what that buys you">
        <p class="prose">
          Nothing. The site runs under a daily model budget; past it, chat pauses until the next day. There is no promise of
          uptime.
        </p>
      </Section>
      <Section title="Your data">
        <p class="prose">
          An anonymous visit lasts 24 hours from its last use; an account lasts until you delete it. You can delete
          everything at any time on the <a href="/privacy">privacy page</a>.
        </p>
      </Section>
      <Section title="Liability">
        <p class="prose">The site and its code are provided as they are, without warranty of any kind.</p>
      </Section>
    </Page>
  );
}
