-- expect.must_mention[i]: the string occurs in the transcript (chk_needle_found, built by
-- _needle_found.sql). Always exercised.
SELECT n.unit_id, s.episode_id,
       f.episode_id IS NOT NULL AS passed,
       'yes' AS exercised,
       CASE WHEN f.episode_id IS NULL THEN 'does not mention ' || to_json(n.needle)::VARCHAR END
           AS reason
FROM p_must_mention n
JOIN chk_sel s ON s.case_id = n.case_id
LEFT JOIN chk_needle_found f ON f.unit_id = n.unit_id AND f.episode_id = s.episode_id
