"""The API keys read model: GET /keys. Never the key, nor its digest: name, prefix, scopes, state.

Authentication does not read this table (it would wait for Kafka): it reads the write-side
digest index and the key's own stream.
"""

from __future__ import annotations

from datetime import datetime

from projections.base import Projection, Statement

projection = Projection(
    name="api_keys",
    ddl=[
        """CREATE TABLE IF NOT EXISTS api_keys (
            id           uuid PRIMARY KEY,
            workspace_id uuid NOT NULL,
            name         text NOT NULL,
            key_prefix   text NOT NULL,
            scopes       text[] NOT NULL,
            environment  text NOT NULL,
            expires_at   timestamptz,
            issued_by    uuid,
            created_at   timestamptz NOT NULL,
            revoked_at   timestamptz,
            version      integer NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS api_keys_by_workspace ON api_keys (workspace_id, created_at, id)",
    ],
    tables=["api_keys"],
)


@projection.handles("ApiKeyIssued")
def _issued(ev) -> list[Statement]:
    d = ev.data
    expires = datetime.fromisoformat(d["expires_at"]) if d.get("expires_at") else None
    return [("""INSERT INTO api_keys (id, workspace_id, name, key_prefix, scopes, environment, expires_at, issued_by,
                                      created_at, version)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING""",
             (ev.stream_id, d["workspace_id"], d["name"], d["key_prefix"], list(d["scopes"]), d["environment"], expires,
              d.get("issued_by"), ev.recorded_at, ev.version))]


@projection.handles("ApiKeyRevoked")
def _revoked(ev) -> list[Statement]:
    return [("UPDATE api_keys SET revoked_at = $3, version = $2 WHERE id = $1 AND version < $2",
             (ev.stream_id, ev.version, ev.recorded_at))]
