"""Sessions in SQLite: the transcript and everything the report is built from.

Every row is committed as soon as it exists (WAL mode), so a crash loses at most the reply in
flight. The message history is the transcript: resuming a session replays it to the model.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tools.io import files
from tools.text.secrets import redact, redacted

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, created REAL NOT NULL, updated REAL NOT NULL,
    surface TEXT NOT NULL, title TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id), seq INTEGER NOT NULL,
    message TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (session_id, seq));
CREATE TABLE IF NOT EXISTS tool_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    name TEXT NOT NULL, arguments TEXT NOT NULL, ok INTEGER NOT NULL,
    result TEXT, error TEXT, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    kind TEXT NOT NULL, prompt TEXT NOT NULL, options TEXT NOT NULL, answer TEXT, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS state (
    session_id TEXT NOT NULL REFERENCES sessions(id), key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (session_id, key));
CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    model TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, at REAL NOT NULL);
"""


class SessionNotFound(LookupError):
    pass


class Store:
    """One SQLite database under rlpilot's home, shared by every session and surface."""

    def __init__(self, home: Path):
        files.make_dirs(home, private=True)
        self.path = home / "sessions.sqlite3"
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        files.private_file(self.path)
        # NORMAL under WAL survives a crash of rlpilot (only power loss can drop the last commits),
        # and spares an fsync on every row.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        self._writing = threading.RLock()  # one transaction at a time on this connection

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, the database locked from its first read: another process's
        append cannot come between reading the next `seq` and inserting it. (In autocommit mode
        `with db:` opens no transaction at all.)"""
        with self._writing:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def create(self, surface: str, title: str = "") -> Session:
        session_id = uuid.uuid4().hex[:12]
        now = time.time()
        self.db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", (session_id, now, now, surface, redact(title)))
        return Session(self, session_id)

    def open(self, session_id: str) -> Session:
        if not self.db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
            raise SessionNotFound(session_id)
        return Session(self, session_id)

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT s.id, s.created, s.updated, s.surface, s.title, "
            "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id), "
            # an offline session (slash commands only) has tool calls but no messages
            "(SELECT COUNT(*) FROM tool_calls t WHERE t.session_id = s.id) "
            "FROM sessions s ORDER BY s.updated DESC LIMIT ?", (limit,)).fetchall()
        keys = ("id", "created", "updated", "surface", "title", "messages", "tool_calls")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def close(self) -> None:
        self.db.close()


def with_content(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sessions a person said or ran something in: a title comes with the first message or command."""
    return [s for s in sessions if s["title"] or s["tool_calls"]]


class Session:
    def __init__(self, store: Store, session_id: str):
        self.store = store
        self.id = session_id

    @property
    def _db(self) -> sqlite3.Connection:
        return self.store.db

    def _touch(self) -> None:
        self._db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time(), self.id))

    # The transcript -----------------------------------------------------------------------

    def add_message(self, message: dict[str, Any]) -> None:
        if isinstance(message.get("content"), str):
            message = {**message, "content": redact(message["content"])}
        with self.store.transaction():
            seq = self._db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?",
                                   (self.id,)).fetchone()[0]
            self._db.execute("INSERT INTO messages VALUES (?, ?, ?, ?)",
                             (self.id, seq, json.dumps(message), time.time()))
            if message.get("role") == "user" and seq <= 1:
                self.title_once(str(message.get("content", "")))
            self._touch()

    def title_once(self, title: str) -> None:
        """Name the session by its first words (a message, or a command a person typed), unless it has a name."""
        self._db.execute("UPDATE sessions SET title = ? WHERE id = ? AND title = ''", (redact(title)[:80], self.id))

    def messages(self) -> list[dict[str, Any]]:
        """The transcript, repaired so it can be replayed after a crash mid-turn.

        A process killed between a tool call and its result leaves calls without answers; the
        API refuses such a history, so each gets a result saying it was interrupted.
        """
        rows = self._db.execute("SELECT message FROM messages WHERE session_id = ? ORDER BY seq",
                                (self.id,)).fetchall()
        history: list[dict[str, Any]] = []
        pending: list[str] = []
        for (raw,) in rows:
            message = json.loads(raw)
            if message.get("role") != "tool" and pending:
                history += [_interrupted(call_id) for call_id in pending]
                pending = []
            if message.get("role") == "tool" and message.get("tool_call_id") in pending:
                pending.remove(message["tool_call_id"])
            history.append(message)
            if message.get("role") == "assistant":
                pending = [call["id"] for call in message.get("tool_calls") or []]
        history += [_interrupted(call_id) for call_id in pending]
        return history

    # Records the report is built from -----------------------------------------------------

    def record_tool_call(self, name: str, arguments: dict[str, Any], ok: bool,
                         result: dict[str, Any] | None = None, error: dict[str, Any] | None = None) -> None:
        with self.store.transaction():
            self._db.execute(
                "INSERT INTO tool_calls (session_id, name, arguments, ok, result, error, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self.id, name, json.dumps(redacted(arguments)), int(ok),
                 json.dumps(redacted(result)) if result is not None else None,
                 json.dumps(redacted(error)) if error is not None else None, time.time()))
            self._touch()

    def tool_calls(self, name: str | None = None, ok_only: bool = True) -> list[dict[str, Any]]:
        query = "SELECT name, arguments, ok, result, error FROM tool_calls WHERE session_id = ?"
        params: list[Any] = [self.id]
        if name:
            query += " AND name = ?"
            params.append(name)
        if ok_only:
            query += " AND ok = 1"
        rows = self._db.execute(query + " ORDER BY id", params).fetchall()
        return [
            {"name": n, "arguments": json.loads(a), "ok": bool(ok),
             "result": json.loads(r) if r else None, "error": json.loads(e) if e else None}
            for n, a, ok, r, e in rows
        ]

    def record_question(self, kind: str, prompt: str, options: list[str], answer: str | None) -> None:
        with self.store.transaction():
            self._db.execute(
                "INSERT INTO questions (session_id, kind, prompt, options, answer, at) VALUES (?, ?, ?, ?, ?, ?)",
                (self.id, kind, redact(prompt), json.dumps(options), answer, time.time()))

    def questions(self) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT kind, prompt, options, answer FROM questions WHERE session_id = ? "
                                "ORDER BY id", (self.id,)).fetchall()
        return [{"kind": k, "prompt": p, "options": json.loads(o), "answer": a} for k, p, o, a in rows]

    def get(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM state WHERE session_id = ? AND key = ?",
                               (self.id, key)).fetchone()
        return json.loads(row[0]) if row else default

    def put(self, key: str, value: Any) -> None:
        with self.store.transaction():
            self._db.execute("INSERT OR REPLACE INTO state VALUES (?, ?, ?)", (self.id, key, json.dumps(value)))

    def record_usage(self, model: str, prompt_tokens: int | None, completion_tokens: int | None) -> None:
        with self.store.transaction():
            self._db.execute(
                "INSERT INTO usage (session_id, model, prompt_tokens, completion_tokens, at) VALUES (?, ?, ?, ?, ?)",
                (self.id, model, prompt_tokens, completion_tokens, time.time()))

    def usage(self) -> dict[str, int]:
        prompt, completion = self._db.execute(
            "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM usage "
            "WHERE session_id = ?", (self.id,)).fetchone()
        return {"prompt_tokens": prompt, "completion_tokens": completion}


def _interrupted(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id,
            "content": json.dumps({"ok": False, "error": {"code": "interrupted",
                                                          "message": "rlpilot stopped before this tool finished"}})}
