"""The web layer: the application factory, ops endpoints, logging, and the HTTP API (one
module per resource in `api/`, schemas, problem documents, body reading and the batch form).
It validates, calls the domain core or the advisor, and serialises; no rule lives here."""
