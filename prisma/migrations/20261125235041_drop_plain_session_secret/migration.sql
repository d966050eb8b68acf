-- The session-signing key used to be stored here in plain text: anyone with a database dump could
-- sign a session for any user. Sessions are now signed with a key derived from
-- MILLRACE_SECRET_KEY and `session_secret_salt`: the old key is dropped, so sessions signed with
-- it are refused (everyone signs in again once).
DELETE FROM "instance_setting" WHERE "key" = 'session_secret';
