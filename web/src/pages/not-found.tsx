import { Page } from '../components/page';

/** The 404 page: for an unknown path, and for anything that is not the visitor's to see. */
export function NotFound() {
  return (
    <Page genre="paper" title="Not found" narrow>
      <p class="label faint">404</p>
      <h1 class="headline" style={{ marginTop: '8px' }}>
        Nothing is kept here.
      </h1>
      <p class="lead">
        There is no page at this address, or it belongs to someone else. Ledgers, conversations and traces are visible
        only to the visitor who made them.
      </p>
      <div class="btn-row" style={{ marginTop: '32px' }}>
        <a class="btn btn-primary" href="/chat">
          Ask the ledger
        </a>
        <a class="btn btn-secondary" href="/">
          Go to the start
        </a>
      </div>
    </Page>
  );
}
