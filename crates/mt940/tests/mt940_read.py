"""Reads MT940/MT942 files with the mt-940 package, an independent parser, and prints one JSON
line per file: every transaction's signed amount and currency as it reads them; or why it
refused the file. Used by the MT940 reader's corpus test to cross-read every file."""

import json
import sys
import warnings

import mt940

warnings.simplefilter("ignore")


def read(path):
    with open(path, "rb") as file:
        data = file.read()
    for encoding in ("utf-8", "cp852", "latin-1"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    try:
        transactions = mt940.models.Transactions()
        transactions.parse(text)
    except Exception as error:  # noqa: BLE001 - any refusal is reported, with its kind
        return {"refused": f"{type(error).__name__}: {error}"[:300]}
    rows = []
    for transaction in transactions:
        amount = transaction.data.get("amount")
        if amount is None:
            continue
        rows.append({"amount": str(amount.amount), "currency": amount.currency})
    return {"transactions": rows}


for path in sys.argv[1:]:
    print(json.dumps({"file": path, **read(path)}))
