"""Reads QIF files with quiffen, an independent parser, and prints one JSON line per file:
every transaction's amount and date as it reads them; or why it refused the file. The day-first
flag is given per file as the file's own dates decide it. Used by the QIF reader's corpus test."""

import json
import sys
import warnings

import quiffen

warnings.simplefilter("ignore")


def read(path, day_first):
    try:
        qif = quiffen.Qif.parse(path, day_first=day_first)
    except Exception as error:  # noqa: BLE001 - any refusal is reported, with its kind
        return {"refused": f"{type(error).__name__}: {error}"[:300]}
    rows = []
    for account in qif.accounts.values():
        for kind, transactions in account.transactions.items():
            if "invst" in str(kind).lower():
                continue
            for transaction in transactions:
                amount = getattr(transaction, "amount", None)
                if amount is None:
                    continue
                rows.append({"amount": str(amount), "date": transaction.date.date().isoformat()})
    return {"transactions": rows}


for argument in sys.argv[1:]:
    path, day_first = argument.rsplit("=", 1)
    print(json.dumps({"file": path, **read(path, day_first == "dmy")}))
