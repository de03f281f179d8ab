-- Revival candidates are searched by `query` (GET /production/revival/candidates): a substring of
-- their folded title and description. A trigram index answers such a search without reading every
-- candidate of a workspace; pg_trgm ships with PostgreSQL and is a trusted extension (PostgreSQL
-- 13 and later: the database owner may create it). The index itself is the read model's
-- (projections/revival_candidates.py).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
