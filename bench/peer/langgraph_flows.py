"""The peer of kakeibo's turn benchmark: the same two flows in LangGraph with PostgresSaver.

1. A read-only turn: a zero-latency model asks for three read tools in one batch, the tools run
   (the same kinds of reads kakeibo's tools make, on the same seeded ledger, each in a
   transaction scoped to the owner as kakeibo's are), and the model answers.
2. A write turn: the model asks for `set_budget`; the graph stops at `interrupt()`; a freshly
   built graph over a fresh checkpointer resumes it with `Command(resume=True)`, as another
   process would; the write runs and the model answers.

Timed like kakeibo's side: each turn beside its three tool calls made directly, so the overhead
is the turn minus its tools. Counted like kakeibo's side, by the server: transaction ids
consumed, commits (`pg_stat_database`) and statements (`pg_stat_statements`) per flow.

kakeibo's turn benchmark runs this script on its own scratch database and reads the part it
writes (`--out`); by hand:

    python bench/peer/langgraph_flows.py --database-url postgres://… --owner UUID --out peer.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import uuid

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt
import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

STATS_SETTLE = 11.0  # a backend reports its commits once idle for ten seconds

OWNER = ""
TOOLS_POOL: ConnectionPool | None = None


def scoped(sql: str, params: tuple) -> list:
    """One read or write in a transaction scoped to the owner, as kakeibo's tools run."""
    assert TOOLS_POOL is not None
    with TOOLS_POOL.connection() as conn, conn.transaction():
        conn.execute("SELECT app_set_owner(%s)", (OWNER,))
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else []


@tool
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
def list_accounts() -> str:
    """The owner's accounts."""
    rows = scoped("SELECT name, type, currency FROM accounts WHERE owner_id = %s ORDER BY type, name", (OWNER,))
    return json.dumps(rows, default=str)


@tool
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


def percentile(sorted_ms: list[float], p: float) -> float:
    rank = math.ceil(p / 100.0 * len(sorted_ms))
    return sorted_ms[min(max(rank - 1, 0), len(sorted_ms) - 1)]


class Probe:
    """The server's counters around N flows, read as kakeibo's benchmark reads them."""

    def __init__(self, pool: ConnectionPool):
        self.pool = pool
        try:
            with pool.connection() as conn:
                conn.execute("SELECT 1 FROM pg_stat_statements LIMIT 1")
            self.counted = True
        except psycopg.Error:
            self.counted = False  # not installed here, or not preloaded by the server
        self.commits, self.statements = self.reading()
        self.xid, self.wal = self.xid_and_wal()

    def reading(self):
        time.sleep(STATS_SETTLE)
        with self.pool.connection() as conn:
            if self.counted:
                row = conn.execute(
                    """SELECT xact_commit, s.all_calls, s.top_calls, s.ms
                       FROM pg_stat_database d,
                            LATERAL (SELECT sum(calls)::bigint AS all_calls,
                                            (sum(calls) FILTER (WHERE toplevel))::bigint AS top_calls,
                                            sum(total_exec_time) FILTER (WHERE toplevel) AS ms
                                     FROM pg_stat_statements WHERE dbid = d.datid) s
                       WHERE datname = current_database()"""
                ).fetchone()
                return row["xact_commit"], (row["all_calls"], row["top_calls"], row["ms"])
            row = conn.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            return row["xact_commit"], None

    def xid_and_wal(self):
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT pg_current_xact_id()::text::bigint AS x, pg_current_wal_lsn()::text AS wal"
            ).fetchone()
            return int(row["x"]), row["wal"]

    def per_flow(self, flows: int) -> dict:
        xid_after, wal_after = self.xid_and_wal()
        with self.pool.connection() as conn:
            wal = conn.execute(
                "SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)::float8 AS d", (wal_after, self.wal)
            ).fetchone()["d"]
        commits, statements = self.reading()
        # The probes themselves, counted as kakeibo's benchmark counts its own.
        return {
            "writing": (xid_after - self.xid - 1) / flows,
            "commits": (commits - self.commits - 4) / flows,
            "statements": None if statements is None else (statements[0] - self.statements[0] - 4) / flows,
            "sent": None if statements is None else (statements[1] - self.statements[1] - 4) / flows,
            "server_ms": None if statements is None else (statements[2] - self.statements[2]) / flows,
            "wal_bytes": wal / flows,
        }


def figure(name, value, unit, **extra) -> dict:
    return {"name": name, "value": value, "unit": unit, **extra}


def main() -> int:
    global OWNER, TOOLS_POOL
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--owner", required=True, help="the owner whose seeded ledger the tools read")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--counted", type=int, default=100, help="flows counted by the server")
    parser.add_argument("--warm-up", type=int, default=50, help="flows of each kind run before timing")
    parser.add_argument("--out", required=True, help="where to write the part (JSON)")
    args = parser.parse_args()
    OWNER = args.owner

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    # Four connections for each side: the checkpointer's and the tools', as kakeibo's pool of four.
    checkpoints = ConnectionPool(args.database_url, min_size=4, max_size=4, kwargs=kwargs, open=True)
    TOOLS_POOL = ConnectionPool(args.database_url, min_size=4, max_size=4, kwargs=kwargs, open=True)
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

    # Warm both flows, then gather statistics of the tables they wrote, as kakeibo's side does.
    for _ in range(args.warm_up):
        turn()
        write_flow()
    with checkpoints.connection() as conn:
        conn.execute("ANALYZE")

    def paired(count, alone, flow):
        """(flow times, overheads), each sorted: `flow` timed beside `alone`, its baseline, in turn."""
        alone_ms, flow_ms = [], []
        for _ in range(count):
            started = time.perf_counter()
            alone()
            alone_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            flow()
            flow_ms.append((time.perf_counter() - started) * 1000)
        overheads = sorted(f - a for f, a in zip(flow_ms, alone_ms))
        return sorted(flow_ms), sorted(alone_ms), overheads

    def reads_alone():
        for name, tool_args in READS:
            BY_NAME[name].invoke(tool_args)

    def write_alone():
        BY_NAME["set_budget"].invoke({"category": "Groceries", "month": "2025-04", "amount_minor": 500000})

    turn_ms, tools_ms, overhead = paired(args.turns, reads_alone, turn)
    write_ms, _, write_overhead = paired(args.writes, write_alone, write_flow)

    probe = Probe(checkpoints)
    for _ in range(args.counted):
        turn()
    read_counts = probe.per_flow(args.counted)
    probe = Probe(checkpoints)
    for _ in range(args.counted):
        write_flow()
    write_counts = probe.per_flow(args.counted)

    import langgraph.version as lg_version  # noqa: PLC0415 (only for the report)

    figures = [
        figure("read turn overhead p50", percentile(overhead, 50), "ms"),
        figure("read turn overhead p99", percentile(overhead, 99), "ms"),
        figure("read turn p50", percentile(turn_ms, 50), "ms"),
        figure("read tools alone p50", percentile(tools_ms, 50), "ms"),
        figure("write flow p50", percentile(write_ms, 50), "ms"),
        figure("write flow p99", percentile(write_ms, 99), "ms"),
        figure("write flow overhead p50", percentile(write_overhead, 50), "ms"),
        figure("read turn writing transactions", read_counts["writing"], "per turn"),
        figure("read turn commits", read_counts["commits"], "per turn"),
        figure("write flow writing transactions", write_counts["writing"], "per flow"),
        figure("write flow commits", write_counts["commits"], "per flow"),
        figure("read turn WAL", read_counts["wal_bytes"], "bytes per turn"),
        figure("write flow WAL", write_counts["wal_bytes"], "bytes per flow"),
    ]
    if read_counts["statements"] is not None:
        figures.append(figure("read turn statements", read_counts["statements"], "per turn"))
        figures.append(figure("write flow statements", write_counts["statements"], "per flow"))
        figures.append(figure("read turn statements sent", read_counts["sent"], "per turn"))
        figures.append(figure("write flow statements sent", write_counts["sent"], "per flow"))
        figures.append(figure("read turn server time", read_counts["server_ms"], "ms per turn"))
        figures.append(figure("write flow server time", write_counts["server_ms"], "ms per flow"))
    part = {
        "bench": "langgraph",
        "title": f"LangGraph {lg_version.__version__} with PostgresSaver (Python {sys.version.split()[0]}), same server, same ledger",
        "command": "python bench/peer/langgraph_flows.py (run by the turn benchmark)",
        "figures": figures,
        "notes": [
            f"{args.turns} read turns and {args.writes} write flows; counts over {args.counted} flows each",
            "durability: LangGraph's default; the checkpointer and the tools each on a pool of 4 connections",
        ],
    }
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(part, out, indent=2)
    for f in figures:
        print(f"  {f['name']:<36} {f['value']:>10.2f} {f['unit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
