"""Ingest: files -> format readers -> staged rows -> the store's tables.

Owns input scanning, the reading thread, worker processes that parse (`parse_pool`),
record preparation (`prepare`), call/result pairing (`pairing`), staging and the
transactions that write a batch, quarantine and idempotency (`pipeline`).
May import: `tracelab.formats` and the foundation modules (`errors`, `sqlfiles`,
`frames`, `bulk_insert`, `native_keys`, `globs`,
`documents`).
"""
