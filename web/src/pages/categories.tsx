// /categories: the categories of a person's chart and the rules that file rows into them. A
// category of one's own is added, renamed or merged into another (its rows, rules and budgets
// moved, one recorded edit); a rule is written, changed or deleted, and its category given to the
// past rows like it — previewed first, then filed as one recorded edit. `?pattern=&category=`
// (the register's "All like this…") opens the rule form drafted and previewed.

import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api/client';
import type { CategoryItem, RuleItem, RuleLike } from '../api/types';
import { Mark } from '../components/mark';
import { Page } from '../components/page';
import { Empty, Failure, Loading, Section } from '../components/paper';
import { Settled, problemOf, useSettled } from '../components/settled';
import { count } from '../lib/format';
import { formatMinor } from '../lib/money';
import { refusalSentence } from '../lib/refusals';

type Settle = ReturnType<typeof useSettled>['settle'];

/** The register's rows of a category. */
function rowsOf(name: string): string {
  return `/transactions?category=${encodeURIComponent(name)}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

export function Categories() {
  const { query } = useLocation();
  const [categories, setCategories] = useState<CategoryItem[] | null | undefined>(undefined);
  const [rules, setRules] = useState<RuleItem[]>([]);
  const [failed, setFailed] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const status = useSettled(() => setVersion((v) => v + 1));
  const drafted = typeof query.pattern === 'string' ? { pattern: query.pattern, category: typeof query.category === 'string' ? query.category : '' } : null;

  useEffect(() => {
    let live = true;
    Promise.all([api.categories(), api.rules()])
      .then(([c, r]) => {
        if (!live) return;
        setCategories(c?.categories ?? null);
        setRules(r?.rules ?? []);
      })
      .catch((e) => live && setFailed(refusalSentence(e).text));
    return () => {
      live = false;
    };
  }, [version]);

  return (
    <Page genre="paper" title="Categories and rules" mainClass="register-main">
      <header class="page-head">
        <h1 class="headline">Categories and rules</h1>
        <p class="lead">
          The categories your spending and income are filed under, and the rules that file new rows as they are imported. A rule
          can also file the rows you already have: you see them first. Merges and filings are kept in the{' '}
          <a href="/transactions#edits">register’s edits</a>, where they can be put back.
        </p>
      </header>
      <Settled state={status} />
      {categories === undefined && !failed ? <Loading what="your categories" /> : null}
      {failed ? <Failure message={failed} /> : null}
      {categories === null && !failed ? (
        <Empty title="No ledger yet" hint={<>Your ledger starts with your first question on the <a href="/chat">chat</a> page.</>} />
      ) : null}
      {categories ? (
        <>
          <RulesSection rules={rules} categories={categories} drafted={drafted} settle={status.settle} />
          <CategoriesSection categories={categories} settle={status.settle} />
        </>
      ) : null}
    </Page>
  );
}

function CategoriesSection({ categories, settle }: { categories: CategoryItem[]; settle: Settle }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Section
      title="Categories"
      id="categories"
      note="The starting categories keep their names: the assistant files into them. Your own can be renamed, or merged into another."
    >
      <AddCategory settle={settle} />
      <div class="table-scroll" tabIndex={0} role="region" aria-label="Categories">
        <table class="ledger-table register-table">
          <caption class="visually-hidden">Your categories</caption>
          <thead>
            <tr>
              <th scope="col">Category</th>
              <th scope="col" class="n">
                Rows
              </th>
              <th scope="col" class="n register-wide">
                Rules
              </th>
              <th scope="col" class="n register-wide">
                Budgets
              </th>
              <th scope="col">
                <span class="visually-hidden">Change</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {categories.flatMap((c) => {
              const row = (
                <tr key={c.id} data-id={c.id} class={open === c.id ? 'is-open' : undefined}>
                  <td>
                    {c.name}
                    <span class="tiny faint block">
                      {c.side === 'income' ? 'income' : 'spending'}
                      {c.standard ? ' · starting category' : ''}
                    </span>
                  </td>
                  <td class="num n">{c.transactions > 0 ? <a href={rowsOf(c.name)}>{count(c.transactions)}</a> : '0'}</td>
                  <td class="num n register-wide">{count(c.rules)}</td>
                  <td class="num n register-wide">{count(c.budgets)}</td>
                  <td>
                    {c.standard ? null : (
                      <button
                        type="button"
                        class="btn btn-secondary compact"
                        aria-expanded={open === c.id}
                        aria-label={`Change the category ${c.name}`}
                        onClick={() => setOpen((o) => (o === c.id ? null : c.id))}
                      >
                        Change
                      </button>
                    )}
                  </td>
                </tr>
              );
              if (open !== c.id) return [row];
              return [
                row,
                <tr key={`${c.id}-editor`} class="editor-row">
                  <td colSpan={5}>
                    <CategoryEditor
                      category={c}
                      others={categories.filter((o) => o.id !== c.id && o.side === c.side)}
                      settle={(text, edit, tone) => {
                        setOpen(null);
                        settle(text, edit, tone);
                      }}
                    />
                  </td>
                </tr>,
              ];
            })}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

function AddCategory({ settle }: { settle: Settle }) {
  const [name, setName] = useState('');
  const [side, setSide] = useState<CategoryItem['side']>('expense');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function add(e: Event) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      const made = await api.addCategory(name, side);
      setName('');
      settle(`Added the category ${made.name}.`, null);
    } catch (err) {
      setProblem(problemOf(err));
    }
    setBusy(false);
  }
  return (
    <form class="register-search" aria-label="Add a category" onSubmit={(e) => void add(e)}>
      <div class="field wide">
        <label class="label" for="c-name">
          New category
        </label>
        <input id="c-name" value={name} maxLength={40} required onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} placeholder="Coffee, Kids, Pets…" />
      </div>
      <div class="field">
        <label class="label" for="c-side">
          For
        </label>
        <select id="c-side" value={side} onChange={(e) => setSide((e.currentTarget as HTMLSelectElement).value as CategoryItem['side'])}>
          <option value="expense">spending</option>
          <option value="income">income</option>
        </select>
      </div>
      <div class="btn-row">
        <button type="submit" class="btn btn-primary compact" disabled={busy}>
          Add the category
        </button>
      </div>
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">refused</Mark> {problem}
        </p>
      ) : null}
    </form>
  );
}

function CategoryEditor({ category, others, settle }: { category: CategoryItem; others: CategoryItem[]; settle: Settle }) {
  const [name, setName] = useState(category.name);
  const [into, setInto] = useState('');
  const [arming, setArming] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const id = `category-${category.id}`;
  const target = others.find((o) => o.id === into);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setProblem(null);
    try {
      await work();
    } catch (e) {
      setProblem(problemOf(e));
      setBusy(false);
    }
  }

  return (
    <section class="row-editor" aria-labelledby={`${id}-title`}>
      <h3 class="subhead" id={`${id}-title`} ref={heading} tabIndex={-1}>
        Change {category.name}
      </h3>
      <div class="editor-fields">
        <div class="field wide">
          <label class="label" for={`${id}-name`}>
            Name
          </label>
          <input id={`${id}-name`} value={name} maxLength={40} disabled={busy} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="btn-row">
          <button
            type="button"
            class="btn btn-primary compact"
            disabled={busy || name.trim() === category.name}
            onClick={() =>
              void act(async () => {
                const renamed = await api.renameCategory(category.id, name);
                settle(`Renamed ${category.name} to ${renamed.name}.`, null);
              })
            }
          >
            Rename
          </button>
        </div>
      </div>
      <div class="editor-fields danger-zone">
        <div class="field wide">
          <label class="label" for={`${id}-into`}>
            Merge into
          </label>
          <select
            id={`${id}-into`}
            value={into}
            disabled={busy}
            onChange={(e) => {
              setInto((e.currentTarget as HTMLSelectElement).value);
              setArming(false);
            }}
          >
            <option value="">choose a category</option>
            {others.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </div>
        {arming && target ? (
          <div class="btn-row">
            <span class="small">
              Move {plural(category.transactions, 'row')}, {plural(category.rules, 'rule')} and {plural(category.budgets, 'budget')} to {target.name}, and
              remove {category.name}?
            </span>
            <button
              type="button"
              class="btn btn-danger compact"
              disabled={busy}
              onClick={() =>
                void act(async () => {
                  const edit = await api.mergeCategory(category.id, target.id);
                  settle(edit.summary, edit);
                })
              }
            >
              Merge into {target.name}
            </button>
            <button type="button" class="link-button small" onClick={() => setArming(false)}>
              Keep it
            </button>
          </div>
        ) : (
          <div class="btn-row">
            <button type="button" class="btn btn-secondary compact" disabled={busy || !target} onClick={() => setArming(true)}>
              Merge…
            </button>
          </div>
        )}
      </div>
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">refused</Mark> {problem}
        </p>
      ) : null}
    </section>
  );
}

interface Draft {
  id: string | null;
  pattern: string;
  category: string;
  priority: string;
}

const EMPTY_DRAFT: Draft = { id: null, pattern: '', category: '', priority: '100' };

function RulesSection({
  rules,
  categories,
  drafted,
  settle,
}: {
  rules: RuleItem[];
  categories: CategoryItem[];
  drafted: { pattern: string; category: string } | null;
  settle: Settle;
}) {
  const [draft, setDraft] = useState<Draft>(drafted ? { ...EMPTY_DRAFT, ...drafted } : EMPTY_DRAFT);
  const [arming, setArming] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const form = useRef<HTMLHeadingElement>(null);

  function edit(rule: RuleItem) {
    setDraft({ id: rule.id, pattern: rule.pattern, category: rule.category, priority: String(rule.priority) });
    requestAnimationFrame(() => {
      form.current?.scrollIntoView({ block: 'nearest' });
      form.current?.focus();
    });
  }

  async function remove(rule: RuleItem) {
    setProblem(null);
    try {
      await api.deleteRule(rule.id);
      setArming(null);
      if (draft.id === rule.id) setDraft(EMPTY_DRAFT);
      settle(`Deleted the rule “${rule.pattern}” → ${rule.category}. The rows it filed keep their category.`, null);
    } catch (e) {
      setProblem(problemOf(e));
    }
  }

  return (
    <Section title="Rules" id="rules" note="When a row is imported, the first rule whose text is in its description (by priority, lower first; case does not matter) gives it a category.">
      {rules.length === 0 ? (
        <p class="small muted">No rules yet: write one below.</p>
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Rules">
          <table class="ledger-table register-table">
            <caption class="visually-hidden">Your rules, in the order they are tried</caption>
            <thead>
              <tr>
                <th scope="col">Text</th>
                <th scope="col">Category</th>
                <th scope="col" class="n register-wide">
                  Priority
                </th>
                <th scope="col" class="n">
                  Rows like it
                </th>
                <th scope="col">
                  <span class="visually-hidden">Change</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>
                    <span class="register-description">{r.pattern}</span>
                  </td>
                  <td class="muted">{r.category}</td>
                  <td class="num n register-wide">{r.priority}</td>
                  <td class="num n">
                    {r.matches > 0 ? <a href={`/transactions?q=${encodeURIComponent(r.pattern)}`}>{count(r.matches)}</a> : '0'}
                  </td>
                  <td>
                    {arming === r.id ? (
                      <span class="btn-row">
                        <button type="button" class="btn btn-danger compact" onClick={() => void remove(r)}>
                          Delete it
                        </button>
                        <button type="button" class="link-button small" onClick={() => setArming(null)}>
                          Keep it
                        </button>
                      </span>
                    ) : (
                      <span class="btn-row">
                        <button type="button" class="btn btn-secondary compact" aria-label={`Change the rule ${r.pattern}`} onClick={() => edit(r)}>
                          Change
                        </button>
                        <button type="button" class="btn btn-secondary compact" aria-label={`Delete the rule ${r.pattern}`} onClick={() => setArming(r.id)}>
                          Delete…
                        </button>
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">refused</Mark> {problem}
        </p>
      ) : null}
      <RuleForm
        key={draft.id ?? 'new'}
        draft={draft}
        categories={categories}
        heading={form}
        autoPreview={draft.id === null && drafted !== null && drafted.category !== '' && draft.pattern === drafted.pattern}
        onDraft={setDraft}
        onDone={() => setDraft(EMPTY_DRAFT)}
        settle={settle}
      />
    </Section>
  );
}

function RuleForm({
  draft,
  categories,
  heading,
  autoPreview,
  onDraft,
  onDone,
  settle,
}: {
  draft: Draft;
  categories: CategoryItem[];
  heading: RefObject<HTMLHeadingElement>;
  autoPreview: boolean;
  onDraft: (d: Draft) => void;
  onDone: () => void;
  settle: Settle;
}) {
  const [like, setLike] = useState<RuleLike | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const previewed = useRef<HTMLDivElement>(null);
  const set = (key: keyof Draft) => (e: Event) => {
    onDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
    setLike(null);
  };

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setProblem(null);
    try {
      await work();
    } catch (e) {
      setProblem(problemOf(e, 'That rule is gone: it was deleted since. The page is read again.'));
    }
    setBusy(false);
  }

  function priority(): number | null {
    const n = Number.parseInt(draft.priority, 10);
    return Number.isFinite(n) ? n : null;
  }

  const preview = () =>
    act(async () => {
      setLike(await api.previewRule(draft.pattern, draft.category));
      requestAnimationFrame(() => {
        previewed.current?.scrollIntoView({ block: 'nearest' });
        previewed.current?.focus();
      });
    });

  useEffect(() => {
    if (autoPreview) {
      void preview();
    } else if (draft.pattern) {
      heading.current?.focus();
    }
  }, []);

  const save = () =>
    act(async () => {
      const saved = await api.saveRule(draft.id, { pattern: draft.pattern, category: draft.category, priority: priority() });
      onDone();
      settle(
        `${draft.id ? 'Changed the rule' : 'Saved the rule'} “${saved.pattern}” → ${saved.category}. It files rows imported from now on${
          like && like.to_file > 0 ? '; the past rows like it are as they were' : ''
        }.`,
        null,
      );
    });

  const apply = () =>
    act(async () => {
      const edit = await api.applyRule(draft.pattern, draft.category);
      setLike(null);
      settle(edit.summary, edit);
    });

  const id = 'rule-form';
  return (
    <form
      class="row-editor rule-form"
      id={id}
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h3 class="subhead" id={`${id}-title`} ref={heading} tabIndex={-1}>
        {draft.id ? 'Change the rule' : 'A new rule'}
      </h3>
      <div class="editor-fields">
        <div class="field wide">
          <label class="label" for={`${id}-pattern`}>
            When the description holds
          </label>
          <input id={`${id}-pattern`} value={draft.pattern} maxLength={100} required disabled={busy} onInput={set('pattern')} placeholder="swiggy" />
        </div>
        <div class="field">
          <label class="label" for={`${id}-category`}>
            File it under
          </label>
          <select id={`${id}-category`} value={draft.category} required disabled={busy} onChange={set('category')}>
            <option value="">choose a category</option>
            {categories.map((c) => (
              <option key={c.id} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label class="label" for={`${id}-priority`}>
            Priority
          </label>
          <input id={`${id}-priority`} inputMode="numeric" value={draft.priority} size={5} disabled={busy} onInput={set('priority')} />
        </div>
      </div>
      <div class="btn-row">
        <button type="submit" class="btn btn-primary compact" disabled={busy || !draft.pattern.trim() || !draft.category}>
          {draft.id ? 'Save the change' : 'Save the rule'}
        </button>
        <button type="button" class="btn btn-secondary compact" disabled={busy || !draft.pattern.trim() || !draft.category} onClick={() => void preview()}>
          The past rows like it…
        </button>
        {draft.id || draft.pattern ? (
          <button
            type="button"
            class="link-button small"
            onClick={() => {
              setLike(null);
              onDone();
            }}
          >
            Not now
          </button>
        ) : null}
      </div>
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">refused</Mark> {problem}
        </p>
      ) : null}
      <div ref={previewed} tabIndex={-1} class="register-status" aria-live="polite">
        {like ? <LikePreview like={like} busy={busy} onApply={() => void apply()} /> : null}
      </div>
    </form>
  );
}

function LikePreview({ like, busy, onApply }: { like: RuleLike; busy: boolean; onApply: () => void }) {
  const besides = [
    like.already > 0 ? `${plural(like.already, 'row')} already in ${like.category}` : null,
    like.left_alone > 0 ? `${plural(like.left_alone, 'row')} left as they are (transfers between your accounts, splits)` : null,
  ].filter(Boolean);
  return (
    <div class="like-preview">
      <p class="small">
        {like.to_file === 0
          ? `No past row holding “${like.pattern}” waits to be filed under ${like.category}.`
          : `${plural(like.to_file, 'past row')} holding “${like.pattern}” would move to ${like.category}.`}
        {besides.length > 0 ? ` Besides: ${besides.join('; ')}.` : ''}
      </p>
      {like.rows.length > 0 ? (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="The rows it would file">
          <table class="ledger-table register-table">
            <caption class="visually-hidden">Rows the rule would file{like.to_file > like.rows.length ? `, the first ${like.rows.length}` : ''}</caption>
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Description</th>
                <th scope="col">Now</th>
                <th scope="col" class="n">
                  Amount
                </th>
              </tr>
            </thead>
            <tbody>
              {like.rows.map((r) => (
                <tr key={r.id}>
                  <td class="num">{r.date}</td>
                  <td>
                    <span class="register-description">{r.description}</span>
                  </td>
                  <td class="muted">{r.category}</td>
                  <td class="num n">{formatMinor(r.amount_minor, r.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {like.to_file > like.rows.length ? <p class="tiny faint">The first {like.rows.length} of them.</p> : null}
      {like.to_file > 0 ? (
        <div class="btn-row">
          <button type="button" class="btn btn-primary compact" disabled={busy} onClick={onApply}>
            File {plural(like.to_file, 'row')} under {like.category}
          </button>
        </div>
      ) : null}
    </div>
  );
}
