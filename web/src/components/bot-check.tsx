// The bot check's widget (Cloudflare Turnstile), shown above the composer only while the session
// asks for the check. Rendered explicitly with the `interaction-only` appearance, so it takes no
// room unless Cloudflare wants an interaction. Each token it issues is single-use: bumping `round`
// renders a fresh widget for the next one.

import { useEffect, useRef, useState } from 'preact/hooks';

interface TurnstileApi {
  render(container: HTMLElement, options: Record<string, unknown>): string;
  remove(widgetId: string): void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

const SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

let loading: Promise<TurnstileApi> | null = null;

/** Cloudflare's script, loaded once per page. */
function loadTurnstile(): Promise<TurnstileApi> {
  if (window.turnstile) return Promise.resolve(window.turnstile);
  loading ??= new Promise<TurnstileApi>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = SCRIPT;
    script.async = true;
    script.onload = () => (window.turnstile ? resolve(window.turnstile) : reject(new Error('no Turnstile API')));
    script.onerror = () => {
      loading = null;
      reject(new Error('the Turnstile script did not load'));
    };
    document.head.appendChild(script);
  });
  return loading;
}

export function BotCheckWidget({ siteKey, round, onToken }: { siteKey: string; round: number; onToken: (token: string | null) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const said = useRef(onToken);
  said.current = onToken;
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let widget: string | null = null;
    let gone = false;
    setFailed(false);
    loadTurnstile()
      .then((turnstile) => {
        if (gone || !box.current) return;
        widget = turnstile.render(box.current, {
          sitekey: siteKey,
          appearance: 'interaction-only',
          callback: (token: string) => said.current(token),
          'expired-callback': () => said.current(null),
          'error-callback': () => said.current(null),
        });
      })
      .catch(() => {
        if (!gone) setFailed(true);
      });
    return () => {
      gone = true;
      if (widget !== null) window.turnstile?.remove(widget);
    };
  }, [siteKey, round]);

  return (
    <div class="bot-check" ref={box}>
      {failed ? (
        <p class="tiny tone-warn" role="alert">
          The check that you are a person could not load (a content blocker, perhaps), so messages cannot be sent yet. Reload the page to try again.
        </p>
      ) : null}
    </div>
  );
}
