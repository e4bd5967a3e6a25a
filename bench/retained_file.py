#!/usr/bin/env python3
"""Writes N acknowledged messages of one provider into a stopped npacd's SQLite file, in
the shape npacd itself leaves them since schema 9 (docs/DATABASE.md "Delivery progress"):
rows that stay as appended (state 'queued'), a kHanded and a kAcknowledged delivery
progress record per turn of TURN ids, the provider's settled mark above them all and,
since schema 12, its retention notes (one per minute of acknowledgements: the newest
acknowledgement of the minute and the highest id acknowledged by then).
Used by bench/compare.sh part "retained" (the issue "A message is written once": a queue
of 10 million acknowledged messages kept for retention costs nothing on the hot path).

  retained_file.py DB N [SPID] [--old-shape]

--old-shape writes them as an npacd before schema 9 did (state 'acknowledged' in the row),
the shape an upgraded file keeps until its retention purge removed them.

The records' ids use the encoding of db/delivery_progress.cc encodeIdList: each id as the
zigzag delta from the one before (the first from 0) in unsigned LEB128.
"""
import sqlite3
import sys
import time

TURN = 256  # ids per record: a delivery round of a busy provider


def leb128(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def id_list(first, count):
    # zigzag(first - 0) then zigzag(+1) = 2 for each following id
    return leb128(first << 1) + b"\x02" * (count - 1)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    old_shape = "--old-shape" in sys.argv
    if len(args) < 2:
        sys.exit(__doc__)
    path, n = args[0], int(args[1])
    spid = args[2] if len(args) > 2 else "0001"
    if n < 1:
        sys.exit("retained_file.py: N must be at least 1")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")
    (existing,) = db.execute("SELECT count(*) FROM outbound_queue").fetchone()
    if existing:
        sys.exit(f"retained_file.py: {path} already holds {existing} messages; expected a new file")
    now = int(time.time() * 1000)
    t0 = now - n  # one message a millisecond, the newest acknowledged now
    db.execute("BEGIN")
    db.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
        "INSERT INTO message_bodies(id, pdu, addressees) SELECT x, randomblob(300), 1 FROM c", (n,))
    if old_shape:
        db.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
            "INSERT INTO outbound_queue(id, spid, function_mask, priority, body_id, state, attempts, "
            "created_at, sent_at, acknowledged_at, association_id, kind, opcode, confirmed) "
            "SELECT x, ?, 9, 0, x, 'acknowledged', 1, ? + x, ? + x, ? + x, 1, 'push', 6, 1 FROM c",
            (n, spid, t0, t0, t0))
    else:
        db.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
            "INSERT INTO outbound_queue(id, spid, function_mask, priority, body_id, created_at, "
            "kind, opcode, confirmed) SELECT x, ?, 9, 0, x, ? + x, 'push', 6, 1 FROM c",
            (n, spid, t0))

        def records():
            for first in range(1, n + 1, TURN):
                count = min(TURN, n - first + 1)
                last = first + count - 1
                blob = id_list(first, count)
                yield (spid, 1, 1, t0 + last, first, last, blob)  # kHanded on association 1
                yield (spid, 2, None, t0 + last, first, last, blob)  # kAcknowledged

        db.executemany(
            "INSERT INTO delivery_progress(spid, event, association_id, at, first_id, last_id, ids) "
            "VALUES(?, ?, ?, ?, ?, ?, ?)", records())
        db.execute(
            "INSERT INTO delivery_settled(spid, settled_through, at) VALUES(?, ?, ?) "
            "ON CONFLICT(spid) DO UPDATE SET settled_through = excluded.settled_through, at = excluded.at",
            (spid, n, now))
        has_notes = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'delivery_marks'").fetchone()[0]
        if has_notes:
            # Ids are acknowledged in id order here, so a minute's note reaches its last id.
            notes = {}
            for first in range(1, n + 1, TURN):
                last = min(first + TURN - 1, n)
                at = t0 + last
                notes[at // 60000] = (at, last)  # the minute's newest record wins
            db.executemany(
                "INSERT INTO delivery_marks(spid, minute, at, settled_through) VALUES(?, ?, ?, ?)",
                ((spid, minute, at, last) for minute, (at, last) in notes.items()))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


if __name__ == "__main__":
    main()
