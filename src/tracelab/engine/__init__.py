"""The check engine: a loaded suite compiled to SQL and evaluated over every stored run.

Owns compilation (`compile`), evaluation (`evaluate`), needle pre-filters (`needles`),
`args_valid`'s schema checks, failure location (`locate`) and the verdict frame
(`verdicts`). May import: `tracelab.suite`, `tracelab.store` and the foundation modules.
"""
