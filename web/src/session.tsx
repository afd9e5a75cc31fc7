// Who is visiting, as GET /api/session says, shared by every page. Pages that change it (sending
// a message, signing in or out, deleting everything) call `refresh`.

import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api } from './api/client';
import type { Session } from './api/types';

interface SessionState {
  /** `undefined` while the first answer is on its way. */
  session: Session | undefined;
  /** The session could not be read (the site is unreachable). */
  failed: string | null;
  refresh: () => Promise<Session | undefined>;
}

const Context = createContext<SessionState>({
  session: undefined,
  failed: null,
  refresh: async () => undefined,
});

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [failed, setFailed] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      const next = await api.session();
      setSession(next);
      setFailed(null);
      return next;
    } catch (e) {
      setFailed(e instanceof Error ? e.message : String(e));
      return undefined;
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  return <Context.Provider value={{ session, failed, refresh }}>{children}</Context.Provider>;
}

export function useSession(): SessionState {
  return useContext(Context);
}

/** The model the site runs on, as a person should read it: a scripted model says so. */
export function modelLabel(session: Session | undefined): string {
  const model = session?.model;
  if (!model) return 'no model configured';
  if (isScripted(model.provider, model.model)) return `the scripted demo model, ${model.model}`;
  return `${model.provider} ${model.model}`;
}

/** A scripted model plays rules from a file: its answers are a demo, never a model's. */
export function isScripted(provider: string | undefined, model: string | undefined): boolean {
  return provider === 'script' || (model ?? '').startsWith('script');
}
