// The HTTP contract of the functions (README "The functions"), as the page reads it: every answer
// and event is a type generated from the Rust types (`wire.ts`), named here as the pages name them.
// Only what the page sends that the server reads as something else (the figures chosen for refused
// rows) is written by hand. Amounts are integer minor units with their currency; costs are integer
// micro-dollars, or on the event stream a decimal string.

import type {
  AccountKind,
  Action as AdminAction,
  ActionDone as AdminActionDone,
  AdminOverview,
  Gone,
  HomeCurrency,
  Reset,
  Sent,
  SignedOut,
  Verified,
  DryRunPreview,
  DuplicateRow,
  Figures,
  LineCount,
  PlannedAccount,
  PreviewRow,
  Reconciliation,
  RowError,
  TakenFigure,
  TransferPreview,
  TransferSide,
  ErrorBody,
  Kept,
  Upload as UploadRow,
  UploadList,
  BotCheckView,
  Budget,
  Category,
  CategoryList,
  Deleted,
  Edit,
  EditKind,
  EditList,
  Kind,
  Like,
  Line,
  MessagesLeft,
  ModelView,
  MonthView,
  Page,
  Row,
  Rule,
  RuleInput,
  RuleList,
  SessionView,
  SignedIn,
  VisitorView,
  Anomaly,
  BalancesOutput,
  Block,
  CategoryStatus,
  CheckOutcome,
  Dashboard,
  DashboardTransaction,
  EvalReport,
  Group,
  Merchant,
  SpendReport,
  TaskResult,
  Conversation,
  ConversationList,
  ConversationSummary,
  Event,
  EventUsage,
  Message,
  PendingTurn,
  FigureRows,
  Headline,
  RunDetail,
  RunEvent,
  RunList,
  RunSummary,
  Tier as WireTier,
  ToolInfo,
  ToolList,
  ToolOutcome,
  TurnEnd,
  WriteDecision,
} from './wire';

export type Tier = WireTier;

// The read side's answers, generated from the Rust types (`wire.ts`).
export type {
  AdminAction,
  AdminActionDone,
  Gone,
  HomeCurrency,
  Reset,
  Sent,
  SignedOut,
  Verified,
  UploadList,
  CategoryList,
  Deleted,
  EditKind,
  EditList,
  MessagesLeft,
  RuleInput,
  RuleList,
  SignedIn,
  AdminOverview,
  Anomaly,
  CategoryStatus,
  CheckOutcome,
  Dashboard,
  EvalReport,
  SpendReport,
  TaskResult,
  Conversation,
  ConversationList,
  ConversationSummary,
  PendingTurn,
  FigureRows,
  Headline,
  RunDetail,
  RunEvent,
  RunList,
  RunSummary,
  ToolInfo,
  ToolList,
};
/** A stored canonical message, as the conversation holds it. */
export type StoredMessage = Message;
export type StoredBlock = Block;
export type Session = SessionView;
export type Visitor = VisitorView;
export type ModelInfo = ModelView;
export type BotCheck = BotCheckView;
export type MessagesToday = MessagesLeft;
export type RegisterKind = Kind;
export type RegisterRow = Row;
export type RegisterPage = Page;
export type LedgerEdit = Edit;
/** A category of the person's chart (`GET /api/categories`). */
export type CategoryItem = Category;
/** A categorisation rule (`GET /api/rules`), in the order rules are tried. */
export type RuleItem = Rule;
/** What giving a rule's category to the past rows like it would do (`POST /api/rules/preview`). */
export type RuleLike = Like;
export type BudgetAmount = Budget;
/** One spending category in a month (`GET /api/budgets`). */
export type BudgetLine = Line;
export type BudgetMonth = MonthView;
export type SpendGroup = Group;
export type RecurringMerchant = Merchant;
export type LedgerRow = DashboardTransaction;
/** `get_balances`: what each account holds (owed negative), net worth and what waits in transit. */
export type Balances = BalancesOutput;

/** A refusal's or failure's body: the sentence, and a reason code for those a page acts on. */
export type RefusalBody = ErrorBody;

// region: turn events (chat and confirm streams)
//
// Generated from the Rust types (`wire.ts`, from `kakeibo_core::wire`): an SSE frame's data is
// the event without its `type`, which the frame names.

type EventData<T extends Event['type']> = Omit<Extract<Event, { type: T }>, 'type'>;

export type { ToolOutcome, WriteDecision };
export type TokenEvent = EventData<'token'>;
export type ToolCallEvent = EventData<'tool_call'>;
export type ToolResultEvent = EventData<'tool_result'>;
export type ConfirmRequestEvent = EventData<'confirm_request'>;
export type TurnEndEvent = TurnEnd;
export type ErrorEvent = EventData<'error'>;
/** Every figure of an answer, found in its text and checked against the turn's tool results. */
export type FiguresEvent = EventData<'figures'>;
/** The answer so far states figures no tool returned: the model is asked once to correct it. */
export type CorrectingEvent = EventData<'correcting'>;
export type SubagentEvent = EventData<'subagent'>;
export type Usage = EventUsage;

// endregion

// region: uploads and the import preview

/** An upload as listed, or kept (`reused` then: the same bytes were kept already). */
export type Upload = Kept | UploadRow;

/** Which figure of a row the balance column refuses is taken in: its amount or its balance change. */
export type Figure = 'amount' | 'balance';

/** A refused row, and the figure to take it in at (what the preview is asked with). */
export interface TakenLine {
  line: number;
  take: Figure;
}

export type ImportPreview = DryRunPreview;
export type PlannedTransfer = TransferPreview;
export type {
  AccountKind,
  DuplicateRow,
  Figures,
  LineCount,
  PlannedAccount,
  PreviewRow,
  Reconciliation,
  RowError,
  TakenFigure,
  TransferSide,
};

// endregion

// region: the read side

// endregion

// region: evaluations

// endregion

// region: the register (GET /api/transactions, the edits)

