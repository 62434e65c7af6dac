-- Every character DuckDB's lower() changes, with what it becomes: (upper, lowered). lower() maps
-- one character to one character, so "lower(text) contains s" holds exactly when, at some
-- position, each character of text lowers to the corresponding one of s: a pattern over the
-- text before lowering (tracelab.engine.needles.prefilter_re2 with these pairs) finds the same
-- texts without lower-casing any. Surrogates (D800-DFFF) are not characters. Only the first two
-- planes are asked (below U+20000): every script with case lies there (DuckDB 2.0.1's last such
-- character is U+1E921, Adlam); the planes above hold ideographs, tags and private use, and asking
-- them too took 0.06 s of every check (tests/suite/test_needles_as_stored.py asks all of them).
SELECT c AS upper, lower(c) AS lowered
FROM (SELECT chr(i::INTEGER) AS c
      FROM (SELECT range AS i FROM range(1, 55296)
            UNION ALL
            SELECT range FROM range(57344, 131072)))
WHERE lower(c) <> c
ORDER BY c
