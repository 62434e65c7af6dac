-- The verdict rows (docs/suites.md §5) other than plain passes: one per (case, assertion, run) that
-- failed, was not exercised (`no` / `unknown`) or has a reason. Every other (case, assertion, run)
-- of a selected run is a plain pass (passed, exercised `yes`, no reason, no step): the family queries
-- leave those out of chk_out (tracelab.engine.evaluate), and the check's rows are these plus the
-- selection (chk_sel) times the case's assertions (CheckResult.verdicts; check_results in a store).
-- Units without a parent are results as they are; the rules of a sequence_valid entry combine into
-- the entry's result: passed when every rule passed; exercised `yes` on a failure, `no` when every
-- rule is `no`, `unknown` when no rule is `yes` and some is `unknown`, else `yes`; the reason joins
-- the failing (or, for no/unknown, the deciding) rules' reasons, and a failure is located at the
-- earliest step of its failed rules. A rule without a row for a run passed it with `yes`, so an
-- entry is `no` only when each of its $n rules has a `no` row. step_idx is NULL on every pass. Rows
-- come in no order: tracelab.engine.evaluate names each unit's case and assertion and sorts them
-- by unit, then run (a join of a few hundred units and a sort cost less there than here).
WITH rule_counts AS (
    SELECT parent_id AS unit_id, count(*) AS n_rules
    FROM p_units WHERE parent_id IS NOT NULL
    GROUP BY ALL
),
rules AS (
    SELECT u.parent_id AS unit_id, o.episode_id,
           bool_and(o.passed) AS passed,
           count(*) FILTER (WHERE o.exercised = 'no') AS n_no,
           bool_or(o.exercised = 'yes') OR count(*) < any_value(n.n_rules) AS any_yes,
           any_value(n.n_rules) AS n_rules,
           string_agg(u.label || ': ' || o.reason, '; ' ORDER BY u.unit_id)
               FILTER (WHERE NOT o.passed) AS failed_reason,
           string_agg(u.label || ': ' || o.reason, '; ' ORDER BY u.unit_id)
               FILTER (WHERE o.exercised = 'no') AS no_reason,
           string_agg(u.label || ': ' || o.reason, '; ' ORDER BY u.unit_id)
               FILTER (WHERE o.exercised = 'unknown') AS unknown_reason,
           min(o.step_idx) FILTER (WHERE NOT o.passed) AS failed_step
    FROM chk_out o
    JOIN p_units u ON u.unit_id = o.unit_id
    JOIN rule_counts n ON n.unit_id = u.parent_id
    GROUP BY ALL
),
results AS (
    SELECT o.unit_id, o.episode_id, o.passed, o.exercised, o.reason,
           CASE WHEN NOT o.passed THEN o.step_idx END AS step_idx
    FROM chk_out o JOIN p_units u ON u.unit_id = o.unit_id
    WHERE u.parent_id IS NULL
    UNION ALL
    SELECT unit_id, episode_id, passed,
           CASE WHEN NOT passed THEN 'yes' WHEN n_no = n_rules THEN 'no'
                WHEN NOT any_yes THEN 'unknown' ELSE 'yes' END,
           CASE WHEN NOT passed THEN failed_reason WHEN n_no = n_rules THEN no_reason
                WHEN NOT any_yes THEN unknown_reason END,
           failed_step
    FROM rules
    UNION ALL
    -- an entry without rules (lint: ineffective) holds vacuously and cannot fail
    SELECT u.unit_id, s.episode_id, true, 'no', 'it has no rules', NULL
    FROM p_units u JOIN chk_sel s ON s.case_id = u.case_id
    WHERE u.assertion_type = 'sequence_valid' AND u.parent_id IS NULL
      AND NOT EXISTS (SELECT 1 FROM p_units r WHERE r.parent_id = u.unit_id)
)
SELECT unit_id, episode_id, passed, exercised, reason, step_idx
FROM results
WHERE NOT is_plain_pass(passed, exercised, reason)
