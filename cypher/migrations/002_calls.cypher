// Calls are listed per session in time order.
CREATE INDEX call_session_started IF NOT EXISTS FOR (c:Call) ON (c.session_id, c.started_at);
