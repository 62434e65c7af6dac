-- Every character DuckDB's lower() changes, with what it becomes: (upper, lowered). lower() maps
-- one character to one character, so "lower(text) contains s" holds exactly when, at some
-- position, each character of text lowers to the corresponding one of s: a pattern over the
-- text before lowering (tracelab.engine.needles.prefilter_re2 with these pairs) finds the same
-- texts without lower-casing any. Surrogates (D800-DFFF) are not characters.
SELECT c AS upper, lower(c) AS lowered
FROM (SELECT chr(i::INTEGER) AS c
      FROM (SELECT range AS i FROM range(1, 55296)
            UNION ALL
            SELECT range FROM range(57344, 1114112)))
WHERE lower(c) <> c
ORDER BY c
