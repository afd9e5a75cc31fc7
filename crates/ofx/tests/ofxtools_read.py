"""Reads OFX files with ofxtools, an independent parser, and prints one JSON line per file: each
statement's currency, account id, transactions (FITID, amount as written by Decimal, the
DTPOSTED calendar date in the offset the file wrote) and ledger balance; or why ofxtools refused
the file. Used by the OFX reader's corpus test to cross-read every file."""

import json
import os
import re
import sys
import tempfile

from ofxtools.Parser import OFXTree


def date_as_written(raw_by_fitid, fitid, converted):
    # ofxtools converts DTPOSTED to UTC; the calendar day as the bank wrote it is its first eight
    # digits, which the raw element keeps.
    raw = raw_by_fitid.get(fitid)
    if raw:
        return f"{raw[0:4]}-{raw[4:6]}-{raw[6:8]}"
    return converted.date().isoformat()


def mended(path):
    """The file with the non-spec bytes ofxtools cannot pass mended (said in `mends`): NUL bytes
    after the document, and the charset `8859-1` spelled as the spec spells it."""
    with open(path, "rb") as file:
        data = file.read()
    mends = []
    if data.rstrip(b"\r\n").endswith(b"\x00"):
        data = data.replace(b"\x00", b"")
        mends.append("NUL bytes after </OFX> removed")
    if b"CHARSET:8859-1" in data:
        data = data.replace(b"CHARSET:8859-1", b"CHARSET:ISO-8859-1")
        mends.append("CHARSET:8859-1 written ISO-8859-1")
    kinds = (b"CHECKING", b"SAVINGS", b"MONEYMRKT", b"CREDITLINE", b"CD")
    for found in set(re.findall(rb"<ACCTTYPE>([A-Z]*)", data)):
        if found not in kinds:
            data = data.replace(b"<ACCTTYPE>" + found, b"<ACCTTYPE>CHECKING")
            mends.append(f"ACCTTYPE {found.decode()} (not one of the spec's) written CHECKING")
    return data, mends


def read(path):
    parser = OFXTree()
    data, mends = mended(path)
    handle, mended_path = tempfile.mkstemp(suffix=".ofx")
    with os.fdopen(handle, "wb") as file:
        file.write(data)
    try:
        parser.parse(mended_path)
        raw = {}
        for trn in parser.getroot().iter("STMTTRN"):
            fitid = trn.findtext("FITID")
            posted = trn.findtext("DTPOSTED")
            if fitid is not None and posted:
                raw[fitid] = posted.strip()
        ofx = parser.convert()
    except Exception as error:  # noqa: BLE001 - any refusal is reported, with its kind
        return {"refused": f"{type(error).__name__}: {error}"[:300], "mends": mends}
    finally:
        os.unlink(mended_path)
    statements = []
    for stmt in ofx.statements:
        transactions = []
        tranlist = getattr(stmt, "banktranlist", None) or getattr(stmt, "invtranlist", None) or []
        for trn in tranlist:
            inner = getattr(trn, "stmttrn", None) or trn
            if not hasattr(inner, "trnamt"):
                continue
            transactions.append(
                {
                    "fitid": inner.fitid,
                    "amount": str(inner.trnamt),
                    "date": date_as_written(raw, inner.fitid, inner.dtposted),
                }
            )
        ledger = getattr(stmt, "ledgerbal", None)
        statements.append(
            {
                "currency": stmt.curdef,
                "account": stmt.account.acctid,
                "transactions": transactions,
                "ledger": str(ledger.balamt) if ledger is not None and ledger.balamt is not None else None,
            }
        )
    return {"statements": statements, "mends": mends}


warnings_off = __import__("warnings")
warnings_off.simplefilter("ignore")
for path in sys.argv[1:]:
    print(json.dumps({"file": path, **read(path)}))
