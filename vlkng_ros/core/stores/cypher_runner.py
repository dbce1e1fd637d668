"""Cypher runners: what executes the Neo4j store's statements.

The Neo4j graph store never talks to a driver directly; it hands (query, params) to a runner and
gets rows back as dicts. ``Neo4jDriverRunner`` is the production one (official ``neo4j`` driver,
managed transactions); ``falkordb_runner.FalkorDBRunner`` runs the same statements on FalkorDB's
Cypher engine so the contract suite exercises the real store logic without a Neo4j server.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any, Callable, Protocol, TypeVar

from .base import StoreError

log = logging.getLogger("vlkng.stores.cypher")

T = TypeVar("T")
Rows = list[dict[str, Any]]


class CypherTx(Protocol):
    def run(self, query: str, params: dict[str, Any]) -> Rows: ...


class CypherRunner(ABC):
    """Executes parameterised Cypher. ``dialect`` picks the schema statements ("neo4j"/"falkordb")."""

    dialect: str = "neo4j"
    target: str = ""  # where it runs, for messages (URI without credentials)

    @abstractmethod
    def read(self, query: str, params: dict[str, Any]) -> Rows:
        """One read-only statement."""

    @abstractmethod
    def write(self, work: Callable[[CypherTx], T]) -> T:
        """Run ``work`` in one write transaction (committed when it returns, rolled back when it
        raises). ``work`` may be called again on transient errors, so it must not keep state."""

    @abstractmethod
    def schema(self, statements: list[str]) -> None:
        """Create constraints/indexes (each in its own transaction; existing ones are fine)."""

    @abstractmethod
    def close(self) -> None: ...


class Neo4jDriverRunner(CypherRunner):
    """The official neo4j driver (5.x/6.x API), managed transactions, one database."""

    dialect = "neo4j"

    def __init__(self, uri: str, user: str, password: str, database: str = "neo4j",
                 connect_timeout_s: float = 10.0) -> None:
        import neo4j
        from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

        from ._common import redact

        self.target = f"{redact(uri)} (database {database!r}, user {user!r})"
        self._database = database
        try:
            self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password),
                                                      connection_timeout=connect_timeout_s)
            self._driver.verify_connectivity()
        except AuthError:
            raise StoreError(f"Neo4j at {self.target} rejected the credentials") from None
        except (ServiceUnavailable, Neo4jError, OSError, ValueError) as e:
            # not chained: the driver's own message may repeat the URI with its password
            raise StoreError(f"cannot reach Neo4j at {self.target}: {type(e).__name__}: "
                             f"{redact(str(e))}") from None

    def _session(self) -> Any:
        return self._driver.session(database=self._database)

    def read(self, query: str, params: dict[str, Any]) -> Rows:
        def work(tx: Any) -> Rows:
            return [record.data() for record in tx.run(query, params)]

        with self._session() as session:
            return self._wrap(lambda: session.execute_read(work))

    def write(self, work: Callable[[CypherTx], T]) -> T:
        with self._session() as session:
            return self._wrap(lambda: session.execute_write(lambda tx: work(_Neo4jTx(tx))))

    def schema(self, statements: list[str]) -> None:
        with self._session() as session:
            for statement in statements:
                self._wrap(lambda s=statement: session.run(s).consume())

    def _wrap(self, fn: Callable[[], T]) -> T:
        from neo4j.exceptions import ServiceUnavailable, SessionExpired

        try:
            return fn()
        except (ServiceUnavailable, SessionExpired) as e:
            raise StoreError(f"lost Neo4j at {self.target}: {e}") from e

    def close(self) -> None:
        self._driver.close()


class _Neo4jTx:
    def __init__(self, tx: Any) -> None:
        self._tx = tx

    def run(self, query: str, params: dict[str, Any]) -> Rows:
        return [record.data() for record in self._tx.run(query, params)]
