"""The peer of kakeibo's turn benchmark: the same two flows in LangGraph with PostgresSaver.

1. A read-only turn: a zero-latency model asks for three read tools in one batch, the tools run
   (the same kinds of reads kakeibo's tools make, on the same seeded ledger, each in a
   transaction scoped to the owner as kakeibo's are), and the model answers.
2. A write turn: the model asks for `set_budget`; the graph stops at `interrupt()`; a freshly
   built graph over a fresh checkpointer resumes it with `Command(resume=True)`, as another
   process would; the write runs and the model answers.

Timed like kakeibo's side: each read turn with the time its tools ran inside it (the span during
which at least one tool body was running), so its overhead is the turn minus that span; each
flow beside its tools called directly.

The script serves kakeibo's turn benchmark, which runs the two sides in alternating blocks so a
machine whose speed drifts (a shared host's CPU steal) weighs on both alike, and which counts
each side's statements and commits on the server around its blocks. One JSON object a line on
stdin, one answer a line on stdout:

    {"op": "hello"}                 -> {"title": "LangGraph … with PostgresSaver …"}
    {"op": "warm", "n": 50}         -> {"ok": true}       n read turns and n write flows
    {"op": "reads", "n": 50}        -> {"turn_ms": […], "tools_inside_ms": […], "tools_alone_ms": […]}
    {"op": "writes", "n": 25}       -> {"flow_ms": […], "alone_ms": […]}
    {"op": "count_reads", "n": 100} -> {"ok": true}       untimed, for the server's counters
    {"op": "count_writes", "n": 100}-> {"ok": true}
    {"op": "quit"}

By hand: `python bench/peer/langgraph_flows.py --database-url postgres://… --owner UUID`, then
type the lines.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import threading
import time
import uuid

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

OWNER = ""
TOOLS_POOL: ConnectionPool | None = None

# When each tool body ran, as (start, end) on the perf counter: the tools run on ToolNode's threads.
SPANS: list[tuple[float, float]] = []
SPANS_LOCK = threading.Lock()


def timed(fn):
    """Records when the tool's body runs, for the turn's time inside its tools."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ended = time.perf_counter()
            with SPANS_LOCK:
                SPANS.append((started, ended))

    return wrapper


def tools_span_ms() -> float:
    """How long at least one tool was running since the spans were last taken, in ms."""
    with SPANS_LOCK:
        spans = sorted(SPANS)
        SPANS.clear()
    total, end = 0.0, float("-inf")
    for start, stop in spans:
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total * 1000


def scoped(sql: str, params: tuple) -> list:
    """One read or write in a transaction scoped to the owner, as kakeibo's tools run."""
    assert TOOLS_POOL is not None
    with TOOLS_POOL.connection() as conn, conn.transaction():
        conn.execute("SELECT app_set_owner(%s)", (OWNER,))
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else []


@tool
@timed
def get_spend_report(period: str) -> str:
    """Spending by category for a month (YYYY-MM)."""
    rows = scoped(
        """SELECT a.name, sum(p.amount_minor)::bigint AS spent, count(*) AS n
           FROM postings p
           JOIN transactions t ON t.id = p.transaction_id AND t.owner_id = p.owner_id
           JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id
           WHERE p.owner_id = %s AND a.type = 'expense'
             AND t.date >= to_date(%s, 'YYYY-MM') AND t.date < to_date(%s, 'YYYY-MM') + interval '1 month'
           GROUP BY a.name ORDER BY spent DESC""",
        (OWNER, period, period),
    )
    return json.dumps(rows, default=str)


@tool
@timed
def search_transactions(query: str, limit: int) -> str:
    """Transactions whose description contains the query, newest first."""
    rows = scoped(
        """SELECT t.date, t.description, p.amount_minor, a.name
           FROM transactions t
           JOIN postings p ON p.transaction_id = t.id AND p.owner_id = t.owner_id
           JOIN accounts a ON a.id = p.account_id AND a.owner_id = p.owner_id AND a.type = 'asset'
           WHERE t.owner_id = %s AND t.description ILIKE %s
           ORDER BY t.date DESC LIMIT %s""",
        (OWNER, f"%{query}%", limit),
    )
    return json.dumps(rows, default=str)


@tool
@timed
def list_accounts() -> str:
    """The owner's accounts."""
    rows = scoped("SELECT name, type, currency FROM accounts WHERE owner_id = %s ORDER BY type, name", (OWNER,))
    return json.dumps(rows, default=str)


@tool
@timed
def set_budget(category: str, month: str, amount_minor: int) -> str:
    """Set the monthly budget of a category (a write: needs the person's approval)."""
    rows = scoped(
        """INSERT INTO budgets (owner_id, account_id, month, amount_minor, currency)
           SELECT %s, a.id, %s, %s, 'INR' FROM accounts a WHERE a.owner_id = %s AND a.name = %s
           ON CONFLICT (account_id, month) DO UPDATE SET amount_minor = EXCLUDED.amount_minor
           RETURNING id""",
        (OWNER, month, amount_minor, OWNER, category),
    )
    return json.dumps(rows, default=str)


READS = [
    ("get_spend_report", {"period": "2025-03"}),
    ("search_transactions", {"query": "swiggy", "limit": 5}),
    ("list_accounts", {}),
]
BY_NAME = {t.name: t for t in (get_spend_report, search_transactions, list_accounts, set_budget)}


def model_reads(state: MessagesState) -> dict:
    """The zero-latency model: three reads in one batch, then the answer."""
    if isinstance(state["messages"][-1], ToolMessage):
        return {"messages": [AIMessage(content="March: ₹1,58,558.00 spent.")]}
    calls = [{"name": n, "args": a, "id": f"call_{i}", "type": "tool_call"} for i, (n, a) in enumerate(READS)]
    return {"messages": [AIMessage(content="", tool_calls=calls)]}


def model_write(state: MessagesState) -> dict:
    """The zero-latency model: one write, then the answer."""
    if isinstance(state["messages"][-1], ToolMessage):
        return {"messages": [AIMessage(content="The Groceries budget for April is ₹5,000.")]}
    call = {
        "name": "set_budget",
        "args": {"category": "Groceries", "month": "2025-04", "amount_minor": 500000},
        "id": "call_w",
        "type": "tool_call",
    }
    return {"messages": [AIMessage(content="", tool_calls=[call])]}


def approve(state: MessagesState) -> dict:
    """Stops for the person's decision; resumed with `Command(resume=…)`."""
    decision = interrupt({"write": state["messages"][-1].tool_calls[0]})
    if decision is not True:
        raise RuntimeError(f"the benchmark approves every write, got {decision!r}")
    return {}


def asks_for_tools(state: MessagesState) -> str:
    return "tools" if state["messages"][-1].tool_calls else END


def read_graph(checkpointer: PostgresSaver):
    g = StateGraph(MessagesState)
    g.add_node("agent", model_reads)
    g.add_node("tools", ToolNode([get_spend_report, search_transactions, list_accounts]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", asks_for_tools, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def write_graph(checkpointer: PostgresSaver):
    g = StateGraph(MessagesState)
    g.add_node("agent", model_write)
    g.add_node("approve", approve)
    g.add_node("tools", ToolNode([set_budget]))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "approve" if s["messages"][-1].tool_calls else END, ["approve", END])
    g.add_edge("approve", "tools")
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)


def serve(database_url: str, owner: str, answers) -> None:
    """Answers the benchmark's commands from stdin until `quit` or the end of input."""
    global OWNER, TOOLS_POOL
    OWNER = owner
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    # Four connections for each side: the checkpointer's and the tools', as kakeibo's pool of four.
    checkpoints = ConnectionPool(database_url, min_size=4, max_size=4, kwargs=kwargs, open=True)
    TOOLS_POOL = ConnectionPool(database_url, min_size=4, max_size=4, kwargs=kwargs, open=True)
    PostgresSaver(checkpoints).setup()

    graph = read_graph(PostgresSaver(checkpoints))
    question = "How much did I spend in March?"

    def turn():
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        out = graph.invoke({"messages": [HumanMessage(content=question)]}, config)
        assert out["messages"][-1].content.startswith("March"), out["messages"][-1]

    def write_flow():
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        first = write_graph(PostgresSaver(checkpoints))
        stopped = first.invoke({"messages": [HumanMessage(content="Set my groceries budget for April to 5000")]}, config)
        assert "__interrupt__" in stopped, stopped
        # Another process: a graph and a checkpointer built afresh, only the thread id carried over.
        fresh = write_graph(PostgresSaver(checkpoints))
        done = fresh.invoke(Command(resume=True), config)
        assert done["messages"][-1].content.startswith("The Groceries budget"), done["messages"][-1]

    def reads_alone():
        for name, tool_args in READS:
            BY_NAME[name].invoke(tool_args)

    def write_alone():
        BY_NAME["set_budget"].invoke({"category": "Groceries", "month": "2025-04", "amount_minor": 500000})

    def ms_of(fn) -> float:
        started = time.perf_counter()
        fn()
        return (time.perf_counter() - started) * 1000

    def reads(n: int) -> dict:
        turn_ms, inside_ms, alone_ms = [], [], []
        for _ in range(n):
            alone_ms.append(ms_of(reads_alone))
            tools_span_ms()
            turn_ms.append(ms_of(turn))
            inside_ms.append(tools_span_ms())
        return {"turn_ms": turn_ms, "tools_inside_ms": inside_ms, "tools_alone_ms": alone_ms}

    def writes(n: int) -> dict:
        flow_ms, alone_ms = [], []
        for _ in range(n):
            alone_ms.append(ms_of(write_alone))
            flow_ms.append(ms_of(write_flow))
        return {"flow_ms": flow_ms, "alone_ms": alone_ms}

    def repeat(fn, n: int) -> dict:
        for _ in range(n):
            fn()
        return {"ok": True}

    import langgraph.version as lg_version  # noqa: PLC0415 (only for the title)

    title = (
        f"LangGraph {lg_version.__version__} with PostgresSaver (Python {sys.version.split()[0]}), "
        "same server, same ledger; durability LangGraph's default; the checkpointer and the tools "
        "each on a pool of 4 connections"
    )
    ops = {
        "hello": lambda n: {"title": title},
        "warm": lambda n: (repeat(turn, n), repeat(write_flow, n))[0],
        "reads": reads,
        "writes": writes,
        "count_reads": lambda n: repeat(turn, n),
        "count_writes": lambda n: repeat(write_flow, n),
    }
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "quit":
            break
        answer = ops[command["op"]](int(command.get("n", 0)))
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    checkpoints.close()
    TOOLS_POOL.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--owner", required=True, help="the owner whose seeded ledger the tools read")
    args = parser.parse_args()
    # Answers go to the real stdout; anything a library prints goes to stderr instead.
    answers = sys.stdout
    sys.stdout = sys.stderr
    serve(args.database_url, args.owner, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
