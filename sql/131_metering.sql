-- Usage metering (lib/metering, core/meter.h): the API requests a client's
-- credentials made, per environment, UTC day and metric
-- ("api_requests.<family>"). The workers count in memory and add their
-- counts here in batches (one UPSERT per counter, every
-- metering.flush_interval seconds and when a worker stops); the metering
-- routes read it. The metrics computed from other modules' rows
-- (active_links, bills_retrieved, ...) are never stored here.
CREATE TABLE usage_counters (
    client_id   text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    environment text        NOT NULL
                            CHECK (environment IN ('sandbox', 'development', 'production')),
    day         date        NOT NULL,
    metric      text        NOT NULL CHECK (metric ~ '^api_requests\.[a-z0-9_-]{1,32}$'),
    value       bigint      NOT NULL CHECK (value >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, environment, day, metric)
);
