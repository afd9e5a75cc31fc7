"""Reads camt files with Python's own XML parser and a few lines of path matching — an
independent reading for the camt reader's corpus test. Prints one JSON line per file: each
statement's account, currency, booked entries (signed amount as written, the booking date's
calendar day, AcctSvcrRef), pending count and closing booked balance; or why the file did not
parse."""

import json
import sys
import xml.etree.ElementTree as ET


def local(tag):
    return tag.rsplit("}", 1)[-1]


def child(element, *path):
    for name in path:
        if element is None:
            return None
        element = next((c for c in element if local(c.tag) == name), None)
    return element


def text(element, *path):
    found = child(element, *path)
    return (found.text or "").strip() if found is not None else ""


def signed(amount, indicator):
    return amount if indicator == "CRDT" else "-" + amount


def statement(element):
    account = text(element, "Acct", "Id", "IBAN") or text(element, "Acct", "Id", "Othr", "Id")
    booked, pending = [], 0
    for entry in (c for c in element if local(c.tag) == "Ntry"):
        status = text(entry, "Sts") or text(entry, "Sts", "Cd")
        if status != "BOOK":
            pending += status == "PDNG"
            continue
        date = text(entry, "BookgDt", "Dt") or text(entry, "BookgDt", "DtTm")
        booked.append(
            {
                "amount": signed(text(entry, "Amt"), text(entry, "CdtDbtInd")),
                "currency": child(entry, "Amt").get("Ccy"),
                "date": date[:10],
                "ref": text(entry, "AcctSvcrRef"),
            }
        )
    closing = None
    for balance in (c for c in element if local(c.tag) == "Bal"):
        if text(balance, "Tp", "CdOrPrtry", "Cd") == "CLBD":
            closing = {
                "amount": signed(text(balance, "Amt"), text(balance, "CdtDbtInd")),
                "currency": child(balance, "Amt").get("Ccy"),
            }
    return {
        "account": account,
        "currency": text(element, "Acct", "Ccy"),
        "booked": booked,
        "pending": pending,
        "closing": closing,
    }


for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        print(json.dumps({"file": path, "refused": str(error)}))
        continue
    message = next(iter(root))
    statements = [statement(c) for c in message if local(c.tag) in ("Stmt", "Rpt", "Ntfctn")]
    print(json.dumps({"file": path, "statements": statements}))
