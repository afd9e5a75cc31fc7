import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useSession } from '../session';
import { Logo } from './mark';

const LINKS = [
  { href: '/chat', label: 'chat' },
  { href: '/dashboard', label: 'dashboard' },
  { href: '/transactions', label: 'register' },
  { href: '/categories', label: 'categories' },
  { href: '/budgets', label: 'budgets' },
  { href: '/runs', label: 'traces' },
  { href: '/evals', label: 'evals' },
];

/** One nav for both grounds: it has no colours of its own, it inherits the room it is in. */
export function Nav() {
  const { path } = useLocation();
  const { session } = useSession();
  const visitor = session?.visitor;
  const links = [...LINKS];
  if (visitor?.operator) links.push({ href: '/admin', label: 'operator' });
  const signedIn = visitor && !visitor.anonymous;
  links.push(signedIn ? { href: '/privacy', label: 'account' } : { href: '/sign-in', label: 'sign in' });
  // On a phone the links fold behind a Menu button; a new page folds them again.
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  return (
    <header class="nav" data-open={open ? 'true' : undefined}>
      <div class="nav-inner">
        <a href="/" class="wordmark">
          <Logo />
          <span>kakeibo</span>
          <span class="visually-hidden">, home</span>
          <span class="kanji" aria-hidden="true">
            家計簿
          </span>
        </a>
        <button type="button" class="nav-menu" aria-expanded={open} aria-controls="nav-links" onClick={() => setOpen((o) => !o)}>
          {open ? 'Close' : 'Menu'}
        </button>
        <nav aria-label="Main" class="nav-links" id="nav-links">
          {links.map((link) => {
            const current = path === link.href || path.startsWith(`${link.href}/`);
            return (
              <a key={link.href} href={link.href} aria-current={current ? 'page' : undefined}>
                <span>{link.label}</span>
              </a>
            );
          })}
        </nav>
      </div>
    </header>
  );
}
