-- Sandbox work is free, so a day's count of jobs is not enough to bound it: the same row also
-- sums the milliseconds of clips its sandbox jobs cut or render and of media their analyses
-- decode, each refused past its own quota by a CHECK in the append's transaction (as the count).
ALTER TABLE sandbox_job_quota
    ADD COLUMN IF NOT EXISTS clip_ms          bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS clip_ms_quota    bigint NOT NULL DEFAULT 9223372036854775807,
    ADD COLUMN IF NOT EXISTS decoded_ms       bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS decoded_ms_quota bigint NOT NULL DEFAULT 9223372036854775807;
ALTER TABLE sandbox_job_quota
    ADD CONSTRAINT sandbox_clip_ms_within CHECK (clip_ms <= clip_ms_quota),
    ADD CONSTRAINT sandbox_decoded_ms_within CHECK (decoded_ms <= decoded_ms_quota);
