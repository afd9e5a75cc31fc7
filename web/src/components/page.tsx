import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { Nav } from './nav';

/** Sets the document title: "Chat · kakeibo". */
export function useTitle(title: string | null) {
  useEffect(() => {
    document.title = title ? `${title} · kakeibo` : 'kakeibo: a finance agent that shows its working';
  }, [title]);
}

interface PageProps {
  genre: 'paper' | 'terminal';
  title: string | null;
  narrow?: boolean;
  mainClass?: string;
  children: ComponentChildren;
}

/**
 * A page in one of the two grounds: the ground, the nav and the main column. Focus moves to the
 * main column when a page opens, so a screen reader starts at the new page, not the old link.
 */
export function Page({ genre, title, narrow, mainClass, children }: PageProps) {
  useTitle(title);
  const { url } = useLocation();
  const main = useRef<HTMLElement>(null);
  // On a new page or address, focus goes to the page itself — unless it is already somewhere in
  // the page (a composer, a card), which an address the page changes itself must not take away.
  useEffect(() => {
    if (document.activeElement && document.activeElement !== document.body) {
      const inNav = document.activeElement.closest('.nav');
      if (!inNav) return;
    }
    main.current?.focus({ preventScroll: true });
  }, [title, url]);
  const base = genre === 'paper' ? 'paper-main' : 'term-main';
  return (
    <div class="genre" data-genre={genre}>
      <a class="skip-link" href="#main">
        Skip to the page
      </a>
      <Nav />
      <main id="main" ref={main} tabIndex={-1} class={`${base}${narrow ? ' narrow' : ''}${mainClass ? ` ${mainClass}` : ''}`}>
        {children}
      </main>
    </div>
  );
}
